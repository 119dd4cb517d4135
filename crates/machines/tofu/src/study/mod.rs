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
//! Errors name the command-line option a bad value came from ([`StudyError::Input`]), as the
//! models' own errors do ([`crate::slicing::SlicingError`]).

pub mod barrier;
pub mod frame;
pub mod node;
pub mod put;
pub mod slicing;

/// Why a study was refused or failed: a setting the study cannot take
/// ([`RequestError::Input`], naming the option it came from) or a run that failed
/// ([`RequestError::Run`]).
pub type StudyError = podsim_units::RequestError;

/// A setting of `key` the study cannot take.
pub(crate) fn setting(key: &'static str, why: impl std::fmt::Display) -> StudyError {
    StudyError::input(key, why)
}

/// `0.123 us` from seconds.
pub(crate) fn us(s: f64) -> String {
    format!("{:.3} us", s * 1e6)
}

/// `0.123 us` from nanoseconds.
pub(crate) fn us_ns(ns: u64) -> String {
    format!("{:.3} us", ns as f64 / 1000.0)
}
