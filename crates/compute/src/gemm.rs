//! GEMM tiling on a systolic array: folds, cycles, utilisation, SRAM and DRAM traffic.
//!
//! D (M x N) = A (M x K) x B (K x N) on an R x C array. Each dataflow maps two of the three
//! dimensions onto the array (Sr rows, Sc columns) and streams the third (T):
//!
//! | dataflow | Sr | Sc | T | held in the PEs |
//! |---|---|---|---|---|
//! | os (output-stationary, the lecture's `mxu`) | M | N | K | D |
//! | ws (weight-stationary, TPU MXU) | K | N | M | a K x N tile of B |
//! | is (input-stationary) | K | M | N | a K x M tile of A^T |
//!
//! There are ceil(Sr / R) x ceil(Sc / C) folds, run column fold by column fold (outer), row
//! fold by row fold (inner), as SCALE-Sim does. A fold uses Srf <= R rows and Scf <= C columns.
//!
//! Two cycle conventions:
//! - `rtl`: what the cycle-level arrays of this crate take (tests compare on hundreds of random
//!   shapes). OS fold: Srf + Scf + K cycles (the last used output, (Srf-1, Scf-1), is final in
//!   cycle Srf + Scf + K - 1; the synchronous reset for the next fold is asserted in that
//!   cycle). WS/IS fold: 2R + T + Scf (R cycles of stationary load, partial sums through all R
//!   rows). Folds run back to back.
//! - `scalesim`: SCALE-Sim v3's "Total Cycles" (COMPUTE_REPORT.csv, CALC bandwidth mode):
//!   folds x (T + R + C - 2) - 1 for os and folds x (T + 2R + C - 2) - 1 for ws and is, full
//!   array dimensions in every fold. Checked against SCALE-Sim's own output in
//!   `tests/scalesim_fixtures.txt`.

use std::fmt;

use podsim_units::Bytes;

use crate::{ComputeError, RequestError};

/// Which operand stays in the PEs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dataflow {
    /// Output-stationary.
    Os,
    /// Weight-stationary.
    Ws,
    /// Input-stationary.
    Is,
}

impl Dataflow {
    /// Parse `os`, `ws` or `is`.
    pub fn parse(s: &str) -> Option<Dataflow> {
        match s {
            "os" => Some(Dataflow::Os),
            "ws" => Some(Dataflow::Ws),
            "is" => Some(Dataflow::Is),
            _ => None,
        }
    }
}

impl fmt::Display for Dataflow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Dataflow::Os => "os",
            Dataflow::Ws => "ws",
            Dataflow::Is => "is",
        })
    }
}

/// Which cycle count to report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Convention {
    /// Exact against the register-level arrays.
    Rtl,
    /// SCALE-Sim v3's "Total Cycles".
    ScaleSim,
}

impl Convention {
    /// Its name: `rtl` or `scalesim`.
    pub fn name(self) -> &'static str {
        match self {
            Convention::Rtl => "rtl",
            Convention::ScaleSim => "scalesim",
        }
    }

    /// Parse `rtl` or `scalesim`.
    pub fn parse(s: &str) -> Option<Convention> {
        match s {
            "rtl" => Some(Convention::Rtl),
            "scalesim" => Some(Convention::ScaleSim),
            _ => None,
        }
    }
}

/// A GEMM on an array.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GemmSpec {
    /// Array rows R.
    pub rows: u64,
    /// Array columns C.
    pub cols: u64,
    /// Dataflow.
    pub dataflow: Dataflow,
    /// M (rows of A and D).
    pub m: u64,
    /// N (columns of B and D).
    pub n: u64,
    /// K (the reduction).
    pub k: u64,
    /// Cycle convention.
    pub convention: Convention,
    /// Memory system.
    pub memory: MemorySpec,
}

/// Scratchpads and DRAM.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MemorySpec {
    /// Bytes per element of A and B.
    pub input_bytes: u64,
    /// Bytes per element of D (and of partial sums).
    pub output_bytes: u64,
    /// Scratchpad for A, bytes (double-buffered: half holds the working set).
    pub sram_a: u64,
    /// Scratchpad for B, bytes.
    pub sram_b: u64,
    /// Scratchpad for D, bytes.
    pub sram_d: u64,
    /// DRAM bytes per cycle; `None` for unlimited (no stalls).
    pub dram_bytes_per_cycle: Option<f64>,
}

