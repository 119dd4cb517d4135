//! Tenstorrent's DRAM bandwidth study (tenstorrent-dram-bandwidth.txt) on the packet-level NoC
//! of `podsim-noc`, over the Grayskull and Wormhole grids of `podsim-topology`:
//!
//! * [`dram`]: Tenstorrent DRAM reader kernels with transaction-ID barriers against bank models
//!   with bounded request queues on the packet-level NoC, a `Gate` for consumers of the blocks.
//! * [`placement`]: reader placements, next to the bank along the NoC in use, the
//!   harvested-row relocation and the harvest-unaware logical placement, overlapping data
//!   routes.
//! * [`study`]: the DRAM study as one call: presets with sources, VC lanes, the calibrated
//!   efficiency, the u-benchmark.
//! * [`matmul`]: the DRAM-bound 1-D sharded matmul: compute gating the readers through
//!   circular-buffer slots, in0 multicast or unicast, tiles.
//! * [`energy`]: `--energy`: a run's activity (seconds, DRAM bytes, NoC link bytes, the
//!   cores' compute) and its energy on the chip's power figures, checked against the TBP.
//! * [`TtError`]: why any of them failed.
//! * [`request`]: the study and the matmul as `podsim dram` and `podsim matmul` ask for them,
//!   checked by name and size; a study's drawings.
//!
//! Invariants: a DRAM reader never has more blocks in flight than its transaction IDs, nor
//! issues a block its consumer has no slot for; a bank holds at most its queue's requests and
//! the rest wait in the NoC (tested); the relocation keeps every data route apart for every
//! one- and two-row Wormhole harvest (property test).

pub mod dram;
pub mod energy;
mod error;
pub mod matmul;
pub mod placement;
pub mod request;
pub mod study;

pub use error::TtError;
