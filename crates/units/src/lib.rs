//! Physical quantities of podsim as exact integer newtypes.
//!
//! * [`SimTime`] is an absolute instant and [`SimDuration`] a span, both in integer picoseconds.
//! * [`Cycles`] counts clock edges of one [`ClockDomain`]; it never converts to time except through
//!   that domain, whose rounding rule is documented on [`ClockDomain`].
//! * [`Bytes`], [`Bandwidth`] (bytes per second), [`Frequency`] (hertz), [`Flops`] and [`FlopRate`].
//!
//! Text such as `"50 GB/s"`, `"12.8 GiB/s"`, `"28.05 Gb/s"`, `"0.49 us"`, `"500ns"`, `"1.05 GHz"`
//! or `"4 KiB"` is parsed here and only here, with [`std::str::FromStr`]; errors quote the text.
//! Decimal prefixes (k, M, G, T, P) are powers of 1000, binary ones (Ki, Mi, Gi, Ti) powers of 1024,
//! and a lower-case `b` means bits. `Display` prints a string that parses back to the same value.
//!
//! Architecture invariant: this crate knows nothing about simulation, networks or file formats.

mod quantity;
mod request;
pub mod table;

pub use request::RequestError;

use std::fmt;
use std::ops::{Add, AddAssign, Sub};
use std::str::FromStr;

use quantity::{Rounding, UnitDef, display_scaled, exact_decimal, parse_quantity};

/// Why a quantity could not be read from text; the message quotes the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnitError {
    /// The text as given.
    pub text: String,
    /// What kind of quantity was expected ("bandwidth", "time", ...).
    pub what: &'static str,
    /// Why it was rejected.
    pub why: String,
}

impl UnitError {
    fn new(text: &str, what: &'static str, why: &str) -> Self {
        UnitError {
            text: text.to_string(),
            what,
            why: why.to_string(),
        }
    }
}

impl fmt::Display for UnitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "`{}` is not a valid {}: {}",
            self.text, self.what, self.why
        )
    }
}

impl std::error::Error for UnitError {}

const PS_PER_S: u64 = 1_000_000_000_000;

const TIME_UNITS: &[UnitDef] = &[
    UnitDef {
        names: &["ps"],
        num: 1,
        den: 1,
    },
    UnitDef {
        names: &["ns"],
        num: 1_000,
        den: 1,
    },
    UnitDef {
        names: &["us", "µs", "μs"],
        num: 1_000_000,
        den: 1,
    },
    UnitDef {
        names: &["ms"],
        num: 1_000_000_000,
        den: 1,
    },
    UnitDef {
        names: &["s"],
        num: PS_PER_S as u128,
        den: 1,
    },
];
const TIME_SCALES: &[(u64, &str)] = &[
    (PS_PER_S, "s"),
    (1_000_000_000, "ms"),
    (1_000_000, "us"),
    (1_000, "ns"),
    (1, "ps"),
];

macro_rules! time_type {
    ($(#[$m:meta])* $name:ident, $what:literal) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
        pub struct $name(u64);

        impl $name {
            /// Zero picoseconds.
            pub const ZERO: Self = $name(0);
            /// The largest representable value (about 213 days).
            pub const MAX: Self = $name(u64::MAX);
            /// From integer picoseconds.
            pub const fn from_ps(ps: u64) -> Self {
                $name(ps)
            }
            /// From integer nanoseconds (saturating).
            pub const fn from_ns(ns: u64) -> Self {
                $name(ns.saturating_mul(1_000))
            }
            /// In integer picoseconds.
            pub const fn as_ps(self) -> u64 {
                self.0
            }
            /// In seconds, as a float for reports.
            pub fn as_secs_f64(self) -> f64 {
                self.0 as f64 / PS_PER_S as f64
            }
        }

        impl FromStr for $name {
            type Err = UnitError;
            /// Accepts `ps`, `ns`, `us` (or `µs`), `ms`, `s`; the value must be a whole number of ps.
            fn from_str(s: &str) -> Result<Self, UnitError> {
                parse_quantity(s, $what, TIME_UNITS, None, Rounding::Exact).map($name)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&display_scaled(self.0, TIME_SCALES))
            }
        }
    };
}

