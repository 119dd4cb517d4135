//! TPU v4's studies beyond its pod, which stays in `podsim-system` with every other preset
//! network (`podsim_system::tpu_v4`: 64 blocks, 48 OCSes, slices), as do the ICI and CMEM
//! presets; the training-step model every machine runs is `podsim-train`'s:
//!
//! * [`dlrm`]: deep learning recommendation models with SparseCore embeddings on TPU v4 and
//!   v3 slices, or embeddings in the hosts' memory.
//! * [`apps`]: the TPU v4 paper's eight production applications as public models,
//!   data-parallel steps on v4 and v3 slices through the workload executor and [`dlrm`],
//!   Figs. 12-13.
//! * [`mlperf`]: MLPerf Training 2.0's BERT and ResNet-50 on TPU v4 slices and DGX A100
//!   machine files through the same step model, Figs. 14-15 and Table 6.
//! * [`schedule`]: Table 2's slice mix and a pod scheduler with host failures.
//! * [`availability`]: a pod's goodput with OCS or static wiring, closed form and Monte Carlo.
//! * [`outputs`]: what `podsim availability` and `podsim apps` report, JSON and text.
//!
//! Every network model it runs on comes from `podsim_system::machine` (collectives through
//! `podsim_system::measure`, workloads on `podsim_system::machine::flow_model`), and it runs
//! under that module's memory limit.
//!
//! Invariants: the applications are public models of each kind, chosen before any result was
//! seen and each naming its source, with nothing fitted to Figs. 12-13; availability's Monte
//! Carlo agrees with its closed form (tested); the scheduler runs nothing on more chips than
//! its usable blocks hold, the same seed gives the same schedule, and the queue kept by slice
//! size starts the same jobs in the same order as the plain first-come, first-served queue
//! (tested).

pub mod apps;
pub mod availability;
pub mod dlrm;
pub mod mlperf;
pub mod outputs;
pub mod schedule;

pub use dlrm::DlrmError;
