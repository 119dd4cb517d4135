//! Number formats, bit-exact.
//!
//! - [`Format`]: binary floating-point formats of up to 32 bits described by their exponent
//!   width, mantissa width, bias and special values: IEEE FP32 and FP16, BF16, FP8 E4M3 (the
//!   OCP "fn" variant without infinities, max 448) and E5M2 (max 57344), and DOJO's
//!   configurable CFP8 (4 or 5 exponent bits) and CFP16, each with a configurable bias.
//!   [`Format::encode`] rounds any `f64` to the nearest code (ties to even) or stochastically,
//!   saturating or not; [`Format::decode`] gives the exact value of a code.
//! - [`Int`]: two's-complement integers of 1 to 64 bits with wrap-around.
//!
//! - [`encoded`]: values encoded in a format as `podsim numerics` reports them, JSON (serde)
//!   and text.
//!
//! Conversions from `f32` ([`Format::encode_f32`]) behave exactly as `ml_dtypes`' `astype`
//! from float32 (numpy's for FP16, which keeps NaN payloads); the tests compare every 8-bit
//! code and thousands of random values bit for bit with vectors from
//! `tools/golden_numerics.py`.
//!
//! # DOJO's configurable formats
//! The DOJO paper (dojo-microarchitecture.txt, "DOJO Arithmetic Formats") gives CFP8 one sign
//! bit, four or five exponent bits and a configurable bias, and says CFP16 has "a similar
//! representation range as CFP8 but at much higher precision". podsim lays them out as Tesla's
//! CFloat specification does: CFP8 is 1-4-3 or 1-5-2, CFP16 is 1-6-9 (six exponent bits give
//! CFP8-e5's range at any bias with room to spare, nine mantissa bits the precision), the bias
//! is an unsigned 6-bit number (0 to 63), subnormals are kept, and there are no infinities or
//! NaNs: every code is a number, so an out-of-range value always saturates to the largest
//! magnitude and a NaN cannot be converted (an error).

use rand::RngCore;
use std::fmt;

pub mod encoded;

/// What a format's all-ones exponent means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Specials {
    /// IEEE 754: all-ones exponent is infinity (mantissa 0) or NaN.
    Ieee,
    /// No infinities; only the all-ones code (exponent and mantissa) is NaN (OCP E4M3 "fn").
    NanOnly,
    /// Every code is a finite number (DOJO CFP8/CFP16).
    Finite,
}

/// Which named format a [`Format`] is, for printing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// IEEE binary32.
    Fp32,
    /// bfloat16 (1-8-7).
    Bf16,
    /// IEEE binary16 (1-5-10).
    Fp16,
    /// OCP FP8 E4M3, no infinities, max 448.
    E4m3,
    /// OCP FP8 E5M2, IEEE specials, max 57344.
    E5m2,
    /// DOJO CFP8 (1-4-3 or 1-5-2), configurable bias.
    Cfp8,
    /// DOJO CFP16 (1-6-9), configurable bias.
    Cfp16,
}

/// A binary floating-point format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Format {
    /// Which family.
    pub family: Family,
    /// Exponent bits.
    pub exp_bits: u32,
    /// Mantissa (fraction) bits.
    pub man_bits: u32,
    /// Exponent bias: a normal code with exponent field e is 1.m x 2^(e - bias).
    pub bias: i32,
    /// Special values.
    pub specials: Specials,
    /// Whether a NaN keeps the top bits of its payload (numpy's FP16) rather than becoming the
    /// canonical quiet NaN.
    pub nan_payload: bool,
}

/// How to round a value that falls between two codes.
pub enum Rounding<'a> {
    /// To the nearest code; ties to the one with an even mantissa.
    NearestEven,
    /// Up with probability (x - lo) / (hi - lo), so that the expected result is x. The draw is
    /// one `u64` per inexact value; the probability is exact to 2^-64.
    Stochastic(&'a mut dyn RngCore),
}

/// Why a conversion failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NumericsError {
    /// The format has no NaN code.
    #[error("{0} has no NaN: every code is a number")]
    NoNan(Format),
    /// A format name that does not parse.
    #[error("`{name}` is not a number format: {why}")]
    BadName {
        /// The text.
        name: String,
        /// What was expected.
        why: String,
    },
    /// A value given on the command line that cannot be used: the flag (or argument) and why.
    #[error("`{flag}`: {why}")]
    Input {
        /// The flag, e.g. `--seed`.
        flag: &'static str,
        /// What was wrong and what was expected.
        why: String,
    },
}

