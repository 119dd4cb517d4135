//! Why a request in a user's terms (names, sizes and numbers as given on the command line or
//! in Python) was refused, or its run failed: the one error type of every crate's request
//! layer (`podsim gemm`, `dram`, `apps`, `tofu`, ...), which the CLI turns into its messages
//! and exit codes.

use std::fmt;

/// Why a request was refused or its run failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RequestError {
    /// An input out of range or not understood: the command-line flag (or argument) that gave
    /// it, and why.
    #[error("`{flag}`: {why}")]
    Input {
        /// The flag, e.g. `--sram`.
        flag: &'static str,
        /// What was wrong and what was expected.
        why: String,
    },
    /// The run would need more memory than it may have.
    #[error("{0}")]
    Memory(String),
    /// A combination of inputs out of range, the message naming them.
    #[error("{0}")]
    Invalid(String),
    /// The model failed.
    #[error("{0}")]
    Run(String),
}

impl RequestError {
    /// An [`RequestError::Input`] of `flag`.
    pub fn input(flag: &'static str, why: impl fmt::Display) -> RequestError {
        RequestError::Input {
            flag,
            why: why.to_string(),
        }
    }
}
