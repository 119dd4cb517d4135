//! Tesla's DOJO beyond its presets, which stay in `podsim-system` with every other machine's
//! timing (the plane itself, its DIPs, hosts and switch, is `podsim_topology::Dojo`; its
//! routes, `podsim_routing::dojo_route`):
//!
//! * [`barrier`]: ARM/GRANT barrier trees over overlapping synchronisation domains, against a
//!   software dissemination barrier.
//! * [`transfer`]: push, pull, block and die broadcast packet by packet, out-of-order delivery,
//!   counting semaphores.
//! * [`shortcuts`]: Z-plane shortcuts under sustained mixed local and global load on the flow
//!   model.
//! * [`dma`]: DIP DMA descriptors up to four dimensions, HBM bursts, gather/scatter, host
//!   uploads over PCIe.
//! * [`workload`]: the workload's DOJO tasks, `dma` from the nearest DIP and hardware or
//!   software `barrier`, as a [`podsim_system::workload::MachineTask`] the generic executor
//!   runs.
//! * [`study`]: `podsim dojo`'s subcommands as calls: settings in, a result out that
//!   serializes to the command's JSON and renders its text.
//! * [`dojo_node`]: the DOJO node's funnel pipeline as a throughput model
//!   (`podsim_compute::dojo_node`, re-exported).
//!
//! Every network model it runs on comes from `podsim_system::machine` (the flow model with
//! the die routing tables' shortcut policy, `dojo_flow_model`), and it runs under that
//! module's memory limit.
//!
//! Invariants: a DOJO node is in at most four barrier trees (in `podsim dojo barrier` and
//! across a workload's barrier tasks); a DMA descriptor's gather equals its loop nest (tested);
//! a DOJO receiver reads a block only when its semaphore has counted every packet, so its data
//! is right under any arrival order (tested with permuted arrivals).

pub mod barrier;
pub mod dma;
pub mod shortcuts;
pub mod study;
pub mod transfer;
pub mod workload;

pub use podsim_compute::dojo_node;
