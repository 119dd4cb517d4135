//! Weight-stationary (TPU MXU style) and input-stationary systolic arrays, cycle-level.
//!
//! One register-level model serves both: an `R` x `C` grid whose PE (r, c) holds a stationary
//! value `s[r][c]`; vectors x stream in from the left (element r into row r), and partial sums
//! flow down, so that column c's bottom PE emits `y[c] = sum_r s[r][c] * x[r]`.
//! Weight-stationary holds a K x N tile of B and streams the rows of A (y = a row of A x B);
//! input-stationary holds a K x M tile of A^T and streams the columns of B (y = a column of
//! A x B).
//!
//! PE (r, c), on each rising edge, in the style of the lecture's `pe`:
//! `a_reg <= a_in` (from the left neighbour's `a_reg`, or the input for column 0) and
//! `psum_reg <= psum_in + a_reg * s` (from the upper neighbour's `psum_reg`, 0 for row 0),
//! both from the values before the edge.
//!
//! Schedule (cycle t = after t edges, as in [`crate::lecture`]):
//! 1. Load: the stationary rows shift in from the top, one per cycle, bottom row first:
//!    cycles 0..R-1.
//! 2. Stream: element r of vector m is presented to row r in cycle R + m + r (the skew).
//!    It sits in PE (r, c)'s `a_reg` after edge R + m + r + c + 1, is accumulated at edge
//!    R + m + r + c + 2, and the finished sum leaves row R - 1 of column c, visible from
//!    cycle 2R + m + c + 1.
//! 3. De-skew: column c's outputs are delayed by C - 1 - c so that vector m's outputs are
//!    aligned in cycle 2R + m + C (the de-skew adds no time to the last output).
//!
//! A fold with T vectors and Cf used columns is over once its last output is visible: it takes
//! 2R + T + Cf cycles (cycles 0 to 2R + T + Cf - 1).

use crate::ComputeError;
use crate::lecture::Widths;

/// The result of streaming vectors through a stationary array.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StationaryRun {
    /// Outputs, `t` x `cols` row-major: y[m][c] = sum_r s[r][c] * x[m][r].
    pub y: Vec<i64>,
    /// Per output, the cycle it first appears at the bottom of its column.
    pub ready: Vec<u64>,
    /// Cycles used: from the first load cycle to the last output, inclusive.
    pub cycles: u64,
}

/// Load `s` (`rows` x `cols`, row-major) and stream the `t` vectors of `x` (`t` x `rows`); the
/// outputs are observed at the bottom of the array, tagged with the vector that produced them,
/// as they come out. `used_cols` limits which columns count for the fold's end.
pub fn run_stationary(
    (rows, cols): (usize, usize),
    w: Widths,
    s: &[i64],
    x: &[i64],
    t: usize,
    used_cols: usize,
) -> Result<StationaryRun, ComputeError> {
    if rows == 0 || cols == 0 || s.len() != rows * cols || x.len() != t * rows {
        return Err(ComputeError::Shape(format!(
            "the stationary tile must be {rows}x{cols} and the stream {t}x{rows}"
        )));
    }
    for &v in s.iter().chain(x) {
        if !w.input.holds(v) {
            return Err(ComputeError::OutOfRange {
                what: "a matrix entry".into(),
                value: v,
                bits: w.input.bits,
            });
        }
    }
    let n = rows * cols;
    let out = w.output;
    let mut held = vec![0i64; n]; // the stationary registers
    let mut a = vec![0i64; n];
    let mut a_tag = vec![usize::MAX; n]; // which vector an a_reg holds
    let mut psum = vec![0i64; n];
    let mut p_tag = vec![usize::MAX; n];
    let mut y = vec![0i64; t * cols];
    let mut ready = vec![u64::MAX; t * cols];
    let mut remaining = t * used_cols.min(cols);
    let mut cycle = 0u64;
    let mut last = 0u64;
    // Load: row rows-1 enters first, then shifts down as the others follow.
    for i in 0..rows {
        let src = rows - 1 - i;
        held.copy_within(0..cols * (rows - 1), cols);
        held[..cols].copy_from_slice(&s[src * cols..(src + 1) * cols]);
        cycle += 1;
    }
    let mut new_p = vec![0i64; n];
    let mut new_tag = vec![usize::MAX; n];
    while remaining > 0 {
        // Inputs of this cycle: vector m's element r in cycle R + m + r.
        let base = cycle as usize - rows;
        // psum_reg <= psum_in + a_reg * s, from the registers before the edge.
        for r in 0..rows {
            for c in 0..cols {
                let i = r * cols + c;
                let (above, above_tag) = if r == 0 {
                    (0, a_tag[i])
                } else {
                    (psum[i - cols], p_tag[i - cols])
                };
                new_p[i] = out.wrap(i128::from(above) + i128::from(a[i]) * i128::from(held[i]));
                new_tag[i] = if a_tag[i] == above_tag {
                    a_tag[i]
                } else {
                    usize::MAX
                };
            }
        }
        std::mem::swap(&mut psum, &mut new_p);
        std::mem::swap(&mut p_tag, &mut new_tag);
        // a_reg <= a_in: shift right; column 0 takes the skewed input.
        for r in 0..rows {
            let row = r * cols..(r + 1) * cols;
            a[row.clone()].copy_within(0..cols - 1, 1);
            a_tag[row].copy_within(0..cols - 1, 1);
            let m = base.checked_sub(r);
            let (v, tag) = match m {
                Some(m) if m < t => (x[m * rows + r], m),
                _ => (0, usize::MAX),
            };
            a[r * cols] = v;
            a_tag[r * cols] = tag;
        }
        cycle += 1;
        // Observe the bottom row.
        for c in 0..cols {
            let i = (rows - 1) * cols + c;
            let m = p_tag[i];
            if m < t && ready[m * cols + c] == u64::MAX {
                y[m * cols + c] = psum[i];
                ready[m * cols + c] = cycle;
                if c < used_cols {
                    remaining -= 1;
                    last = last.max(cycle);
                }
            }
        }
    }
    Ok(StationaryRun {
        y,
        ready,
        cycles: last + 1,
    })
}

/// Cycles of one stationary fold: R load cycles, then the last of T vectors leaves used
/// column Cf - 1 in cycle 2R + (T - 1) + (Cf - 1) + 1 (see the module notes).
pub fn stationary_fold_cycles(rows: usize, t: usize, used_cols: usize) -> u64 {
    (2 * rows + t + used_cols) as u64
}
