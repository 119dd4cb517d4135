//! Histograms of latencies: exact count, sum, min and max, and percentiles within 0.8%.

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
