//! Compute models.
//!
//! - [`lecture`]: the ECE 327 lecture's tensor core (`dot`, `tensor_core`) and output-
//!   stationary systolic array (`pe`, `mxu`), register for register, cycle- and bit-exact.
//! - [`stationary`]: weight- and input-stationary arrays at the same level.
//! - [`gemm`]: the tiling model (closed forms, two cycle conventions) and a fold-by-fold run
//!   on the cycle-level arrays that the closed forms are tested against.
//! - [`mixed`]: BF16/CFP8 products with FP32 accumulation in a documented order.
//! - [`chips`]: compute presets (TPU v4, DOJO node and D1) and rooflines.
//! - [`roofline`] and [`systolic`]: what `podsim roofline` and `podsim systolic` report, as
//!   JSON (serde) and text; `podsim gemm`'s is [`GemmOutput`] with [`GemmRequest`].

pub mod chips;
pub mod dojo_node;
pub mod gemm;
pub mod lecture;
pub mod mixed;
pub mod roofline;
pub mod stationary;
pub mod systolic;

pub use gemm::{
    Convention, Dataflow, GemmOutput, GemmReport, GemmRequest, GemmSpec, MemorySpec, WeightLoad,
    gemm, gemm_loaded, simulate,
};
pub use lecture::{OsArray, TensorCore, Widths, run_os};

/// Why a compute model refused its input.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ComputeError {
    /// Matrix or array dimensions that do not fit together.
    #[error("{0}")]
    Shape(String),
    /// An input that does not fit the input width.
    #[error("{what} {value} does not fit in {bits} signed bits")]
    OutOfRange {
        /// Which input.
        what: String,
        /// The value.
        value: i64,
        /// The width.
        bits: u32,
    },
    /// A count beyond 64 bits.
    #[error("the counts exceed 64 bits")]
    TooLarge,
}

pub use podsim_units::RequestError;

#[cfg(test)]
mod tests;