time_type!(
    /// An absolute instant of simulated time, in integer picoseconds since the start.
    SimTime,
    "time"
);
time_type!(
    /// A span of simulated time, in integer picoseconds.
    SimDuration,
    "duration"
);

impl Add<SimDuration> for SimTime {
    type Output = SimTime;
    /// Saturates at [`SimTime::MAX`] instead of wrapping.
    fn add(self, d: SimDuration) -> SimTime {
        SimTime(self.0.saturating_add(d.0))
    }
}

impl AddAssign<SimDuration> for SimTime {
    fn add_assign(&mut self, d: SimDuration) {
        *self = *self + d;
    }
}

impl Sub for SimTime {
    type Output = SimDuration;
    /// The span between two instants, zero if `other` is later.
    fn sub(self, other: SimTime) -> SimDuration {
        SimDuration(self.0.saturating_sub(other.0))
    }
}

impl Add for SimDuration {
    type Output = SimDuration;
    /// Saturating.
    fn add(self, d: SimDuration) -> SimDuration {
        SimDuration(self.0.saturating_add(d.0))
    }
}

impl SimDuration {
    /// `self * n`, saturating.
    pub const fn times(self, n: u64) -> SimDuration {
        SimDuration(self.0.saturating_mul(n))
    }
}

/// A count of clock cycles. Converted to time only through a [`ClockDomain`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Cycles(pub u64);

impl fmt::Display for Cycles {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} cycles", self.0)
    }
}

const FREQ_UNITS: &[UnitDef] = &[
    UnitDef {
        names: &["Hz"],
        num: 1,
        den: 1,
    },
    UnitDef {
        names: &["kHz"],
        num: 1_000,
        den: 1,
    },
    UnitDef {
        names: &["MHz"],
        num: 1_000_000,
        den: 1,
    },
    UnitDef {
        names: &["GHz"],
        num: 1_000_000_000,
        den: 1,
    },
    UnitDef {
        names: &["THz"],
        num: 1_000_000_000_000,
        den: 1,
    },
];

/// A clock frequency in integer hertz.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Frequency(u64);

impl Frequency {
    /// From integer hertz; `None` for zero.
    pub const fn from_hz(hz: u64) -> Option<Self> {
        if hz == 0 { None } else { Some(Frequency(hz)) }
    }
    /// From integer megahertz; `None` for zero or overflow.
    pub const fn from_mhz(mhz: u64) -> Option<Self> {
        match mhz.checked_mul(1_000_000) {
            Some(hz) => Self::from_hz(hz),
            None => None,
        }
    }
    /// In hertz.
    pub const fn as_hz(self) -> u64 {
        self.0
    }
}

impl FromStr for Frequency {
    type Err = UnitError;
    /// Accepts `Hz`, `kHz`, `MHz`, `GHz`, `THz`; a whole, non-zero number of hertz.
    fn from_str(s: &str) -> Result<Self, UnitError> {
        let hz = parse_quantity(s, "frequency", FREQ_UNITS, None, Rounding::Exact)?;
        Frequency::from_hz(hz).ok_or_else(|| UnitError::new(s, "frequency", "it is zero"))
    }
}

impl fmt::Display for Frequency {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&display_scaled(
            self.0,
            &[
                (1_000_000_000_000, "THz"),
                (1_000_000_000, "GHz"),
                (1_000_000, "MHz"),
                (1_000, "kHz"),
                (1, "Hz"),
            ],
        ))
    }
}

/// A clock domain: turns cycles into time and back.
///
/// **Rounding rule.** Clock edge `n` (counting from edge 0 at the domain's time zero) lies at
/// `round(n × 10¹² / f)` picoseconds, halves rounded up, computed exactly in 128-bit integers.
/// Every edge is therefore within half a picosecond of its true time and no error accumulates
/// over long runs; consecutive edges are `floor` or `ceil` of the true period apart
/// (1.05 GHz: 952 or 953 ps; 425 MHz: 2352 or 2353 ps; 2 GHz: exactly 500 ps).
/// [`ClockDomain::period`] is the nominal period, `round(10¹² / f)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ClockDomain {
    freq: Frequency,
}

