//! Mixed-precision matrix products, bit-exact and reproducible.
//!
//! DOJO's matrix units take BF16 or CFP8 operands and accumulate in FP32
//! (dojo-microarchitecture.txt, "DOJO Arithmetic Formats"); the lecture and TPU v4's int8 mode
//! take int8 and accumulate in int32 ([`crate::lecture::dot`]).
//!
//! Accumulation order, which fixes every bit of the result: for each output (i, j), start
//! from `acc = 0.0` (FP32), and for k = 0, 1, ..., K - 1 in that order compute the product of
//! the two decoded operands rounded once to FP32 (exact for BF16, FP16 and CFP8 operands whose
//! product lies in FP32's normal range: 8 + 8 significant bits fit in 24), then
//! `acc = fp32(acc + product)`, rounding to nearest even after every addition. No fused or
//! tree-ordered sums: another order can give other bits, so the order is part of the model.

use podsim_numerics::Format;

use crate::ComputeError;

/// D = A x B with operands given as codes of `format` (A is M x K, B is K x N, row-major) and
/// FP32 accumulation in the documented order. NaN operands propagate as in IEEE arithmetic.
pub fn matmul_fp32_acc(
    format: Format,
    (m, n, k): (usize, usize, usize),
    a: &[u32],
    b: &[u32],
) -> Result<Vec<f32>, ComputeError> {
    if a.len() != m * k || b.len() != k * n {
        return Err(ComputeError::Shape(format!(
            "A must be {m}x{k} and B {k}x{n}"
        )));
    }
    let da: Vec<f64> = a.iter().map(|&c| format.decode(c)).collect();
    let db: Vec<f64> = b.iter().map(|&c| format.decode(c)).collect();
    let mut d = vec![0f32; m * n];
    for i in 0..m {
        for j in 0..n {
            let mut acc = 0f32;
            for kk in 0..k {
                let p = (da[i * k + kk] * db[kk * n + j]) as f32;
                acc += p;
            }
            d[i * n + j] = acc;
        }
    }
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use podsim_numerics::Rounding;

    fn codes(f: Format, v: &[f64]) -> Vec<u32> {
        v.iter()
            .map(|&x| f.encode(x, Rounding::NearestEven, false).unwrap())
            .collect()
    }

    #[test]
    fn bf16_products_accumulate_in_fp32_in_k_order() {
        let f = Format::BF16;
        // 1x3 times 3x1: 2^24 + 1 + 1 in FP32, left to right: 2^24 + 1 rounds to 2^24 (tie, even),
        // and again: 2^24. Summed the other way (1 + 1 + 2^24) it would be 2^24 + 2. The
        // documented order gives 2^24.
        let a = codes(f, &[16_777_216.0, 1.0, 1.0]);
        let b = codes(f, &[1.0, 1.0, 1.0]);
        let d = matmul_fp32_acc(f, (1, 1, 3), &a, &b).unwrap();
        assert_eq!(d, vec![16_777_216.0]);
        let a = codes(f, &[1.0, 1.0, 16_777_216.0]);
        let d = matmul_fp32_acc(f, (1, 1, 3), &a, &b).unwrap();
        assert_eq!(d, vec![16_777_218.0]);
        // 2x2: [[1.5, -2], [0.25, 3]] x [[4, 1], [0.5, -1]] = [[5, 3.5], [2.5, -2.75]], exact.
        let a = codes(f, &[1.5, -2.0, 0.25, 3.0]);
        let b = codes(f, &[4.0, 1.0, 0.5, -1.0]);
        let d = matmul_fp32_acc(f, (2, 2, 2), &a, &b).unwrap();
        assert_eq!(d, vec![5.0, 3.5, 2.5, -2.75]);
    }

    #[test]
    fn cfp8_operands() {
        // cfp8:e4:bias=7 codes 0x40 = 2.0 and 0x3c = 1.5 (exponent 7 with mantissa 0b100):
        // 2 x 1.5 + 1.5 x 1.5 = 5.25.
        let f = Format::cfp8(4, 7).unwrap();
        assert_eq!((f.decode(0x40), f.decode(0x3c)), (2.0, 1.5));
        let d = matmul_fp32_acc(f, (1, 1, 2), &[0x40, 0x3c], &[0x3c, 0x3c]).unwrap();
        assert_eq!(d, vec![5.25]);
    }
}