impl MemorySpec {
    /// int8 inputs, int32 outputs, 64 KiB per scratchpad (SCALE-Sim's default sizes), unlimited
    /// DRAM bandwidth.
    pub const DEFAULT: MemorySpec = MemorySpec {
        input_bytes: 1,
        output_bytes: 4,
        sram_a: 64 << 10,
        sram_b: 64 << 10,
        sram_d: 64 << 10,
        dram_bytes_per_cycle: None,
    };
}

/// What the tiling model reports. Serialized, its fields are the keys of [`GemmOutput`].
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct GemmReport {
    /// Total cycles: compute plus stalls.
    pub cycles: u64,
    /// Cycles the array computes (the chosen convention).
    pub compute_cycles: u64,
    /// Cycles waiting for DRAM.
    pub stall_cycles: u64,
    /// Folds.
    pub folds: u64,
    /// Row folds (over Sr).
    pub row_folds: u64,
    /// Column folds (over Sc).
    pub col_folds: u64,
    /// Multiply-accumulates, M x N x K.
    pub macs: u64,
    /// macs / (cycles x R x C).
    pub utilization: f64,
    /// Mean over folds of the share of PEs mapped: Sr x Sc / (folds x R x C).
    pub mapping_efficiency: f64,
    /// Scratchpad reads of A, B and partial sums, elements.
    pub sram_reads: u64,
    /// Scratchpad reads of A, elements.
    pub sram_reads_a: u64,
    /// Scratchpad reads of B, elements.
    pub sram_reads_b: u64,
    /// Scratchpad writes (outputs and partial sums), elements.
    pub sram_writes: u64,
    /// DRAM traffic, bytes (reads of A and B, writes and spills of D).
    pub dram_bytes: u64,
}

/// A GEMM as `podsim gemm --json` prints it and Python's `podsim.gemm` returns it: the array,
/// dataflow, convention and shape, and the [`GemmReport`]'s keys. One struct, so the command
/// and the bindings cannot drift; serialize it with `podsim_report::to_json`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct GemmOutput {
    /// The array, `ROWSxCOLS`.
    pub array: String,
    /// `os`, `ws` or `is`.
    pub dataflow: String,
    /// `rtl` or `scalesim`.
    pub convention: &'static str,
    /// Rows of A and D.
    pub m: u64,
    /// Columns of B and D.
    pub n: u64,
    /// The reduction.
    pub k: u64,
    /// What the model reported.
    #[serde(flatten)]
    pub report: GemmReport,
}

impl GemmOutput {
    /// `report`, what the tiling model said of `spec`.
    pub fn new(spec: &GemmSpec, report: GemmReport) -> GemmOutput {
        GemmOutput {
            array: format!("{}x{}", spec.rows, spec.cols),
            dataflow: spec.dataflow.to_string(),
            convention: spec.convention.name(),
            m: spec.m,
            n: spec.n,
            k: spec.k,
            report,
        }
    }

    /// The text `podsim gemm` prints.
    pub fn text(&self) -> String {
        use podsim_units::table::row;
        let r = &self.report;
        podsim_units::table::render(&[
            row(
                "gemm",
                format!(
                    "{}x{}x{} on {}, {}, {} cycles",
                    self.m, self.n, self.k, self.array, self.dataflow, self.convention
                ),
            ),
            row("cycles", r.cycles.to_string()),
            row("  compute", r.compute_cycles.to_string()),
            row("  stalls", r.stall_cycles.to_string()),
            row(
                "folds",
                format!("{} ({} x {})", r.folds, r.row_folds, r.col_folds),
            ),
            row("MACs", r.macs.to_string()),
            row("utilization", format!("{:.2}%", r.utilization * 100.0)),
            row(
                "mapping efficiency",
                format!("{:.2}%", r.mapping_efficiency * 100.0),
            ),
            row(
                "SRAM reads (A, B)",
                format!("{} ({}, {})", r.sram_reads, r.sram_reads_a, r.sram_reads_b),
            ),
            row("SRAM writes", r.sram_writes.to_string()),
            row("DRAM traffic", Bytes(r.dram_bytes).to_string()),
        ])
    }
}