impl ClockDomain {
    /// A domain ticking at `freq`.
    pub const fn new(freq: Frequency) -> Self {
        ClockDomain { freq }
    }
    /// The domain's frequency.
    pub const fn frequency(self) -> Frequency {
        self.freq
    }
    /// The nominal period, rounded to the nearest picosecond (halves up).
    pub fn period(self) -> SimDuration {
        self.span_of(Cycles(1))
    }
    /// The span covered by `n` cycles: the time of edge `n` measured from edge 0.
    pub fn span_of(self, n: Cycles) -> SimDuration {
        let f = u128::from(self.freq.0);
        let ps = (u128::from(n.0) * u128::from(PS_PER_S) * 2 + f) / (2 * f);
        SimDuration(u64::try_from(ps).unwrap_or(u64::MAX))
    }
    /// The instant of edge `n`.
    pub fn time_of(self, n: Cycles) -> SimTime {
        SimTime(self.span_of(n).0)
    }
    /// How many edges after edge 0 have happened by `t` (the largest `n` with `time_of(n) <= t`).
    pub fn cycles_at(self, t: SimTime) -> Cycles {
        // time_of(n) <= t  <=>  n * 2e12 < (2t + 1) * f  (see the rounding rule).
        let f = u128::from(self.freq.0);
        let lhs = (2 * u128::from(t.0) + 1) * f;
        let two_ps = 2 * u128::from(PS_PER_S);
        let n = lhs.div_ceil(two_ps) - 1;
        Cycles(u64::try_from(n).unwrap_or(u64::MAX))
    }
    /// The fewest whole cycles that last at least `d`.
    pub fn cycles_covering(self, d: SimDuration) -> Cycles {
        let at = self.cycles_at(SimTime(d.0));
        if self.span_of(at) >= d {
            at
        } else {
            Cycles(at.0 + 1)
        }
    }
}

const BYTE_UNITS: &[UnitDef] = &[
    UnitDef {
        names: &["B"],
        num: 1,
        den: 1,
    },
    UnitDef {
        names: &["kB", "KB"],
        num: 1_000,
        den: 1,
    },
    UnitDef {
        names: &["MB"],
        num: 1_000_000,
        den: 1,
    },
    UnitDef {
        names: &["GB"],
        num: 1_000_000_000,
        den: 1,
    },
    UnitDef {
        names: &["TB"],
        num: 1_000_000_000_000,
        den: 1,
    },
    UnitDef {
        names: &["PB"],
        num: 1_000_000_000_000_000,
        den: 1,
    },
    UnitDef {
        names: &["KiB"],
        num: 1 << 10,
        den: 1,
    },
    UnitDef {
        names: &["MiB"],
        num: 1 << 20,
        den: 1,
    },
    UnitDef {
        names: &["GiB"],
        num: 1 << 30,
        den: 1,
    },
    UnitDef {
        names: &["TiB"],
        num: 1 << 40,
        den: 1,
    },
    UnitDef {
        names: &["PiB"],
        num: 1 << 50,
        den: 1,
    },
];
const BYTE_UNIT_PLAIN: UnitDef = UnitDef {
    names: &["B"],
    num: 1,
    den: 1,
};

/// A size in whole bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Bytes(pub u64);

impl Bytes {
    /// In bytes.
    pub const fn get(self) -> u64 {
        self.0
    }
}

impl FromStr for Bytes {
    type Err = UnitError;
    /// Accepts `B`, `kB`, `MB`, `GB`, `TB`, `PB` (powers of 1000) and `KiB` .. `PiB` (powers of
    /// 1024); a bare number means bytes. The value must be a whole number of bytes.
    fn from_str(s: &str) -> Result<Self, UnitError> {
        parse_quantity(
            s,
            "size",
            BYTE_UNITS,
            Some(&BYTE_UNIT_PLAIN),
            Rounding::Exact,
        )
        .map(Bytes)
    }
}

