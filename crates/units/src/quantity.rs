//! The shared text machinery: split `"12.8 GiB/s"` into an exact decimal and a unit,
//! scale it by the unit's rational factor, and print integers back with exact decimals.

use crate::UnitError;

/// A non-negative decimal read exactly from text: `mantissa / 10^scale`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Decimal {
    pub mantissa: u128,
    pub scale: u32,
}

/// One accepted unit spelling and its factor to the base unit, as a fraction `num / den`.
pub(crate) struct UnitDef {
    pub names: &'static [&'static str],
    pub num: u128,
    pub den: u128,
}

/// How a scaled value that is not a whole number of base units is treated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rounding {
    /// Reject it with an error quoting the text.
    Exact,
    /// Round to the nearest base unit, halves away from zero.
    Nearest,
}

/// Split `text` into its number and its unit, tolerating spaces around and between them.
fn split(text: &str) -> (&str, &str) {
    let t = text.trim();
    let end = t
        .char_indices()
        .find(|&(i, c)| {
            !(c.is_ascii_digit()
                || c == '.'
                || c == '-'
                || c == '+'
                || ((c == 'e' || c == 'E')
                    && t[i + 1..]
                        .starts_with(|n: char| n.is_ascii_digit() || n == '-' || n == '+')
                    && i > 0))
        })
        .map(|(i, _)| i)
        .unwrap_or(t.len());
    (t[..end].trim(), t[end..].trim())
}

/// Read a decimal such as `12.8`, `0.49`, `1e9` or `2.5E-3` exactly.
fn parse_decimal(num: &str, text: &str, what: &'static str) -> Result<Decimal, UnitError> {
    let bad = |why: &str| UnitError::new(text, what, why);
    if num.is_empty() {
        return Err(bad("a number is missing"));
    }
    if num.starts_with('-') {
        return Err(bad("it is negative"));
    }
    let num = num.strip_prefix('+').unwrap_or(num);
    let (body, exp) = match num.find(['e', 'E']) {
        Some(i) => {
            let e: i32 = num[i + 1..]
                .parse()
                .map_err(|_| bad("the exponent is not an integer"))?;
            (&num[..i], e)
        }
        None => (num, 0),
    };
    let (int, frac) = match body.split_once('.') {
        Some((a, b)) => (a, b),
        None => (body, ""),
    };
    if int.is_empty() && frac.is_empty()
        || !int.bytes().all(|b| b.is_ascii_digit())
        || !frac.bytes().all(|b| b.is_ascii_digit())
    {
        return Err(bad("the number is malformed"));
    }
    let mut mantissa: u128 = 0;
    for b in int.bytes().chain(frac.bytes()) {
        mantissa = mantissa
            .checked_mul(10)
            .and_then(|m| m.checked_add(u128::from(b - b'0')))
            .ok_or_else(|| bad("the number has too many digits"))?;
    }
    let mut scale = i64::try_from(frac.len()).map_err(|_| bad("the number is malformed"))?;
    scale -= i64::from(exp);
    while scale < 0 {
        mantissa = mantissa
            .checked_mul(10)
            .ok_or_else(|| bad("the number is too large"))?;
        scale += 1;
    }
    let scale = u32::try_from(scale).map_err(|_| bad("the number is malformed"))?;
    if scale > 30 {
        return Err(bad("the number has too many decimal places"));
    }
    Ok(Decimal { mantissa, scale })
}

/// Parse `text` as a number followed by one of `units`, returning the value in base units.
pub(crate) fn parse_quantity(
    text: &str,
    what: &'static str,
    units: &[UnitDef],
    default_unit: Option<&UnitDef>,
    rounding: Rounding,
) -> Result<u64, UnitError> {
    let (num, unit) = split(text);
    let dec = parse_decimal(num, text, what)?;
    let def = if unit.is_empty() {
        default_unit.ok_or_else(|| {
            UnitError::new(
                text,
                what,
                &format!("a unit is missing (expected one of {})", unit_list(units)),
            )
        })?
    } else {
        units
            .iter()
            .find(|u| u.names.contains(&unit))
            .ok_or_else(|| {
                UnitError::new(
                    text,
                    what,
                    &format!(
                        "`{unit}` is not a unit of {what} (expected one of {})",
                        unit_list(units)
                    ),
                )
            })?
    };
    let bad = |why: &str| UnitError::new(text, what, why);
    let num = dec
        .mantissa
        .checked_mul(def.num)
        .ok_or_else(|| bad("the value is too large"))?;
    let den = 10u128
        .checked_pow(dec.scale)
        .and_then(|p| p.checked_mul(def.den))
        .ok_or_else(|| bad("the number has too many decimal places"))?;
    let q = num / den;
    let r = num % den;
    let v = match rounding {
        Rounding::Exact if r != 0 => {
            return Err(bad(&format!(
                "it is not a whole number of {}",
                base_name(units)
            )));
        }
        Rounding::Exact => q,
        Rounding::Nearest => q + u128::from(r * 2 >= den),
    };
    u64::try_from(v).map_err(|_| bad("the value is too large"))
}

fn base_name(units: &[UnitDef]) -> &'static str {
    units
        .iter()
        .find(|u| u.num == 1 && u.den == 1)
        .map(|u| u.names[0])
        .unwrap_or("base units")
}

fn unit_list(units: &[UnitDef]) -> String {
    units
        .iter()
        .map(|u| format!("`{}`", u.names[0]))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Print `value / divisor` exactly, trimming trailing zeros; `divisor` must be a power of ten
/// or any integer whose quotient terminates within `max_decimals` digits.
/// Returns `None` when more than `max_decimals` digits would be needed.
pub(crate) fn exact_decimal(value: u64, divisor: u64, max_decimals: u32) -> Option<String> {
    let int = value / divisor;
    let mut rem = u128::from(value % divisor);
    let d = u128::from(divisor);
    let mut frac = String::new();
    let mut digits = 0;
    while rem != 0 {
        if digits == max_decimals {
            return None;
        }
        rem *= 10;
        frac.push(char::from(b'0' + u8::try_from(rem / d).unwrap_or(0)));
        rem %= d;
        digits += 1;
    }
    if frac.is_empty() {
        Some(int.to_string())
    } else {
        Some(format!("{int}.{frac}"))
    }
}

/// Print `value` in the largest of `scales` (divisor, suffix) not exceeding it, exactly.
/// `scales` runs from largest to smallest and ends with `(1, base)`.
pub(crate) fn display_scaled(value: u64, scales: &[(u64, &str)]) -> String {
    for &(div, suffix) in scales {
        if (value >= div || div == 1)
            && let Some(s) = exact_decimal(value, div, 24)
        {
            return format!("{s} {suffix}");
        }
    }
    format!("{value} {}", scales.last().map(|s| s.1).unwrap_or(""))
}
