//! How long each device has been busy, over the engine's life and over a recent window.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Instant;

use super::DeviceStatsSnapshot;

/// Seconds of history the recent busy fraction covers.
pub const BUSY_WINDOW_SECS: u64 = 10;
// > BUSY_WINDOW_SECS + 1, so the window never reads a bucket being reused.
const RING: usize = 16;

struct SecondBucket {
    second: AtomicU64,
    busy_ns: AtomicU64,
}

/// How long one device has been busy (its device mutex held), over the engine's life and
/// over the last [`BUSY_WINDOW_SECS`] seconds.
///
/// Only the holder of the device mutex writes, so writes never race one another; readers
/// may see a hold half-recorded, which costs a snapshot a few microseconds of accuracy.
pub struct BusyMeter {
    epoch: Instant,
    busy_ns: AtomicU64,
    /// Start of the hold in progress, in ns since `epoch`, plus one; 0 when idle.
    held_since: AtomicU64,
    ring: [SecondBucket; RING],
    partitions: AtomicU64,
}

impl BusyMeter {
    /// A meter whose life starts at `epoch`.
    pub fn new(epoch: Instant) -> Self {
        BusyMeter {
            epoch,
            busy_ns: AtomicU64::new(0),
            held_since: AtomicU64::new(0),
            ring: std::array::from_fn(|_| SecondBucket {
                second: AtomicU64::new(u64::MAX),
                busy_ns: AtomicU64::new(0),
            }),
            partitions: AtomicU64::new(0),
        }
    }

    fn ns(&self, t: Instant) -> u64 {
        t.saturating_duration_since(self.epoch).as_nanos() as u64
    }

    /// The device became busy at `t`.
    pub fn begin(&self, t: Instant) {
        self.held_since.store(self.ns(t) + 1, Relaxed);
    }

    /// The device, busy since `start`, became idle at `end`, having run one partition.
    pub fn end(&self, start: Instant, end: Instant) {
        let (s, e) = (self.ns(start), self.ns(end).max(self.ns(start)));
        self.busy_ns.fetch_add(e - s, Relaxed);
        self.partitions.fetch_add(1, Relaxed);
        // Spread the hold over the seconds it spans; older than the ring is never read.
        let first = (s / 1_000_000_000).max((e / 1_000_000_000).saturating_sub(RING as u64 - 1));
        for sec in first..=e / 1_000_000_000 {
            let lo = s.max(sec * 1_000_000_000);
            let hi = e.min((sec + 1) * 1_000_000_000);
            let b = &self.ring[sec as usize % RING];
            if b.second.load(Relaxed) != sec {
                b.busy_ns.store(0, Relaxed);
                b.second.store(sec, Relaxed);
            }
            b.busy_ns.fetch_add(hi.saturating_sub(lo), Relaxed);
        }
        self.held_since.store(0, Relaxed);
    }

    /// Busy and elapsed nanoseconds over the life and over the recent window, as of `now`.
    pub(super) fn snapshot(&self, now: Instant) -> DeviceStatsSnapshot {
        let now = self.ns(now);
        let held = match self.held_since.load(Relaxed) {
            0 => None,
            s => Some(s - 1),
        };
        let in_progress = |from: u64| held.map_or(0, |h| now.saturating_sub(h.max(from)));
        let sec_now = now / 1_000_000_000;
        // The last BUSY_WINDOW_SECS whole seconds and the current, partial one.
        let first_sec = sec_now.saturating_sub(BUSY_WINDOW_SECS);
        let window_start = first_sec * 1_000_000_000;
        let window_busy: u64 = self
            .ring
            .iter()
            .filter(|b| {
                let s = b.second.load(Relaxed);
                s >= first_sec && s <= sec_now
            })
            .map(|b| b.busy_ns.load(Relaxed))
            .sum();
        DeviceStatsSnapshot {
            busy_ns: self.busy_ns.load(Relaxed) + in_progress(0),
            life_ns: now,
            window_busy_ns: (window_busy + in_progress(window_start)).min(now - window_start),
            window_ns: now - window_start,
            partitions: self.partitions.load(Relaxed),
            ..DeviceStatsSnapshot::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn busy_meter_spreads_holds_over_seconds() {
        let epoch = Instant::now();
        let m = BusyMeter::new(epoch);
        let at = |ms: u64| epoch + Duration::from_millis(ms);
        m.begin(at(500));
        m.end(at(500), at(2_500));
        m.begin(at(3_000));
        m.end(at(3_000), at(3_250));
        let s = m.snapshot(at(4_000));
        assert_eq!(s.busy_ns, 2_250_000_000);
        assert_eq!(s.partitions, 2);
        assert_eq!(s.life_ns, 4_000_000_000);
        // The window starts at second 0 (the engine is younger than the window).
        assert_eq!(s.window_ns, 4_000_000_000);
        assert_eq!(s.window_busy_ns, 2_250_000_000);
        // 20 s later only the in-progress hold counts in the window, which starts at the
        // beginning of second 14.
        m.begin(at(23_000));
        let s = m.snapshot(at(24_500));
        assert_eq!(s.window_ns, 10_500_000_000);
        assert_eq!(s.window_busy_ns, 1_500_000_000);
        assert_eq!(s.busy_ns, 3_750_000_000);
    }
}