impl fmt::Display for Bytes {
    /// The shorter of the exact binary form (`4 KiB`, `1.5 KiB`, at most three decimals) and the
    /// exact decimal form (`440 MB`, `1.234 kB`); binary on a tie.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let decimal = display_scaled(self.0, DECIMAL_SCALES_B);
        for (div, suffix) in [
            (1u64 << 50, "PiB"),
            (1 << 40, "TiB"),
            (1 << 30, "GiB"),
            (1 << 20, "MiB"),
            (1 << 10, "KiB"),
        ] {
            if self.0 >= div
                && let Some(s) = exact_decimal(self.0, div, 3)
            {
                let binary = format!("{s} {suffix}");
                if binary.len() <= decimal.len() {
                    return f.write_str(&binary);
                }
                break;
            }
        }
        f.write_str(&decimal)
    }
}

const DECIMAL_SCALES_B: &[(u64, &str)] = &[
    (1_000_000_000_000_000, "PB"),
    (1_000_000_000_000, "TB"),
    (1_000_000_000, "GB"),
    (1_000_000, "MB"),
    (1_000, "kB"),
    (1, "B"),
];

const BW_UNITS: &[UnitDef] = &[
    UnitDef {
        names: &["B/s"],
        num: 1,
        den: 1,
    },
    UnitDef {
        names: &["kB/s", "KB/s"],
        num: 1_000,
        den: 1,
    },
    UnitDef {
        names: &["MB/s"],
        num: 1_000_000,
        den: 1,
    },
    UnitDef {
        names: &["GB/s"],
        num: 1_000_000_000,
        den: 1,
    },
    UnitDef {
        names: &["TB/s"],
        num: 1_000_000_000_000,
        den: 1,
    },
    UnitDef {
        names: &["PB/s"],
        num: 1_000_000_000_000_000,
        den: 1,
    },
    UnitDef {
        names: &["KiB/s"],
        num: 1 << 10,
        den: 1,
    },
    UnitDef {
        names: &["MiB/s"],
        num: 1 << 20,
        den: 1,
    },
    UnitDef {
        names: &["GiB/s"],
        num: 1 << 30,
        den: 1,
    },
    UnitDef {
        names: &["TiB/s"],
        num: 1 << 40,
        den: 1,
    },
    UnitDef {
        names: &["b/s", "bps"],
        num: 1,
        den: 8,
    },
    UnitDef {
        names: &["kb/s", "Kb/s", "kbps", "Kbps"],
        num: 1_000,
        den: 8,
    },
    UnitDef {
        names: &["Mb/s", "Mbps"],
        num: 1_000_000,
        den: 8,
    },
    UnitDef {
        names: &["Gb/s", "Gbps"],
        num: 1_000_000_000,
        den: 8,
    },
    UnitDef {
        names: &["Tb/s", "Tbps"],
        num: 1_000_000_000_000,
        den: 8,
    },
];

/// A bandwidth in whole bytes per second.
///
/// Parsing accepts decimal byte units (`GB/s` = 10⁹ B/s), binary ones (`GiB/s` = 2³⁰ B/s) and bit
/// units (`Gb/s` = 10⁹/8 B/s). A value that is not a whole number of B/s (`12.8 GiB/s` is
/// 13,743,895,347.2 B/s) is rounded to the nearest B/s, halves up: an error below 10⁻⁹ of any
/// bandwidth of 1 GB/s or more.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Bandwidth(u64);

impl Bandwidth {
    /// From bytes per second; `None` for zero (a link that carries nothing is not a link).
    pub const fn from_bytes_per_s(bps: u64) -> Option<Self> {
        if bps == 0 { None } else { Some(Bandwidth(bps)) }
    }
    /// From whole decimal gigabytes per second; `None` for zero or overflow.
    pub const fn from_gbps(gb: u64) -> Option<Self> {
        match gb.checked_mul(1_000_000_000) {
            Some(b) => Self::from_bytes_per_s(b),
            None => None,
        }
    }
    /// In bytes per second.
    pub const fn bytes_per_s(self) -> u64 {
        self.0
    }
    /// The time to move `bytes` at this rate, rounded up to a whole picosecond.
    pub fn transfer_time(self, bytes: Bytes) -> SimDuration {
        let ps = (u128::from(bytes.0) * u128::from(PS_PER_S)).div_ceil(u128::from(self.0));
        SimDuration(u64::try_from(ps).unwrap_or(u64::MAX))
    }
}

