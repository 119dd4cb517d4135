//! The Tofu family (Tofu, Tofu2, TofuD) beyond its presets, which stay in `podsim-system`
//! with every other machine's timing:
//!
//! * [`node`]: a Tofu node's CMGs, TNIs, CQs, BCHs and BGs, Table II, and process placement.
//! * [`frame`]: TofuD's routing header and split/duplicate slices, Figs. 4-6, with the FCS.
//! * [`family`]: one link-frame model for Tofu, Tofu2 and TofuD, each generation's alignment
//!   and slicing, and Tofu's host bus: Tables IV-V through `[case.packets] frame`.
//! * [`barrier`]: the Tofu barrier as a graph of BCHs and BGs: Table VI's allocation,
//!   serialized and minimum timing, the MPI rule, a machine-wide barrier against software
//!   dissemination.
//! * [`slicing`]: dynamic packet slicing on one TofuD link: real frames, bit errors, lane
//!   faults, STAT-driven split/duplicate, go-back-N.
//! * [`rdma`]: put, get and atomic latencies from Table III's components.
//! * [`study`]: `podsim tofu`'s subcommands as calls: settings in, a result out that
//!   serializes to the command's JSON and renders its text.
//!
//! Invariants: a Tofu barrier's BGs each wait on at most two BGs and signal at most two, and
//! every point's end depends on every point's start (tested); a slicing run delivers each frame
//! at most once, in order, with the bytes that were sent (checked on every delivery).

pub mod barrier;
pub mod family;
pub mod frame;
pub mod node;
pub mod rdma;
pub mod slicing;
pub mod study;
