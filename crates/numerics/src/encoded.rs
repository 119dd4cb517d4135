//! `podsim numerics`: decimal values rounded to float32, encoded in a format and decoded
//! back, as JSON (serde) and text.

use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::{FORMAT_NAMES, Format, NumericsError, Rounding};

/// The values as `podsim numerics --json` prints them.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct NumericsOutput {
    /// The format's name.
    pub format: String,
    /// Each value given, in order.
    pub values: Vec<Encoded>,
}

/// One value, encoded.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Encoded {
    /// The value as given (text only).
    #[serde(skip)]
    pub text: String,
    /// The value rounded to float32.
    pub input: Number,
    /// The code, `0x` and as many hex digits as the format has nibbles.
    pub bits: String,
    /// The code's exact value.
    pub decoded: Number,
}

/// A number that serializes as itself, or as the string `nan`, `inf` or `-inf`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Number(pub f64);

impl serde::Serialize for Number {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let x = self.0;
        if x.is_nan() {
            s.serialize_str("nan")
        } else if x.is_infinite() {
            s.serialize_str(if x > 0.0 { "inf" } else { "-inf" })
        } else {
            s.serialize_f64(x)
        }
    }
}

/// Encode `values` (decimal, `inf`, `-inf` or `nan`) in the format named `format`, rounding
/// `nearest` (ties to even) or `stochastic` (from `seed`), saturating or not. A refusal
/// names its flag: `--format`, `--seed`, `--rounding` or the argument `VALUE`.
pub fn encode(
    format: &str,
    rounding: &str,
    seed: Option<u64>,
    saturate: bool,
    values: &[String],
) -> Result<NumericsOutput, NumericsError> {
    let input = |flag, why: String| NumericsError::Input { flag, why };
    let f = Format::parse(format).map_err(|e| input("--format", e.to_string()))?;
    let mut rng = match (rounding, seed) {
        ("nearest", None) => None,
        ("nearest", Some(_)) => {
            return Err(input(
                "--seed",
                "only stochastic rounding draws random numbers".into(),
            ));
        }
        ("stochastic", Some(s)) => Some(Xoshiro256PlusPlus::seed_from_u64(s)),
        ("stochastic", None) => {
            return Err(input("--seed", "stochastic rounding needs a seed".into()));
        }
        (other, _) => {
            return Err(input(
                "--rounding",
                format!("`{other}`: expected nearest or stochastic"),
            ));
        }
    };
    let digits = (f.bits() as usize).div_ceil(4);
    let mut out = Vec::new();
    for v in values {
        let x: f32 = v.trim().parse().map_err(|_| {
            input(
                "VALUE",
                format!("`{v}` is not a number (decimal, inf, -inf or nan)"),
            )
        })?;
        let rounding = match rng.as_mut() {
            Some(r) => Rounding::Stochastic(r),
            None => Rounding::NearestEven,
        };
        let code = f
            .encode_f32(x, rounding, saturate)
            .map_err(|e| input("VALUE", format!("{v}: {e}")))?;
        out.push(Encoded {
            text: v.clone(),
            input: Number(f64::from(x)),
            bits: format!("0x{code:0digits$x}"),
            decoded: Number(f.decode(code)),
        });
    }
    Ok(NumericsOutput {
        format: f.to_string(),
        values: out,
    })
}

impl NumericsOutput {
    /// The text `podsim numerics` prints: the format, then a line a value.
    pub fn text(&self) -> String {
        let mut out = format!("{} ({FORMAT_NAMES})\n", self.format);
        for e in &self.values {
            out.push_str(&format!(
                "{:>16} (float32 {}) -> {} = {}\n",
                e.text, e.input.0, e.bits, e.decoded.0
            ));
        }
        out
    }
}
