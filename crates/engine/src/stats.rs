//! The statistics registry: counters and histograms under dotted paths, each with a unit and a
//! description (`net.router.3.port.east.flits`, unit `flits`).
//!
//! Registration returns a small handle; recording through it is an index into a vector.
//! Reports list statistics sorted by path, so output does not depend on registration order.

use std::collections::BTreeMap;
use std::fmt;

use crate::SimError;

/// Handle to a registered counter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CounterId(usize);

/// Handle to a registered histogram.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct HistogramId(usize);

/// Significant bits kept per histogram bucket: values below 2^(BITS+1) are exact, larger ones
/// fall in buckets 1/2^BITS of their magnitude wide (relative error below 0.8%).
const BITS: u32 = 7;
const SUB: u64 = 1 << BITS;

/// A log-linear histogram of non-negative integer samples with exact count, sum, min and max.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Histogram {
    buckets: Vec<u64>,
    count: u64,
    sum: u128,
    min: u64,
    max: u64,
}

fn bucket_of(v: u64) -> usize {
    if v < 2 * SUB {
        v as usize
    } else {
        let msb = 63 - v.leading_zeros();
        let e = msb - BITS;
        let m = v >> e;
        (SUB * (u64::from(e) + 1) + (m - SUB)) as usize
    }
}

fn bucket_floor(i: usize) -> u64 {
    let i = i as u64;
    if i < 2 * SUB {
        i
    } else {
        let e = i / SUB - 1;
        let m = i % SUB + SUB;
        m << e
    }
}

impl Histogram {
    /// An empty histogram.
    pub fn new() -> Self {
        Self::default()
    }

    /// Add one sample.
    pub fn record(&mut self, v: u64) {
        let b = bucket_of(v);
        if self.buckets.len() <= b {
            self.buckets.resize(b + 1, 0);
        }
        self.buckets[b] += 1;
        if self.count == 0 || v < self.min {
            self.min = v;
        }
        self.max = self.max.max(v);
        self.count += 1;
        self.sum += u128::from(v);
    }

    /// Number of samples.
    pub fn count(&self) -> u64 {
        self.count
    }
    /// Smallest sample (0 when empty).
    pub fn min(&self) -> u64 {
        self.min
    }
    /// Largest sample (0 when empty).
    pub fn max(&self) -> u64 {
        self.max
    }
    /// Exact mean (0 when empty).
    pub fn mean(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum as f64 / self.count as f64
        }
    }

    /// The nearest-rank percentile `q` in `[0, 1]`: the smallest recorded bucket whose cumulative
    /// count reaches `ceil(q × count)`, reported as that bucket's lower bound clamped to
    /// `[min, max]`. Exact for samples below 256; otherwise low by less than 0.8%.
    pub fn percentile(&self, q: f64) -> u64 {
        if self.count == 0 {
            return 0;
        }
        let rank = ((q.clamp(0.0, 1.0) * self.count as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (i, &n) in self.buckets.iter().enumerate() {
            seen += n;
            if seen >= rank {
                return bucket_floor(i).clamp(self.min, self.max);
            }
        }
        self.max
    }
}

/// What a statistic holds.
#[derive(Debug, Clone, PartialEq)]
pub enum StatValue {
    /// A monotone count.
    Counter(u64),
    /// A distribution of samples.
    Histogram(Histogram),
}

/// One registered statistic.
#[derive(Debug, Clone, PartialEq)]
pub struct Stat {
    /// Dotted path, e.g. `net.link.3.flits`.
    pub path: String,
    /// Unit of the values, e.g. `flits`, `ps`.
    pub unit: String,
    /// One sentence saying what is counted.
    pub description: String,
    /// The value.
    pub value: StatValue,
}

/// All statistics of one simulation.
#[derive(Debug, Clone, Default)]
pub struct Stats {
    stats: Vec<Stat>,
    by_path: BTreeMap<String, usize>,
}

fn check_path(path: &str) -> Result<(), SimError> {
    let ok = !path.is_empty()
        && path.split('.').all(|seg| {
            !seg.is_empty()
                && seg
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        });
    if ok {
        Ok(())
    } else {
        Err(SimError::InvalidConfig {
            file: "<statistics>".into(),
            key: path.into(),
            why: "a statistic path is dot-separated non-empty names of letters, digits, `_` or `-`"
                .into(),
        })
    }
}

impl Stats {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    fn register(
        &mut self,
        path: &str,
        unit: &str,
        description: &str,
        value: StatValue,
    ) -> Result<usize, SimError> {
        check_path(path)?;
        if self.by_path.contains_key(path) {
            return Err(SimError::InvalidConfig {
                file: "<statistics>".into(),
                key: path.into(),
                why: "this statistic is already registered".into(),
            });
        }
        let i = self.stats.len();
        self.stats.push(Stat {
            path: path.into(),
            unit: unit.into(),
            description: description.into(),
            value,
        });
        self.by_path.insert(path.into(), i);
        Ok(i)
    }

    /// Register a counter starting at zero.
    pub fn counter(
        &mut self,
        path: &str,
        unit: &str,
        description: &str,
    ) -> Result<CounterId, SimError> {
        self.register(path, unit, description, StatValue::Counter(0))
            .map(CounterId)
    }

    /// Register an empty histogram.
    pub fn histogram(
        &mut self,
        path: &str,
        unit: &str,
        description: &str,
    ) -> Result<HistogramId, SimError> {
        self.register(
            path,
            unit,
            description,
            StatValue::Histogram(Histogram::new()),
        )
        .map(HistogramId)
    }

    /// Add `n` to a counter.
    pub fn add(&mut self, id: CounterId, n: u64) {
        if let StatValue::Counter(c) = &mut self.stats[id.0].value {
            *c += n;
        }
    }

    /// Record one sample in a histogram.
    pub fn record(&mut self, id: HistogramId, v: u64) {
        if let StatValue::Histogram(h) = &mut self.stats[id.0].value {
            h.record(v);
        }
    }

    /// The statistic at `path`.
    pub fn get(&self, path: &str) -> Option<&Stat> {
        self.by_path.get(path).map(|&i| &self.stats[i])
    }

    /// All statistics, sorted by path.
    pub fn iter(&self) -> impl Iterator<Item = &Stat> {
        self.by_path.values().map(|&i| &self.stats[i])
    }
}

impl fmt::Display for Stats {
    /// One line per statistic: path, value(s), unit, description.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for s in self.iter() {
            match &s.value {
                StatValue::Counter(c) => writeln!(
                    f,
                    "{:<48} {:>14} {:<8} # {}",
                    s.path, c, s.unit, s.description
                )?,
                StatValue::Histogram(h) => writeln!(
                    f,
                    "{:<48} n={} mean={:.2} p50={} p99={} max={} {} # {}",
                    s.path,
                    h.count(),
                    h.mean(),
                    h.percentile(0.5),
                    h.percentile(0.99),
                    h.max(),
                    s.unit,
                    s.description
                )?,
            }
        }
        Ok(())
    }
}
