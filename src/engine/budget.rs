//! The host-memory budget: admission control by RAII reservations.
//!
//! A job reserves, before it is queued, the bytes its partitions will hold: for each, the
//! evaluations (freed when the start phase ends), the witness (freed when the proof is
//! assembled) and a proof. Reservations split, so each share is released the moment its
//! memory is: the device worker drops the evaluations share right after the start phase, the
//! finalizer the rest. Releasing is a lock-free subtraction, because both of those run on
//! paths that must take no lock; admission waiters are woken through a channel.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::AcqRel, Ordering::Acquire};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender};

use crate::error::{Error, ErrorKind, Result};
use crate::stats::Stats;

/// Bytes a budget leaves to everything else when it is derived from the machine's memory:
/// the larger of 4 GiB and 10% of the total.
pub fn default_safety_margin(total: u64) -> u64 {
    (4u64 << 30).max(total / 10)
}

/// The machine's memory (`MemTotal` in `/proc/meminfo`), or `None` where unknown.
pub fn total_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// The default budget: total memory less [`default_safety_margin`]; where the total is
/// unknown, 16 GiB.
pub fn default_budget() -> u64 {
    match total_memory() {
        Some(t) => t.saturating_sub(default_safety_margin(t)).max(1 << 30),
        None => 16 << 30,
    }
}

struct Inner {
    limit: u64,
    reserved: AtomicU64,
    peak: AtomicU64,
    waiters: AtomicUsize,
    wake_tx: Sender<()>,
    wake_rx: Receiver<()>,
    stats: Option<Arc<Stats>>,
}

/// A memory budget of a fixed number of bytes; cheap to clone (shared).
#[derive(Clone)]
pub struct MemoryBudget {
    inner: Arc<Inner>,
}

/// Bytes held against a [`MemoryBudget`], given back when dropped.
#[must_use = "a reservation is released as soon as it is dropped"]
pub struct Reservation {
    inner: Arc<Inner>,
    bytes: u64,
}

impl std::fmt::Debug for Reservation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Reservation({} bytes)", self.bytes)
    }
}

/// Longest single sleep of an admission waiter. Wake-ups come through a channel; this bound
/// only covers a wake-up lost between a waiter's failed attempt and its sleep.
const WAIT_SLICE: Duration = Duration::from_millis(20);

impl MemoryBudget {
    /// A budget of `limit` bytes.
    pub fn new(limit: u64) -> Self {
        Self::build(limit, None)
    }

    /// A budget that mirrors its budget, reserved and peak bytes into `stats`.
    pub(crate) fn with_stats(limit: u64, stats: Arc<Stats>) -> Self {
        stats
            .memory_budget
            .store(limit, std::sync::atomic::Ordering::Relaxed);
        Self::build(limit, Some(stats))
    }

    fn build(limit: u64, stats: Option<Arc<Stats>>) -> Self {
        let (wake_tx, wake_rx) = crossbeam_channel::bounded(1);
        MemoryBudget {
            inner: Arc::new(Inner {
                limit,
                reserved: AtomicU64::new(0),
                peak: AtomicU64::new(0),
                waiters: AtomicUsize::new(0),
                wake_tx,
                wake_rx,
                stats,
            }),
        }
    }

    /// The budget in bytes.
    pub fn limit(&self) -> u64 {
        self.inner.limit
    }

    /// Bytes reserved now.
    pub fn reserved(&self) -> u64 {
        self.inner.reserved.load(Acquire)
    }

    /// Most bytes ever reserved at once.
    pub fn peak(&self) -> u64 {
        self.inner.peak.load(Acquire)
    }

    /// Reserves `bytes` if they fit now; never blocks.
    pub fn try_reserve(&self, bytes: u64) -> Result<Reservation> {
        self.check_fits_ever(bytes)?;
        self.inner.try_add(bytes).ok_or_else(|| {
            Error::new(
                ErrorKind::ResourceExhausted,
                format!(
                    "memory budget full: {bytes} bytes wanted, {} of {} reserved",
                    self.reserved(),
                    self.limit()
                ),
            )
        })
    }

    /// Reserves `bytes`, waiting up to `timeout` for other reservations to be released.
    /// Waiters are not served in order: a small request may overtake a large one.
    pub fn reserve(&self, bytes: u64, timeout: Duration) -> Result<Reservation> {
        self.check_fits_ever(bytes)?;
        if let Some(r) = self.inner.try_add(bytes) {
            return Ok(r);
        }
        // A timeout too large to add to now means no deadline (a host may pass u64::MAX).
        let deadline = Instant::now().checked_add(timeout);
        self.inner.waiters.fetch_add(1, AcqRel);
        let result = loop {
            if let Some(r) = self.inner.try_add(bytes) {
                break Ok(r);
            }
            let now = Instant::now();
            let left = deadline.map_or(WAIT_SLICE, |d| d.saturating_duration_since(now));
            if left.is_zero() {
                break Err(Error::new(
                    ErrorKind::Timeout,
                    format!(
                        "memory budget: {bytes} bytes did not fit within {timeout:?} \
                         ({} of {} reserved)",
                        self.reserved(),
                        self.limit()
                    ),
                ));
            }
            let _ = self.inner.wake_rx.recv_timeout(left.min(WAIT_SLICE));
        };
        self.inner.waiters.fetch_sub(1, AcqRel);
        if result.is_ok() && self.inner.waiters.load(Acquire) > 0 {
            // There may be room left for another waiter: pass the wake-up on.
            let _ = self.inner.wake_tx.try_send(());
        }
        result
    }