/// A GEMM as a user asks for it (`podsim gemm`): the array as `RxC`, names, sizes as text.
/// [`GemmRequest::run`] checks it (each refusal names its flag) and runs the tiling model.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GemmRequest<'a> {
    /// Array rows x columns, e.g. `32x32`.
    pub array: &'a str,
    /// `os`, `ws` or `is`.
    pub dataflow: &'a str,
    /// Rows of A and D.
    pub m: u64,
    /// Columns of B and D.
    pub n: u64,
    /// The reduction.
    pub k: u64,
    /// `rtl` or `scalesim`.
    pub convention: &'a str,
    /// Bytes per element of A and B.
    pub input_bytes: u64,
    /// Bytes per element of D.
    pub output_bytes: u64,
    /// Scratchpad per operand, a size such as `64 KiB`.
    pub sram: &'a str,
    /// DRAM bytes per cycle (unlimited if `None`).
    pub dram_bytes_per_cycle: Option<f64>,
}

impl GemmRequest<'_> {
    /// The model's input, or the flag whose value cannot be used.
    pub fn spec(&self) -> Result<GemmSpec, RequestError> {
        let (rows, cols) = parse_array(self.array)?;
        let dataflow = Dataflow::parse(self.dataflow).ok_or_else(|| {
            RequestError::input(
                "--dataflow",
                format!("`{}`: expected os, ws or is", self.dataflow),
            )
        })?;
        let convention = Convention::parse(self.convention).ok_or_else(|| {
            RequestError::input(
                "--convention",
                format!("`{}`: expected rtl or scalesim", self.convention),
            )
        })?;
        let sram = self
            .sram
            .parse::<Bytes>()
            .map_err(|e| {
                RequestError::input("--sram", format!("{e}; expected a size such as \"64 KiB\""))
            })?
            .0;
        for (flag, v) in [
            ("--input-bytes", self.input_bytes),
            ("--output-bytes", self.output_bytes),
        ] {
            if v > 16 {
                return Err(RequestError::input(
                    flag,
                    format!("{v} bytes an element: expected 1 to 16 (int8 to fp128)"),
                ));
            }
        }
        // The array takes a row of A and a column of B (or a row of partial sums) every cycle
        // from double-buffered scratchpads: one edge of the array, twice, is the least that
        // works.
        let edge = 2 * rows.max(cols) * self.input_bytes.max(self.output_bytes);
        if sram < edge {
            return Err(RequestError::input(
                "--sram",
                format!(
                    "{} cannot feed a {rows}x{cols} array: each scratchpad needs at least {} \
                     (one double-buffered edge of the array)",
                    Bytes(sram),
                    Bytes(edge)
                ),
            ));
        }
        if let Some(bw) = self.dram_bytes_per_cycle
            && !(bw > 0.0 && bw.is_finite())
        {
            return Err(RequestError::input(
                "--dram-bytes-per-cycle",
                "expected a positive number of bytes per cycle",
            ));
        }
        if self.input_bytes == 0 || self.output_bytes == 0 {
            return Err(RequestError::input(
                "--input-bytes/--output-bytes",
                "an element has at least one byte",
            ));
        }
        Ok(GemmSpec {
            rows,
            cols,
            dataflow,
            m: self.m,
            n: self.n,
            k: self.k,
            convention,
            memory: MemorySpec {
                input_bytes: self.input_bytes,
                output_bytes: self.output_bytes,
                sram_a: sram,
                sram_b: sram,
                sram_d: sram,
                dram_bytes_per_cycle: self.dram_bytes_per_cycle,
            },
        })
    }

    /// Check the request and run the tiling model on it.
    pub fn run(&self) -> Result<GemmOutput, RequestError> {
        let spec = self.spec()?;
        let r = gemm(&spec).map_err(|e| {
            // Without the DRAM limit the counts fit: it is the stalls that overflow.
            let stalls = spec.memory.dram_bytes_per_cycle.is_some()
                && gemm(&GemmSpec {
                    memory: MemorySpec {
                        dram_bytes_per_cycle: None,
                        ..spec.memory
                    },
                    ..spec
                })
                .is_ok();
            if stalls {
                RequestError::input(
                    "--dram-bytes-per-cycle",
                    format!("the DRAM stalls at this rate exceed 64 bits of cycles ({e})"),
                )
            } else {
                RequestError::input("--m/--n/--k/--array", e)
            }
        })?;
        Ok(GemmOutput::new(&spec, r))
    }
}

/// `RxC` with both at least 1.
fn parse_array(s: &str) -> Result<(u64, u64), RequestError> {
    let bad = || {
        RequestError::input(
            "--array",
            format!("`{s}`: expected ROWSxCOLS with both at least 1, such as 32x32"),
        )
    };
    let (r, c) = s.split_once(['x', 'X']).ok_or_else(bad)?;
    let (r, c) = (
        r.trim().parse::<u64>().map_err(|_| bad())?,
        c.trim().parse::<u64>().map_err(|_| bad())?,
    );
    if r == 0 || c == 0 {
        return Err(bad());
    }
    Ok((r, c))
}

