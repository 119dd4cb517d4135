//! The EXAMPLES section of the main commands' `--help` (clap's `after_help`), one text file
//! each in `examples/`: each `$ podsim` line is a command that runs as shown on a fresh clone,
//! from the repository's root (`crates/cli/tests/help_examples.rs` runs every one).

/// `podsim run`.
pub(crate) const RUN: &str = include_str!("examples/run.txt");
/// `podsim collective`.
pub(crate) const COLLECTIVE: &str = include_str!("examples/collective.txt");
/// `podsim noc`.
pub(crate) const NOC: &str = include_str!("examples/noc.txt");
/// `podsim gemm`.
pub(crate) const GEMM: &str = include_str!("examples/gemm.txt");
/// `podsim workload`.
pub(crate) const WORKLOAD: &str = include_str!("examples/workload.txt");
/// `podsim train`.
pub(crate) const TRAIN: &str = include_str!("examples/train.txt");
/// `podsim validate`.
pub(crate) const VALIDATE: &str = include_str!("examples/validate.txt");
/// `podsim dram`.
pub(crate) const DRAM: &str = include_str!("examples/dram.txt");
/// `podsim tofu`.
pub(crate) const TOFU: &str = include_str!("examples/tofu.txt");
/// `podsim dojo`.
pub(crate) const DOJO: &str = include_str!("examples/dojo.txt");
