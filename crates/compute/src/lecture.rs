//! The lecture's two units (ece327-tensor-core-systolic-lecture.txt), register for register.
//!
//! Time convention (both units): cycle 0 is the first clock period after reset; inputs given
//! for cycle t are on the wires during cycle t and captured by the rising edge that ends it;
//! the value observed in cycle t is what the registers hold after the t-th rising edge, i.e.
//! after the inputs of cycles 0..t-1 have been captured.

use podsim_numerics::Int;

use crate::ComputeError;

/// Widths of the lecture's parameterised modules: `IDATAW` (inputs), `ODATAW` (accumulator
/// and outputs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Widths {
    /// Input width (int8 in the lecture).
    pub input: Int,
    /// Output/accumulator width (int32 in the lecture).
    pub output: Int,
}

impl Widths {
    /// int8 inputs, int32 accumulation, as in the lecture.
    pub const INT8_INT32: Widths = Widths {
        input: Int::I8,
        output: Int::I32,
    };

    fn check_input(self, what: &str, v: i64) -> Result<(), ComputeError> {
        if self.input.holds(v) {
            Ok(())
        } else {
            Err(ComputeError::OutOfRange {
                what: what.to_string(),
                value: v,
                bits: self.input.bits,
            })
        }
    }
}

/// The `dot` module: `d = a[0]*b[0] + ... + a[n-1]*b[n-1] + c`, every sum and product in
/// `ODATAW` bits (the operands are extended to the context width before multiplying, as
/// SystemVerilog does), so the result wraps modulo 2^ODATAW.
pub fn dot(w: Widths, a: &[i64], b: &[i64], c: i64) -> i64 {
    let mut r: i128 = 0;
    for (x, y) in a.iter().zip(b) {
        r = i128::from(w.output.wrap(r + i128::from(*x) * i128::from(*y)));
    }
    w.output.wrap(r + i128::from(c))
}

/// The `tensor_core` module generalised to `n` x `n` x `n` (the lecture's is 4): a, b and c are
/// registered on every rising edge (b transposed, so that `b_reg[j]` is column j of b), `n*n`
/// dot modules compute combinationally from the registers, and d is registered from them.
/// Latency: inputs of cycle t are seen in d in cycle t + 2; one n x n x n product per cycle.
#[derive(Debug, Clone)]
pub struct TensorCore {
    n: usize,
    w: Widths,
    a_reg: Vec<i64>,
    b_reg: Vec<i64>,
    c_reg: Vec<i64>,
    d: Vec<i64>,
}

impl TensorCore {
    /// A core of size `n` (VECLEN) just out of reset: every register 0.
    pub fn new(n: usize, w: Widths) -> TensorCore {
        TensorCore {
            n,
            w,
            a_reg: vec![0; n * n],
            b_reg: vec![0; n * n],
            c_reg: vec![0; n * n],
            d: vec![0; n * n],
        }
    }

    /// The output register d (row-major), as observed in the current cycle.
    pub fn d(&self) -> &[i64] {
        &self.d
    }

    /// One rising edge with inputs `a`, `b`, `c` (row-major n x n) on the wires. Read, evaluate,
    /// write: d takes the dot products of the registers as they were before the edge.
    pub fn clock(&mut self, a: &[i64], b: &[i64], c: &[i64]) -> Result<(), ComputeError> {
        let n = self.n;
        if a.len() != n * n || b.len() != n * n || c.len() != n * n {
            return Err(ComputeError::Shape(format!(
                "the tensor core takes {n}x{n} matrices"
            )));
        }
        for &v in a.iter().chain(b) {
            self.w.check_input("a tensor-core input", v)?;
        }
        // Evaluate from the old registers.
        let mut d_wire = vec![0; n * n];
        for i in 0..n {
            for j in 0..n {
                d_wire[i * n + j] = dot(
                    self.w,
                    &self.a_reg[i * n..(i + 1) * n],
                    &self.b_reg[j * n..(j + 1) * n],
                    self.c_reg[i * n + j],
                );
            }
        }
        // Write.
        self.d = d_wire;
        self.a_reg.copy_from_slice(a);
        for k in 0..n {
            for l in 0..n {
                self.b_reg[k * n + l] = b[l * n + k]; // b_reg[k][l] <= b[l][k]
            }
        }
        for (r, &v) in self.c_reg.iter_mut().zip(c) {
            *r = self.w.output.wrap(i128::from(v));
        }
        Ok(())
    }

    /// Cycles from presenting inputs to seeing their result in d: input register, then output
    /// register.
    pub const LATENCY_CYCLES: u64 = 2;
}