/// How a weight- or input-stationary array gets its next stationary tile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum WeightLoad {
    /// The tile is shifted in (R cycles) only once the previous fold has drained: every fold
    /// takes 2R + T + Scf cycles (the `rtl` convention). The lecture's ECE 327 arrays and the
    /// register-level arrays of this crate work this way.
    #[default]
    Serial,
    /// The array holds a second tile: the next fold's tile is shifted in while the current
    /// fold streams, and its rows follow the current fold's without waiting for the drain.
    /// TPU v1 (Jouppi et al., ISCA 2017, "In-Datacenter Performance Analysis of a Tensor
    /// Processing Unit", section 2): "The matrix unit holds one 64 KiB tile of weights plus
    /// one for double-buffering (to hide the 256 cycles it takes to shift a tile in)".
    /// In the `rtl` convention a product of f folds takes
    /// R + (f - 1) x max(T, R) + (T + R + Scf_last) cycles: the first tile's load, one
    /// fold every max(T, R) cycles after it (a fold streams its T rows while the next tile
    /// shifts in), and the last fold's rows, its R rows of partial sums and its Scf columns.
    /// With one fold it is the serial 2R + T + Scf.
    DoubleBuffered,
}

impl WeightLoad {
    /// The name a report gives (`serial`, `double-buffered`).
    pub fn name(self) -> &'static str {
        match self {
            WeightLoad::Serial => "serial",
            WeightLoad::DoubleBuffered => "double-buffered",
        }
    }
}

/// Evaluate the tiling model (stationary tiles loaded serially, [`WeightLoad::Serial`]).
pub fn gemm(spec: &GemmSpec) -> Result<GemmReport, ComputeError> {
    gemm_loaded(spec, WeightLoad::Serial)
}

