//! `podsim systolic`: integer matrices streamed through the lecture's output-stationary array
//! ([`crate::lecture::run_os`]), what it reports as JSON (serde) and as text.

use podsim_units::Bytes;

use crate::lecture::{os_completion_cycle, os_run_bytes, run_os};
use crate::{ComputeError, RequestError, Widths};

/// A run asked for: an S x S array, the reduction length K, whether to keep d every cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SystolicRequest {
    /// S: the array has S x S PEs.
    pub size: usize,
    /// K, the reduction length streamed through the array.
    pub k: usize,
    /// Keep d cycle by cycle.
    pub trace: bool,
}

/// A run as `podsim systolic --json` prints it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SystolicOutput {
    /// S.
    pub size: usize,
    /// K.
    pub k: usize,
    /// D = A x B, S rows of S.
    pub d: Vec<Vec<i64>>,
    /// Per output, the first cycle holding its final value.
    pub settle_cycle: Vec<Vec<u64>>,
    /// The cycle from which every output is final.
    pub completion_cycle: u64,
    /// The closed form 2(S-1) + K + 1.
    pub structural_completion_cycle: u64,
    /// d in every cycle (with `trace`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace: Option<Vec<Vec<Vec<i64>>>>,
}

impl SystolicRequest {
    /// Refuse an empty array or reduction, or a run that needs more than `memory_limit` bytes.
    pub fn check(&self, memory_limit: u64) -> Result<(), RequestError> {
        if self.size == 0 || self.k == 0 {
            return Err(RequestError::input("--size/--k", "both must be at least 1"));
        }
        let (s, k) = (self.size, self.k);
        let need = os_run_bytes(s, s, k, self.trace);
        if need > memory_limit {
            return Err(RequestError::Memory(format!(
                "a {s}x{s} array with K = {k}{} needs about {}, more than the memory limit of {} (--memory-limit)",
                if self.trace { " traced" } else { "" },
                Bytes(need),
                Bytes(memory_limit)
            )));
        }
        Ok(())
    }

    /// Run A (S x K, row-major int8) and B (K x S) through the array.
    pub fn run(&self, a: &[i64], b: &[i64]) -> Result<SystolicOutput, ComputeError> {
        let (s, k) = (self.size, self.k);
        let run = run_os((s, s), k, Widths::INT8_INT32, a, b, self.trace)?;
        let grid = |v: &[i64]| -> Vec<Vec<i64>> { v.chunks(s).map(<[i64]>::to_vec).collect() };
        Ok(SystolicOutput {
            size: s,
            k,
            d: grid(&run.d),
            settle_cycle: run.settle.chunks(s).map(<[u64]>::to_vec).collect(),
            completion_cycle: run.settle.iter().copied().max().unwrap_or(0),
            structural_completion_cycle: os_completion_cycle(s, s, k),
            trace: self
                .trace
                .then(|| run.trace.iter().map(|d| grid(d)).collect()),
        })
    }
}

impl SystolicOutput {
    /// The text `podsim systolic` prints: the trace (if kept), d, the settle cycles.
    pub fn text(&self) -> String {
        fn grid<T: std::fmt::Display>(out: &mut String, rows: &[Vec<T>]) {
            for row in rows {
                let cells: Vec<String> = row.iter().map(|x| format!("{x:>8}")).collect();
                out.push_str(&format!("  {}\n", cells.join(" ")));
            }
        }
        let mut out = String::new();
        if let Some(trace) = &self.trace {
            for (t, d) in trace.iter().enumerate() {
                out.push_str(&format!("cycle {t}:\n"));
                grid(&mut out, d);
            }
            out.push('\n');
        }
        out.push_str("d (final):\n");
        grid(&mut out, &self.d);
        out.push_str("settle cycle (first cycle holding the final value):\n");
        grid(&mut out, &self.settle_cycle);
        out.push_str(&format!(
            "all outputs final from cycle {} (closed form for non-zero last products: \
             2(S-1) + K + 1 = {})\n",
            self.completion_cycle, self.structural_completion_cycle
        ));
        out
    }
}