/// The `mxu` module: a grid of `pe`s (square in the lecture; any `rows` x `cols` here). PE (j, k) registers `ain`/`bin` into
/// `a_reg`/`b_reg` and adds `a_reg * b_reg` (the values before the edge) to `d_reg`; row j's
/// a comes from the left (`ain[j]` at column 0), column k's b from the top (`bin[k]` at row 0).
#[derive(Debug, Clone)]
pub struct OsArray {
    rows: usize,
    cols: usize,
    w: Widths,
    a: Vec<i64>,
    b: Vec<i64>,
    d: Vec<i64>,
    changed: Vec<u64>,
    cycle: u64,
}

impl OsArray {
    /// An array just out of reset.
    pub fn new(rows: usize, cols: usize, w: Widths) -> OsArray {
        OsArray {
            rows,
            cols,
            w,
            a: vec![0; rows * cols],
            b: vec![0; rows * cols],
            d: vec![0; rows * cols],
            changed: vec![0; rows * cols],
            cycle: 0,
        }
    }

    /// The current cycle (edges so far).
    pub fn cycle(&self) -> u64 {
        self.cycle
    }

    /// The accumulators d (row-major), as observed in the current cycle.
    pub fn d(&self) -> &[i64] {
        &self.d
    }

    /// Per PE, the last cycle in which its d changed (0 if never).
    pub fn last_change(&self) -> &[u64] {
        &self.changed
    }

    /// One rising edge with `ain` (one per row) and `bin` (one per column) on the input wires.
    pub fn clock(&mut self, ain: &[i64], bin: &[i64]) {
        let (r, c) = (self.rows, self.cols);
        let out = self.w.output;
        // d_reg <= d_reg + a_reg * b_reg, from the registers before the edge.
        let edge = self.cycle + 1;
        for (i, d) in self.d.iter_mut().enumerate() {
            let (a, b) = (self.a[i], self.b[i]);
            if a != 0 && b != 0 {
                let new = out.wrap(i128::from(*d) + i128::from(a * b));
                if new != *d {
                    *d = new;
                    self.changed[i] = edge;
                }
            }
        }
        // a_reg <= ain: row j shifts right by one PE; b_reg <= bin: column k shifts down.
        for (j, &x) in ain.iter().enumerate().take(r) {
            let row = &mut self.a[j * c..(j + 1) * c];
            row.copy_within(0..c - 1, 1);
            row[0] = x;
        }
        self.b.copy_within(0..c * (r - 1), c);
        self.b[..c].copy_from_slice(&bin[..c]);
        self.cycle += 1;
    }
}

/// The result of streaming one product through an [`OsArray`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OsRun {
    /// D = A x B, row-major `rows` x `cols`.
    pub d: Vec<i64>,
    /// Per output, the first cycle from which d holds its final value (row-major).
    pub settle: Vec<u64>,
    /// Per cycle, d as observed in that cycle (only when tracing).
    pub trace: Vec<Vec<i64>>,
}

/// The bytes [`run_os`] holds for a `rows` x `cols` array and reduction length `k`: the
/// array's four registers per PE (a, b, d and the cycle d last changed, 8 bytes each), the
/// result and settle cycles it returns (16 bytes per output), the skewed input edges, and with
/// `trace` a copy of d for every cycle (8 bytes per output per cycle). Saturates rather than
/// wraps, so callers can compare it with a limit.
pub fn os_run_bytes(rows: usize, cols: usize, k: usize, trace: bool) -> u64 {
    let pes = (rows as u128) * (cols as u128);
    let cycles = u128::from(os_completion_cycle(rows, cols, k)) + 1;
    let bytes = pes * (4 * 8 + 16)
        + (rows as u128 + cols as u128) * 8
        + if trace { pes * 8 * cycles } else { 0 };
    u64::try_from(bytes).unwrap_or(u64::MAX)
}