/// The format names `Format::parse` accepts, for help and errors.
pub const FORMAT_NAMES: &str =
    "fp32, bf16, fp16, e4m3, e5m2, cfp8:e4:bias=B, cfp8:e5:bias=B, cfp16:bias=B (B in 0..=63)";

impl Format {
    /// IEEE binary32.
    pub const FP32: Format = Format::ieee(Family::Fp32, 8, 23, false);
    /// bfloat16.
    pub const BF16: Format = Format::ieee(Family::Bf16, 8, 7, false);
    /// IEEE binary16 (NaN payloads kept, as numpy does).
    pub const FP16: Format = Format::ieee(Family::Fp16, 5, 10, true);
    /// FP8 E4M3 without infinities (max 448).
    pub const E4M3: Format = Format {
        family: Family::E4m3,
        exp_bits: 4,
        man_bits: 3,
        bias: 7,
        specials: Specials::NanOnly,
        nan_payload: false,
    };
    /// FP8 E5M2 (max 57344).
    pub const E5M2: Format = Format::ieee(Family::E5m2, 5, 2, false);

    const fn ieee(family: Family, exp_bits: u32, man_bits: u32, nan_payload: bool) -> Format {
        Format {
            family,
            exp_bits,
            man_bits,
            bias: (1 << (exp_bits - 1)) - 1,
            specials: Specials::Ieee,
            nan_payload,
        }
    }

    /// DOJO CFP8 with `exp_bits` (4 or 5) exponent bits and `bias` (0 to 63).
    pub fn cfp8(exp_bits: u32, bias: i32) -> Result<Format, NumericsError> {
        let name = format!("cfp8:e{exp_bits}:bias={bias}");
        if exp_bits != 4 && exp_bits != 5 {
            return Err(NumericsError::BadName {
                name,
                why: "CFP8 has 4 or 5 exponent bits".into(),
            });
        }
        Self::cfp(Family::Cfp8, exp_bits, 7 - exp_bits, bias, name)
    }

    /// DOJO CFP16 (1-6-9) with `bias` (0 to 63).
    pub fn cfp16(bias: i32) -> Result<Format, NumericsError> {
        Self::cfp(Family::Cfp16, 6, 9, bias, format!("cfp16:bias={bias}"))
    }

    fn cfp(
        family: Family,
        exp_bits: u32,
        man_bits: u32,
        bias: i32,
        name: String,
    ) -> Result<Format, NumericsError> {
        if !(0..=63).contains(&bias) {
            return Err(NumericsError::BadName {
                name,
                why: "the bias is an unsigned 6-bit number, 0 to 63".into(),
            });
        }
        Ok(Format {
            family,
            exp_bits,
            man_bits,
            bias,
            specials: Specials::Finite,
            nan_payload: false,
        })
    }

    /// Parse a name such as `bf16`, `e4m3`, `cfp8:e5:bias=20` or `cfp16:bias=31`.
    pub fn parse(name: &str) -> Result<Format, NumericsError> {
        let bad = |why: &str| NumericsError::BadName {
            name: name.to_string(),
            why: format!("{why}; expected one of {FORMAT_NAMES}"),
        };
        let bias_of = |s: &str| -> Result<i32, NumericsError> {
            s.strip_prefix("bias=")
                .ok_or_else(|| bad("the bias is given as bias=B"))?
                .parse::<i32>()
                .map_err(|_| bad("the bias is a whole number"))
        };
        let lower = name.trim().to_ascii_lowercase();
        let parts: Vec<&str> = lower.split(':').collect();
        match parts.as_slice() {
            ["fp32"] | ["f32"] => Ok(Format::FP32),
            ["bf16"] => Ok(Format::BF16),
            ["fp16"] | ["f16"] => Ok(Format::FP16),
            ["e4m3"] | ["e4m3fn"] => Ok(Format::E4M3),
            ["e5m2"] => Ok(Format::E5M2),
            ["cfp8", e, b] => {
                let exp = match *e {
                    "e4" => 4,
                    "e5" => 5,
                    _ => return Err(bad("CFP8 takes e4 or e5")),
                };
                Format::cfp8(exp, bias_of(b)?)
            }
            ["cfp8", ..] => Err(bad("CFP8 needs its exponent width and bias")),
            ["cfp16", b] => Format::cfp16(bias_of(b)?),
            ["cfp16", ..] => Err(bad("CFP16 needs its bias")),
            _ => Err(bad("unknown format")),
        }
    }

    /// Total bits of a code.
    pub fn bits(self) -> u32 {
        1 + self.exp_bits + self.man_bits
    }