/// Evaluate the tiling model with stationary tiles loaded as `load` says. Only the `rtl`
/// convention times [`WeightLoad::DoubleBuffered`] (SCALE-Sim has no such array); the
/// output-stationary dataflow has no stationary tile, so `load` does not change it.
pub fn gemm_loaded(spec: &GemmSpec, load: WeightLoad) -> Result<GemmReport, ComputeError> {
    let GemmSpec {
        rows: r,
        cols: c,
        m,
        n,
        k,
        ..
    } = *spec;
    if r == 0 || c == 0 || m == 0 || n == 0 || k == 0 {
        return Err(ComputeError::Shape(
            "the array and the GEMM need every dimension at least 1".into(),
        ));
    }
    let (sr, sc, t) = match spec.dataflow {
        Dataflow::Os => (m, n, k),
        Dataflow::Ws => (k, n, m),
        Dataflow::Is => (k, m, n),
    };
    let (rf, cf) = (sr.div_ceil(r), sc.div_ceil(c));
    let folds = rf * cf;
    let big = |x: u128| u64::try_from(x).map_err(|_| ComputeError::TooLarge);
    let (w, f) = (u128::from(r), u128::from(folds));
    let compute = match (spec.convention, spec.dataflow) {
        // Sum over folds of Srf + Scf + T: each row fold's Srf appears once per column fold.
        (Convention::Rtl, Dataflow::Os) => big(u128::from(sr) * u128::from(cf)
            + u128::from(sc) * u128::from(rf)
            + u128::from(t) * f)?,
        (Convention::Rtl, _) if load == WeightLoad::DoubleBuffered => {
            // The last fold is in the last column fold (column folds outer).
            let scf_last = u128::from(sc - (cf - 1) * c);
            let t = u128::from(t);
            big(w + (f - 1) * t.max(w) + t + w + scf_last)?
        }
        (Convention::Rtl, _) => big((2 * w + u128::from(t)) * f + u128::from(sc) * u128::from(rf))?,
        (Convention::ScaleSim, Dataflow::Ws | Dataflow::Is)
            if load == WeightLoad::DoubleBuffered =>
        {
            return Err(ComputeError::Shape(
                "double-buffered stationary tiles are timed in the rtl convention only".into(),
            ));
        }
        (Convention::ScaleSim, Dataflow::Os) => {
            big(f * u128::from(t + r + c - 2))?.saturating_sub(1)
        }
        (Convention::ScaleSim, _) => big(f * u128::from(t + 2 * r + c - 2))?.saturating_sub(1),
    };
    let macs = big(u128::from(m) * u128::from(n) * u128::from(k))?;
    // Every count below is at most 2 x macs elements, which fits (checked above); byte counts
    // are taken in 128 bits.
    let (mk, kn, mn) = (m * k, k * n, m * n);
    let wide = |elems: u64, bytes: u64| u128::from(elems) * u128::from(bytes);
    // Scratchpad traffic, in elements.
    let (reads_a, reads_b, psum_reads, writes) = match spec.dataflow {
        // Every fold streams its Srf rows of A and Scf columns of B over all of K.
        Dataflow::Os => (mk * cf, kn * rf, 0, mn),
        // Weights read once; A re-streamed per column fold; partial sums written per row fold
        // (over K) and read back to accumulate.
        Dataflow::Ws => (mk * cf, kn, mn * (rf - 1), mn * rf),
        Dataflow::Is => (mk, kn * cf, mn * (rf - 1), mn * rf),
    };
    let mem = spec.memory;
    let (ib, ob) = (mem.input_bytes, mem.output_bytes);
    // DRAM: an operand is fetched once if its reuse set fits in half its (double-buffered)
    // scratchpad, else once per pass that needs it.
    let fits = |elems: u64, bytes: u64, sram: u64| elems.saturating_mul(bytes) <= sram / 2;
    let (dram_a, dram_b, dram_d) = match spec.dataflow {
        Dataflow::Os => {
            let a = if fits(mk, ib, mem.sram_a) {
                mk
            } else {
                mk * cf
            };
            // A column fold's K x Scf slice of B is reused by every row fold.
            let b = if fits(k * c.min(n), ib, mem.sram_b) {
                kn
            } else {
                kn * rf
            };
            (wide(a, ib), wide(b, ib), wide(mn, ob))
        }
        Dataflow::Ws | Dataflow::Is => {
            let (streamed, sram_s) = if spec.dataflow == Dataflow::Ws {
                (mk, mem.sram_a)
            } else {
                (kn, mem.sram_b)
            };
            let stationary = if spec.dataflow == Dataflow::Ws {
                kn
            } else {
                mk
            };
            let s = if fits(streamed, ib, sram_s) {
                streamed
            } else {
                streamed * cf
            };
            // A column fold's T x Scf block of partial sums stays on chip across the K folds
            // if it fits; else it is spilled and read back.
            let d = if fits(t * c.min(sc), ob, mem.sram_d) {
                u128::from(mn)
            } else {
                u128::from(mn) * u128::from(2 * rf - 1)
            };
            let (a, b) = if spec.dataflow == Dataflow::Ws {
                (s, stationary)
            } else {
                (stationary, s)
            };
            (wide(a, ib), wide(b, ib), d * u128::from(ob))
        }
    };
    let dram_bytes = big(dram_a + dram_b + dram_d)?;
    // Stalls: double buffering hides DRAM traffic behind compute except the first fold's
    // tiles; whatever exceeds the compute time waits.
    let stall = match mem.dram_bytes_per_cycle {
        None => 0,
        Some(bw) => {
            // Cycle counts past 64 bits are refused, not wrapped or clamped into a figure.
            let whole = |x: f64| {
                let x = x.ceil();
                if x.is_finite() && x < u64::MAX as f64 {
                    Ok(x as u64)
                } else {
                    Err(ComputeError::TooLarge)
                }
            };
            let first = (r.min(sr) + c.min(sc)) as f64 * t as f64 * ib as f64;
            let total = whole(dram_bytes as f64 / bw)?;
            let first = whole(first / bw)?;
            first
                .checked_add(total.saturating_sub(compute))
                .ok_or(ComputeError::TooLarge)?
        }
    };
    let cycles = compute.checked_add(stall).ok_or(ComputeError::TooLarge)?;
    Ok(GemmReport {
        cycles,
        compute_cycles: compute,
        stall_cycles: stall,
        folds,
        row_folds: rf,
        col_folds: cf,
        macs,
        utilization: macs as f64 / (cycles as f64 * (r * c) as f64),
        mapping_efficiency: (sr * sc) as f64 / (folds * r * c) as f64,
        sram_reads: reads_a + reads_b + psum_reads,
        sram_reads_a: reads_a,
        sram_reads_b: reads_b,
        sram_writes: writes,
        dram_bytes,
    })
}

