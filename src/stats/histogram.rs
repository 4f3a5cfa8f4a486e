//! A lock-free latency histogram over nanoseconds and its summary.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Duration;

/// Sub-buckets per power of two: 8 bounds a quantile's relative error by 1/8.
const SUB_BITS: u32 = 3;
const SUB: usize = 1 << SUB_BITS;
/// Values below `SUB` get one bucket each; above, `SUB` buckets per power of two up to 2^64.
const BUCKETS: usize = SUB + (64 - SUB_BITS as usize) * SUB;

/// A latency histogram over nanoseconds: fixed log-spaced buckets (8 per power of two), so
/// recording is a handful of relaxed atomic adds and never allocates or locks.
pub struct Histogram {
    buckets: Box<[AtomicU64]>,
    count: AtomicU64,
    sum: AtomicU64,
    max: AtomicU64,
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram {
            buckets: (0..BUCKETS).map(|_| AtomicU64::new(0)).collect(),
            count: AtomicU64::new(0),
            sum: AtomicU64::new(0),
            max: AtomicU64::new(0),
        }
    }
}

fn bucket_of(v: u64) -> usize {
    if v < SUB as u64 {
        return v as usize;
    }
    let log = 63 - v.leading_zeros(); // ≥ SUB_BITS
    let sub = ((v >> (log - SUB_BITS)) as usize) & (SUB - 1);
    SUB + (log - SUB_BITS) as usize * SUB + sub
}

/// The largest value that falls in bucket `b`.
fn bucket_upper(b: usize) -> u64 {
    if b < SUB {
        return b as u64;
    }
    let log = (b - SUB) / SUB + SUB_BITS as usize;
    let sub = ((b - SUB) % SUB) as u64;
    let low = (1u64 << log) | (sub << (log - SUB_BITS as usize));
    low.saturating_add((1u64 << (log - SUB_BITS as usize)) - 1)
}

impl Histogram {
    /// Records one observation.
    pub fn record(&self, d: Duration) {
        self.record_ns(d.as_nanos().min(u64::MAX as u128) as u64);
    }

    /// Records one observation in nanoseconds.
    pub fn record_ns(&self, ns: u64) {
        self.buckets[bucket_of(ns)].fetch_add(1, Relaxed);
        self.count.fetch_add(1, Relaxed);
        self.sum.fetch_add(ns, Relaxed);
        self.max.fetch_max(ns, Relaxed);
    }

    /// Observations so far.
    pub fn count(&self) -> u64 {
        self.count.load(Relaxed)
    }

    /// Count, sum, p50, p99 and max. Quantiles are the upper bound of their bucket (at most
    /// 1/8 above the true value), clamped to the maximum seen.
    pub fn snapshot(&self) -> HistogramSnapshot {
        let counts: Vec<u64> = self.buckets.iter().map(|b| b.load(Relaxed)).collect();
        // The bucket total, not `count`, so that a quantile is consistent with the buckets
        // even while another thread is between its two adds.
        let total: u64 = counts.iter().sum();
        let max = self.max.load(Relaxed);
        let quantile = |q: f64| -> u64 {
            if total == 0 {
                return 0;
            }
            let rank = ((q * total as f64).ceil() as u64).clamp(1, total);
            let mut seen = 0;
            for (b, &c) in counts.iter().enumerate() {
                seen += c;
                if seen >= rank {
                    return bucket_upper(b).min(max);
                }
            }
            max
        };
        HistogramSnapshot {
            count: self.count.load(Relaxed),
            sum_ns: self.sum.load(Relaxed),
            p50_ns: quantile(0.50),
            p99_ns: quantile(0.99),
            max_ns: max,
        }
    }
}

/// A histogram's summary.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct HistogramSnapshot {
    /// Observations.
    pub count: u64,
    /// Their sum, in nanoseconds.
    pub sum_ns: u64,
    /// Median, in nanoseconds.
    pub p50_ns: u64,
    /// 99th percentile, in nanoseconds.
    pub p99_ns: u64,
    /// Largest, in nanoseconds.
    pub max_ns: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_monotone_and_cover_their_values() {
        let mut last = 0;
        for v in (0..5000u64).chain([1 << 20, (1 << 20) + 12345, u64::MAX / 3, u64::MAX]) {
            let b = bucket_of(v);
            assert!(b < BUCKETS);
            assert!(b >= last || v >= 5000, "bucket order at {v}");
            last = b;
            assert!(bucket_upper(b) >= v, "upper bound of {v}'s bucket");
            if b > 0 {
                assert!(bucket_upper(b - 1) < v, "{v} belongs to a lower bucket");
            }
        }
    }

    #[test]
    fn histogram_quantiles_within_an_eighth() {
        let h = Histogram::default();
        for v in 1..=1000u64 {
            h.record_ns(v * 1000);
        }
        let s = h.snapshot();
        assert_eq!(s.count, 1000);
        assert_eq!(s.sum_ns, 1000 * 1001 / 2 * 1000);
        assert_eq!(s.max_ns, 1_000_000);
        let near = |got: u64, want: u64| got >= want && got <= want + want / 8;
        assert!(near(s.p50_ns, 500_000), "p50 {}", s.p50_ns);
        assert!(near(s.p99_ns, 990_000), "p99 {}", s.p99_ns);
        assert_eq!(
            Histogram::default().snapshot(),
            HistogramSnapshot::default()
        );
    }
}