    fn exp_ones(self) -> u32 {
        (1 << self.exp_bits) - 1
    }

    fn man_ones(self) -> u32 {
        (1 << self.man_bits) - 1
    }

    fn sign_bit(self) -> u32 {
        1 << (self.exp_bits + self.man_bits)
    }

    /// The code of the largest finite magnitude (positive).
    pub fn max_code(self) -> u32 {
        let (e, m) = match self.specials {
            Specials::Ieee => (self.exp_ones() - 1, self.man_ones()),
            Specials::NanOnly => (self.exp_ones(), self.man_ones() - 1),
            Specials::Finite => (self.exp_ones(), self.man_ones()),
        };
        (e << self.man_bits) | m
    }

    /// The largest finite value.
    pub fn max_value(self) -> f64 {
        self.decode(self.max_code())
    }

    /// The smallest positive value (the smallest subnormal).
    pub fn min_positive(self) -> f64 {
        self.decode(1)
    }

    /// The canonical quiet NaN with the given sign, if the format has NaN.
    fn nan(self, negative: bool) -> Option<u32> {
        let s = if negative { self.sign_bit() } else { 0 };
        match self.specials {
            Specials::Ieee => {
                Some(s | (self.exp_ones() << self.man_bits) | (1 << (self.man_bits - 1)))
            }
            Specials::NanOnly => Some(s | (self.exp_ones() << self.man_bits) | self.man_ones()),
            Specials::Finite => None,
        }
    }

    /// The code for a value too large in magnitude.
    fn overflow(self, negative: bool, saturate: bool) -> u32 {
        let s = if negative { self.sign_bit() } else { 0 };
        match self.specials {
            _ if saturate => s | self.max_code(),
            Specials::Ieee => s | (self.exp_ones() << self.man_bits),
            Specials::NanOnly => s | (self.exp_ones() << self.man_bits) | self.man_ones(),
            Specials::Finite => s | self.max_code(),
        }
    }

    /// Convert a float32, exactly as `ml_dtypes`' `astype` does (numpy's for FP16, keeping
    /// NaN payloads). With `saturate`, values beyond the largest finite magnitude, infinities
    /// included, become that magnitude instead of infinity or NaN.
    pub fn encode_f32(
        self,
        x: f32,
        rounding: Rounding<'_>,
        saturate: bool,
    ) -> Result<u32, NumericsError> {
        if x.is_nan() && self.nan_payload && self.specials == Specials::Ieee {
            // numpy: the payload's top bits; a payload that would vanish becomes 1.
            let b = x.to_bits();
            let s = if b >> 31 == 1 { self.sign_bit() } else { 0 };
            let payload = (b & 0x7f_ffff) >> (23 - self.man_bits.min(23));
            return Ok(s | (self.exp_ones() << self.man_bits) | payload.max(1));
        }
        self.encode(f64::from(x), rounding, saturate)
    }

    /// Convert any `f64` (exactly representable values are kept; others rounded).
    pub fn encode(
        self,
        x: f64,
        rounding: Rounding<'_>,
        saturate: bool,
    ) -> Result<u32, NumericsError> {
        let negative = x.is_sign_negative();
        let sign = if negative { self.sign_bit() } else { 0 };
        if x.is_nan() {
            return self.nan(negative).ok_or(NumericsError::NoNan(self));
        }
        if x.is_infinite() {
            return Ok(self.overflow(negative, saturate));
        }
        if x == 0.0 {
            return Ok(sign);
        }
        // |x| = mant x 2^e2 exactly.
        let bits = x.abs().to_bits();
        let biased = (bits >> 52) as i32;
        let frac = bits & ((1u64 << 52) - 1);
        let (mant, e2) = if biased == 0 {
            (frac, -1074)
        } else {
            (frac | (1u64 << 52), biased - 1075)
        };
        let p = self.man_bits as i32;
        let lead = e2 + 63 - mant.leading_zeros() as i32; // floor(log2 |x|)
        // The spacing of codes around |x|: normal spacing, or the subnormal one.
        let q = (lead - p).max(1 - self.bias - p);
        let shift = q - e2;
        let n: u128 = if shift <= 0 {
            u128::from(mant) << (-shift)
        } else {
            round_shift(mant, shift as u32, rounding)
        };
        if n == 0 {
            return Ok(sign);
        }
        let one = 1u128 << p;
        let (e_field, m_field) = if n < one {
            (0i64, n as u32)
        } else {
            let (n, q) = if n == one << 1 {
                (n >> 1, q + 1)
            } else {
                (n, q)
            };
            (i64::from(q + p + self.bias), (n - one) as u32)
        };
        let max = self.max_code();
        let (max_e, max_m) = (i64::from(max >> self.man_bits), max & self.man_ones());
        if e_field > max_e || (e_field == max_e && m_field > max_m) {
            return Ok(self.overflow(negative, saturate));
        }
        Ok(sign | ((e_field as u32) << self.man_bits) | m_field)
    }