/// The product and cycle count of a GEMM run fold by fold on the cycle-level arrays.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Simulated {
    /// D = A x B, M x N row-major, accumulated across folds in the output width.
    pub d: Vec<i64>,
    /// Sum over folds of the cycles each fold took (observed).
    pub cycles: u64,
    /// Folds run.
    pub folds: u64,
}

/// Run D = A x B (A is M x K, B is K x N, row-major) fold by fold on the register-level arrays
/// ([`crate::lecture::OsArray`] for os, [`crate::stationary::run_stationary`] for ws and is),
/// in the fold order of [`gemm`]. A fold's cycles are observed: up to the cycle its last used
/// output is final (os; with no zero entries in A and B every product changes d) or leaves
/// the array (ws, is), inclusive.
pub fn simulate(
    (rows, cols): (usize, usize),
    dataflow: Dataflow,
    w: crate::lecture::Widths,
    (m, n, k): (usize, usize, usize),
    a: &[i64],
    b: &[i64],
) -> Result<Simulated, ComputeError> {
    use crate::lecture::run_os;
    use crate::stationary::run_stationary;
    if a.len() != m * k || b.len() != k * n {
        return Err(ComputeError::Shape(format!(
            "A must be {m}x{k} and B {k}x{n}"
        )));
    }
    let out = w.output;
    let mut d = vec![0i64; m * n];
    let (mut cycles, mut folds) = (0u64, 0u64);
    match dataflow {
        Dataflow::Os => {
            for c0 in (0..n).step_by(cols) {
                for r0 in (0..m).step_by(rows) {
                    let (mr, nc) = ((m - r0).min(rows), (n - c0).min(cols));
                    // Zero-padded tiles: rows beyond M and columns beyond N carry zeros.
                    let mut ta = vec![0i64; rows * k];
                    for i in 0..mr {
                        ta[i * k..(i + 1) * k].copy_from_slice(&a[(r0 + i) * k..(r0 + i + 1) * k]);
                    }
                    let mut tb = vec![0i64; k * cols];
                    for kk in 0..k {
                        tb[kk * cols..kk * cols + nc]
                            .copy_from_slice(&b[kk * n + c0..kk * n + c0 + nc]);
                    }
                    let run = run_os((rows, cols), k, w, &ta, &tb, false)?;
                    let mut last = 0;
                    for i in 0..mr {
                        for j in 0..nc {
                            d[(r0 + i) * n + c0 + j] = run.d[i * cols + j];
                            last = last.max(run.settle[i * cols + j]);
                        }
                    }
                    cycles += last + 1;
                    folds += 1;
                }
            }
        }
        Dataflow::Ws | Dataflow::Is => {
            // ws: stationary = B tile (K rows x N cols), stream = rows of A, out = D rows.
            // is: stationary = A^T tile (K rows x M cols), stream = columns of B, out = D^T rows.
            let (sc, t) = if dataflow == Dataflow::Ws {
                (n, m)
            } else {
                (m, n)
            };
            let stat = |kk: usize, j: usize| {
                if dataflow == Dataflow::Ws {
                    b[kk * n + j]
                } else {
                    a[j * k + kk]
                }
            };
            let stream = |v: usize, kk: usize| {
                if dataflow == Dataflow::Ws {
                    a[v * k + kk]
                } else {
                    b[kk * n + v]
                }
            };
            for c0 in (0..sc).step_by(cols) {
                for r0 in (0..k).step_by(rows) {
                    let (kr, nc) = ((k - r0).min(rows), (sc - c0).min(cols));
                    let mut s = vec![0i64; rows * cols];
                    for i in 0..kr {
                        for j in 0..nc {
                            s[i * cols + j] = stat(r0 + i, c0 + j);
                        }
                    }
                    let mut x = vec![0i64; t * rows];
                    for v in 0..t {
                        for i in 0..kr {
                            x[v * rows + i] = stream(v, r0 + i);
                        }
                    }
                    let run = run_stationary((rows, cols), w, &s, &x, t, nc)?;
                    for v in 0..t {
                        for j in 0..nc {
                            let (i, jj) = if dataflow == Dataflow::Ws {
                                (v, c0 + j)
                            } else {
                                (c0 + j, v)
                            };
                            let acc = &mut d[i * n + jj];
                            *acc = out.wrap(i128::from(*acc) + i128::from(run.y[v * cols + j]));
                        }
                    }
                    cycles += run.cycles;
                    folds += 1;
                }
            }
        }
    }
    Ok(Simulated { d, cycles, folds })
}
