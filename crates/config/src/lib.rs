//! Scenario, system, workload and validation files and the topology shorthand, in two stages:
//! what the file says (serde structs, private to this crate) -> a validated, resolved spec of
//! `podsim-system` (`Scenario`, `SystemSpec`, `Workload`) or `podsim-validation`
//! (`ValidationCase`), which those crates build and run. Model code never sees serde.
//!
//! Every error is a [`ConfigError`] naming the file, the line, the dotted key and what was
//! expected; unknown keys are rejected with the nearest valid key suggested. The one CSV format,
//! int8 matrices ([`parse_int8_matrix`]), names the file and line as a CSV reader does
//! ([`MatrixError`]).
//!
//! Architecture invariant: this is the only crate that knows the file formats; it turns text
//! into typed specs and never builds or runs a model.

mod builtin;
mod ctx;
mod error;
mod input;
mod kernel;
mod machine;
mod matrix;
mod model;
mod scenario;
mod shorthand;
mod system;
mod validation;
mod workload;

pub use builtin::{MACHINES, machine_file, machine_file_near};
pub use ctx::MachineFiles;
pub use error::{ConfigError, edit_distance, nearest, parse_toml};
pub use input::{
    MAX_INPUT_BYTES, ReadError, SystemArg, SystemArgError, negative_values_last, one_line,
    read_input, read_input_bytes, system_arg,
};
pub use kernel::{parse_domains, parse_kernel};
pub use machine::{FABRICS, is_machine_file, machine_system, parse_machine};
pub use matrix::{MatrixError, parse_int8_matrix};
pub use model::parse_model;
pub use scenario::{parse_scenario, parse_scenario_with};
pub use shorthand::{
    DEFAULT_LINK_BANDWIDTH, SHORTHAND_HELP, SHORTHAND_KINDS, ShorthandError, parse_shorthand,
    parse_topology, system_from_cli,
};
pub use system::parse_system;
pub use validation::{parse_validation, parse_validation_with, validation_files};
pub use workload::parse_workload;

#[cfg(test)]
mod tests;