    /// The exact value of a code (NaN for NaN codes).
    pub fn decode(self, code: u32) -> f64 {
        let negative = code & self.sign_bit() != 0;
        let e = (code >> self.man_bits) & self.exp_ones();
        let m = code & self.man_ones();
        let magnitude = match self.specials {
            Specials::Ieee if e == self.exp_ones() => {
                if m == 0 {
                    f64::INFINITY
                } else {
                    f64::NAN
                }
            }
            Specials::NanOnly if e == self.exp_ones() && m == self.man_ones() => f64::NAN,
            _ => {
                let p = self.man_bits as i32;
                if e == 0 {
                    f64::from(m) * pow2(1 - self.bias - p)
                } else {
                    f64::from((1 << self.man_bits) | m) * pow2(e as i32 - self.bias - p)
                }
            }
        };
        if negative { -magnitude } else { magnitude }
    }

    /// Whether a code is NaN.
    pub fn is_nan(self, code: u32) -> bool {
        self.decode(code).is_nan()
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.family {
            Family::Fp32 => f.write_str("fp32"),
            Family::Bf16 => f.write_str("bf16"),
            Family::Fp16 => f.write_str("fp16"),
            Family::E4m3 => f.write_str("e4m3"),
            Family::E5m2 => f.write_str("e5m2"),
            Family::Cfp8 => write!(f, "cfp8:e{}:bias={}", self.exp_bits, self.bias),
            Family::Cfp16 => write!(f, "cfp16:bias={}", self.bias),
        }
    }
}

/// 2^e for e within f64's normal range (all the formats here stay inside it).
fn pow2(e: i32) -> f64 {
    debug_assert!((-1022..=1023).contains(&e));
    f64::from_bits(((e + 1023) as u64) << 52)
}

/// mant / 2^shift rounded to an integer.
fn round_shift(mant: u64, shift: u32, rounding: Rounding<'_>) -> u128 {
    let m = u128::from(mant);
    if shift >= 127 {
        // mant < 2^53, so the value is below 2^-74: under half, and below the stochastic
        // draw's resolution.
        return 0;
    }
    let floor = m >> shift;
    let rem = m & ((1u128 << shift) - 1);
    if rem == 0 {
        return floor;
    }
    let up = match rounding {
        Rounding::NearestEven => {
            let half = 1u128 << (shift - 1);
            rem > half || (rem == half && floor & 1 == 1)
        }
        Rounding::Stochastic(rng) => {
            let r = u128::from(rng.next_u64());
            if shift <= 64 {
                // r >> (64 - shift) is uniform on [0, 2^shift): up with probability rem/2^shift.
                (r >> (64 - shift)) < rem
            } else {
                r < rem >> (shift - 64)
            }
        }
    };
    floor + u128::from(up)
}

/// A two's-complement integer format of `bits` bits (1 to 64) that wraps around.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Int {
    /// Width in bits.
    pub bits: u32,
}

impl Int {
    /// int8.
    pub const I8: Int = Int { bits: 8 };
    /// int16.
    pub const I16: Int = Int { bits: 16 };
    /// int32.
    pub const I32: Int = Int { bits: 32 };

    /// A width of 1 to 64 bits.
    pub fn new(bits: u32) -> Option<Int> {
        (1..=64).contains(&bits).then_some(Int { bits })
    }

    /// `v` reduced modulo 2^bits into [-2^(bits-1), 2^(bits-1)), as a register of this width
    /// holds it.
    pub fn wrap(self, v: i128) -> i64 {
        let s = 128 - self.bits;
        ((v << s) >> s) as i64
    }

    /// Smallest value.
    pub fn min(self) -> i64 {
        self.wrap(1i128 << (self.bits - 1))
    }

    /// Largest value.
    pub fn max(self) -> i64 {
        self.wrap((1i128 << (self.bits - 1)) - 1)
    }

    /// Whether `v` fits without wrapping.
    pub fn holds(self, v: i64) -> bool {
        i128::from(v) == i128::from(self.wrap(i128::from(v)))
    }
}

#[cfg(test)]
mod tests;