impl FromStr for Bandwidth {
    type Err = UnitError;
    fn from_str(s: &str) -> Result<Self, UnitError> {
        let b = parse_quantity(s, "bandwidth", BW_UNITS, None, Rounding::Nearest)?;
        Bandwidth::from_bytes_per_s(b).ok_or_else(|| UnitError::new(s, "bandwidth", "it is zero"))
    }
}

impl fmt::Display for Bandwidth {
    /// Decimal byte units, exact: `50 GB/s`, `6.8 GB/s`, `13.743895347 GB/s`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&display_scaled(
            self.0,
            &[
                (1_000_000_000_000_000, "PB/s"),
                (1_000_000_000_000, "TB/s"),
                (1_000_000_000, "GB/s"),
                (1_000_000, "MB/s"),
                (1_000, "kB/s"),
                (1, "B/s"),
            ],
        ))
    }
}

const FLOP_SCALES: &[(u64, &str)] = &[
    (1_000_000_000_000_000_000, "EFLOP"),
    (1_000_000_000_000_000, "PFLOP"),
    (1_000_000_000_000, "TFLOP"),
    (1_000_000_000, "GFLOP"),
    (1_000_000, "MFLOP"),
    (1_000, "kFLOP"),
    (1, "FLOP"),
];

fn flop_units(suffix: &'static [&'static str; 7]) -> [UnitDef; 7] {
    const F: [u128; 7] = [
        1,
        1_000,
        1_000_000,
        1_000_000_000,
        1_000_000_000_000,
        1_000_000_000_000_000,
        1_000_000_000_000_000_000,
    ];
    std::array::from_fn(|i| UnitDef {
        names: std::slice::from_ref(&suffix[i]),
        num: F[i],
        den: 1,
    })
}

/// A count of floating-point (or integer multiply-accumulate-half) operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Flops(pub u64);

impl FromStr for Flops {
    type Err = UnitError;
    /// Accepts `FLOP`, `kFLOP`, `MFLOP`, `GFLOP`, `TFLOP`, `PFLOP`, `EFLOP`; a whole number.
    fn from_str(s: &str) -> Result<Self, UnitError> {
        const N: [&str; 7] = ["FLOP", "kFLOP", "MFLOP", "GFLOP", "TFLOP", "PFLOP", "EFLOP"];
        parse_quantity(s, "operation count", &flop_units(&N), None, Rounding::Exact).map(Flops)
    }
}

impl fmt::Display for Flops {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&display_scaled(self.0, FLOP_SCALES))
    }
}

/// A compute rate in whole operations per second.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct FlopRate(pub u64);

impl FromStr for FlopRate {
    type Err = UnitError;
    /// Accepts `FLOP/s` .. `EFLOP/s` (powers of 1000); a whole number per second.
    fn from_str(s: &str) -> Result<Self, UnitError> {
        const N: [&str; 7] = [
            "FLOP/s", "kFLOP/s", "MFLOP/s", "GFLOP/s", "TFLOP/s", "PFLOP/s", "EFLOP/s",
        ];
        parse_quantity(s, "compute rate", &flop_units(&N), None, Rounding::Exact).map(FlopRate)
    }
}

impl fmt::Display for FlopRate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = display_scaled(self.0, FLOP_SCALES);
        write!(f, "{s}/s")
    }
}

/// The Levenshtein edit distance between two strings (for "did you mean" suggestions).
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, &cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != cb))
                .min(prev[j + 1] + 1)
                .min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// The candidate nearest to `word` by edit distance (ties to the earlier candidate).
pub fn nearest<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    candidates
        .iter()
        .copied()
        .min_by_key(|c| edit_distance(word, c))
}

#[cfg(test)]
mod tests;
