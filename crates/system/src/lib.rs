//! Systems assembled from topologies: the presets of the seed machines and the machinery that
//! puts them together. This release has the TPU v4 pod ([`tpu_v4`]): 64 blocks of 4x4x4 chips
//! joined by 48 optical circuit switches into slices. The machines modelled beyond their
//! presets are crates of their own above this one, under `crates/machines/` (`podsim-tpu`,
//! `podsim-tofu`, `podsim-tenstorrent`, `podsim-dojo`), and so are the validation cases
//! (`podsim-validation`).
//! A task only one machine has plugs into the workload executor through
//! [`workload::MachineTask`], which the machine's crate implements.
//!
//! Architecture invariant: a system owns state that changes over a machine's life (which blocks
//! are allocated or failed, how switches are programmed); the topologies it hands out are plain
//! graphs from `podsim-topology`.

pub mod cluster;
pub mod energy;
pub mod machine;
pub mod presets;
pub mod scenario;
pub mod spec;
pub mod tpu_v4;
pub mod workload;

pub use machine::{
    MachineError, Models, Timing, dojo_flow_model, flow_model, measure, measure_with, microbench,
    new_model, new_model_at,
};
pub use scenario::{RUN_KINDS, RunSpec, Scenario};
pub use spec::{Shape, SystemSpec, TofuSpec, TopoSpec};

/// The closed choices of the floors below, as the layers above name them (`podsim-config`
/// parses text into these without depending on the model crates).
pub mod choices {
    pub use podsim_collective::{Algorithm, Kind, Micro, ModelKind, Setup, parse_names};
    pub use podsim_compute::chips::{CHIPS, Chip, Tiling};
    pub use podsim_net::Packetization;
}