/// Stream A (`rows` x `k`, row-major) and B (`k` x `cols`) through the lecture's array with the
/// standard skew: in cycle t, row i gets A[i][t - i] and column j gets B[t - j][j] (0 outside
/// the matrices). Runs until every output has settled; `trace` keeps d for every cycle.
pub fn run_os(
    (rows, cols): (usize, usize),
    k: usize,
    w: Widths,
    a: &[i64],
    b: &[i64],
    trace: bool,
) -> Result<OsRun, ComputeError> {
    if rows == 0 || cols == 0 || a.len() != rows * k || b.len() != k * cols {
        return Err(ComputeError::Shape(format!(
            "A must be {rows}x{k} and B {k}x{cols} (got {} and {} values)",
            a.len(),
            b.len()
        )));
    }
    for &v in a.iter().chain(b) {
        w.check_input("a matrix entry", v)?;
    }
    let mut arr = OsArray::new(rows, cols, w);
    let mut trace_rows = Vec::new();
    if trace {
        trace_rows.push(arr.d().to_vec());
    }
    // Run until the last product can have reached the far corner (the closed form below
    // says when; the settle cycles are observed, not assumed).
    let edges = os_completion_cycle(rows, cols, k);
    let (mut ain, mut bin) = (vec![0; rows], vec![0; cols]);
    for t in 0..edges as usize {
        for (i, x) in ain.iter_mut().enumerate() {
            *x = if t >= i && t - i < k {
                a[i * k + (t - i)]
            } else {
                0
            };
        }
        for (j, x) in bin.iter_mut().enumerate() {
            *x = if t >= j && t - j < k {
                b[(t - j) * cols + j]
            } else {
                0
            };
        }
        arr.clock(&ain, &bin);
        if trace {
            trace_rows.push(arr.d().to_vec());
        }
    }
    Ok(OsRun {
        d: arr.d().to_vec(),
        settle: arr.last_change().to_vec(),
        trace: trace_rows,
    })
}

/// The cycle from which output (i, j) of the lecture's array holds its final value, when its
/// last product is not zero. A[i][k] enters row i in cycle i + k and B[k][j] column j in
/// cycle j + k; each passes one register per PE, so both reach PE (i, j)'s registers at edge
/// i + j + k + 1 and are accumulated at edge i + j + k + 2. The last term (k = K - 1) is in d
/// from cycle i + j + K + 1.
pub fn os_settle_cycle(i: usize, j: usize, k: usize) -> u64 {
    (i + j + k + 1) as u64
}

/// The cycle from which all of a `rows` x `cols` block of outputs is final:
/// (rows - 1) + (cols - 1) + K + 1.
pub fn os_completion_cycle(rows: usize, cols: usize, k: usize) -> u64 {
    os_settle_cycle(rows.saturating_sub(1), cols.saturating_sub(1), k)
}

/// Measure a `size` tensor core on the register-level model: (latency in cycles from
/// presenting inputs to seeing their D, MACs completed per cycle in steady state). Inputs are
/// fixed non-zero patterns, a new set every cycle.
pub fn measure_tensor_core(size: usize) -> (u64, u64) {
    let w = Widths::INT8_INT32;
    let n = size * size;
    let input = |t: usize, salt: usize| -> Vec<i64> {
        (0..n)
            .map(|i| ((i * 7 + t * 13 + salt) % 200) as i64 - 99)
            .map(|v| if v == 0 { 1 } else { v })
            .collect()
    };
    let mut tc = TensorCore::new(size, w);
    let cycles = 16;
    let mut expected = Vec::new();
    let mut seen_at = vec![None; cycles];
    for t in 0..cycles + 4 {
        let (a, b, c) = if t < cycles {
            (input(t, 1), input(t, 2), input(t, 3))
        } else {
            (vec![0; n], vec![0; n], vec![0; n])
        };
        if t < cycles {
            // D = A B + C by the definition, row by column.
            let mut d = vec![0i64; n];
            for i in 0..size {
                for j in 0..size {
                    let row: Vec<i64> = a[i * size..(i + 1) * size].to_vec();
                    let col: Vec<i64> = (0..size).map(|k| b[k * size + j]).collect();
                    d[i * size + j] = dot(w, &row, &col, c[i * size + j]);
                }
            }
            expected.push(d);
        }
        let _ = tc.clock(&a, &b, &c);
        // Now in cycle t + 1.
        for (s, e) in expected.iter().enumerate() {
            if seen_at[s].is_none() && tc.d() == e.as_slice() {
                seen_at[s] = Some(t + 1 - s);
            }
        }
    }
    let latency = seen_at.iter().flatten().copied().max().unwrap_or(0) as u64;
    // Every product appears exactly once, one per cycle: n x size MACs per cycle.
    let all_once = seen_at.iter().all(Option::is_some);
    let macs = if all_once { (n * size) as u64 } else { 0 };
    (latency, macs)
}

/// The cycle from which every output of a `size` x `size` array streaming K = `k` is final,
/// measured on the register-level model with non-zero inputs.
pub fn measure_completion(size: usize, k: usize) -> Result<u64, ComputeError> {
    let a: Vec<i64> = (0..size * k).map(|i| (i % 120) as i64 + 1).collect();
    let b: Vec<i64> = (0..size * k).map(|i| -((i % 100) as i64) - 1).collect();
    let run = run_os((size, size), k, Widths::INT8_INT32, &a, &b, false)?;
    Ok(run.settle.iter().copied().max().unwrap_or(0))
}
