//! `podsim tofu` as library calls: each subcommand's settings, the run, a result that
//! serializes to its `--json` object (through `podsim_report::to_json`) and renders its text.
//!
//! * [`frame`]: encode or decode a routing header and the bytes its frame takes on the wire.
//! * [`put`]: Table III's put and the RDMA operations built from its components, checked on
//!   the flow and packet models.
//! * [`barrier`]: the Tofu barrier on a node or across a machine, and the BGs' all-reduce.
//! * [`slicing`]: dynamic packet slicing on one link.
//! * [`node`]: processes placed on a node's CQs and BCHs.
//!
//! Errors name the command-line option a bad value came from ([`StudyError::Setting`]), as the
//! models' own errors do ([`crate::slicing::SlicingError`]).

pub mod barrier;
pub mod frame;
pub mod node;
pub mod put;
pub mod slicing;

/// Why a study cannot run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StudyError {
    /// A setting the study cannot take: the option it came from and why.
    #[error("`{key}`: {why}")]
    Setting {
        /// The option, as `podsim tofu` names it (`--points`).
        key: &'static str,
        /// What is wrong with it.
        why: String,
    },
    /// The run failed (a model's error, a memory limit).
    #[error("{0}")]
    Run(String),
}

/// A [`StudyError::Setting`] of `key`.
pub(crate) fn setting(key: &'static str, why: impl std::fmt::Display) -> StudyError {
    StudyError::Setting {
        key,
        why: why.to_string(),
    }
}

/// `0.123 us` from seconds.
pub(crate) fn us(s: f64) -> String {
    format!("{:.3} us", s * 1e6)
}

/// `0.123 us` from nanoseconds.
pub(crate) fn us_ns(ns: u64) -> String {
    format!("{:.3} us", ns as f64 / 1000.0)
}
