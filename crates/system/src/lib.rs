//! Systems assembled from topologies: the presets of the seed machines and the machinery that
//! puts them together. This release has the TPU v4 pod ([`tpu_v4`]): 64 blocks of 4x4x4 chips
//! joined by 48 optical circuit switches into slices.
//!
//! Architecture invariant: a system owns state that changes over a machine's life (which blocks
//! are allocated or failed, how switches are programmed); the topologies it hands out are plain
//! graphs from `podsim-topology`.

pub mod machine;
pub mod tpu_v4;
pub mod workload;

pub use machine::{Models, measure, microbench, new_model};

#[cfg(test)]
mod tests;
