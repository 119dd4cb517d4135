//! Scenario and validation files, in three stages: what the file says (serde structs, private to
//! this crate) -> a validated, resolved spec ([`Scenario`], [`SystemSpec`], [`ValidationCase`])
//! -> the built model ([`SystemSpec::build`]). Model code never sees serde.
//!
//! Every error is a [`ConfigError`] naming the file, the line, the dotted key and what was
//! expected; unknown keys are rejected with the nearest valid key suggested.
//!
//! Architecture invariant: this is the only crate that knows the file formats; it builds models
//! but does not run them.

mod error;
mod scenario;
mod shorthand;
mod validation;
mod workload;

pub use error::{ConfigError, edit_distance, nearest, parse_toml};
pub use scenario::{
    DEFAULT_LINK_BANDWIDTH, RUN_KINDS, RunSpec, Scenario, SystemSpec, parse_scenario, parse_system,
};
pub use shorthand::{
    SHORTHAND_HELP, SHORTHAND_KINDS, Shape, TofuSpec, TopoSpec, parse_shorthand, parse_topology,
};
pub use validation::{QUANTITIES, Quantity, ValidationCase, parse_validation};
pub use workload::{WorkloadSpec, parse_workload};

#[cfg(test)]
mod tests;