    fn check_fits_ever(&self, bytes: u64) -> Result<()> {
        if bytes > self.limit() {
            return Err(Error::new(
                ErrorKind::ResourceExhausted,
                format!(
                    "the job needs {bytes} bytes of host memory but the budget is {} bytes: \
                     it can never be admitted",
                    self.limit()
                ),
            ));
        }
        Ok(())
    }
}

impl Inner {
    fn try_add(self: &Arc<Self>, bytes: u64) -> Option<Reservation> {
        let mut cur = self.reserved.load(Acquire);
        loop {
            let next = cur.checked_add(bytes).filter(|&n| n <= self.limit)?;
            match self
                .reserved
                .compare_exchange_weak(cur, next, AcqRel, Acquire)
            {
                Ok(_) => {
                    self.peak.fetch_max(next, AcqRel);
                    if let Some(s) = &self.stats {
                        s.memory_reserved
                            .fetch_add(bytes, std::sync::atomic::Ordering::Relaxed);
                        s.memory_peak
                            .fetch_max(next, std::sync::atomic::Ordering::Relaxed);
                    }
                    return Some(Reservation {
                        inner: self.clone(),
                        bytes,
                    });
                }
                Err(actual) => cur = actual,
            }
        }
    }

    fn release(&self, bytes: u64) {
        if bytes == 0 {
            return;
        }
        self.reserved.fetch_sub(bytes, AcqRel);
        if let Some(s) = &self.stats {
            s.memory_reserved
                .fetch_sub(bytes, std::sync::atomic::Ordering::Relaxed);
        }
        if self.waiters.load(Acquire) > 0 {
            // Bounded(1): a pending wake-up already covers this one.
            let _ = self.wake_tx.try_send(());
        }
    }
}

impl Reservation {
    /// Bytes held.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Takes `other`'s bytes into this reservation (both from one budget).
    pub fn absorb(&mut self, mut other: Reservation) {
        debug_assert!(Arc::ptr_eq(&self.inner, &other.inner));
        self.bytes += std::mem::take(&mut other.bytes);
    }

    /// Moves `bytes` (at most all of them) out into a reservation of their own.
    pub fn split(&mut self, bytes: u64) -> Reservation {
        let bytes = bytes.min(self.bytes);
        self.bytes -= bytes;
        Reservation {
            inner: self.inner.clone(),
            bytes,
        }
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        self.inner.release(self.bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reserve_split_release() {
        let b = MemoryBudget::new(1000);
        let mut r = b.try_reserve(600).expect("fits");
        assert_eq!(b.reserved(), 600);
        let part = r.split(250);
        assert_eq!((r.bytes(), part.bytes()), (350, 250));
        assert_eq!(
            b.try_reserve(500).unwrap_err().kind(),
            ErrorKind::ResourceExhausted
        );
        drop(part);
        assert_eq!(b.reserved(), 350);
        let r2 = b.try_reserve(650).expect("fits after release");
        assert_eq!(b.reserved(), 1000);
        assert_eq!(b.peak(), 1000);
        drop((r, r2));
        assert_eq!(b.reserved(), 0);
        assert_eq!(b.peak(), 1000);
    }

    #[test]
    fn never_fits_fails_at_once_even_when_waiting() {
        let b = MemoryBudget::new(1000);
        let t = Instant::now();
        let e = b.reserve(1001, Duration::from_secs(3600)).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::ResourceExhausted);
        assert!(t.elapsed() < Duration::from_secs(3600));
    }

    #[test]
    fn waiter_is_admitted_when_memory_is_released_and_peak_holds() {
        let b = MemoryBudget::new(100);
        let held = b.try_reserve(80).expect("fits");
        std::thread::scope(|s| {
            let waiters: Vec<_> = (0..4)
                .map(|_| s.spawn(|| b.reserve(50, Duration::MAX).map(|r| r.bytes())))
                .collect();
            std::thread::sleep(Duration::from_millis(30));
            assert_eq!(b.reserved(), 80, "nobody admitted past the budget");
            drop(held);
            for w in waiters {
                // Each gets in (two at a time at most) and releases at once.
                assert_eq!(w.join().expect("no panic").expect("admitted"), 50);
            }
        });
        assert!(b.peak() <= 100);
        assert_eq!(b.reserved(), 0);
        let e = {
            let _hog = b.try_reserve(100).expect("fits");
            b.reserve(1, Duration::from_millis(10)).unwrap_err()
        };
        assert_eq!(e.kind(), ErrorKind::Timeout);
    }
}
