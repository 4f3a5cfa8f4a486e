//! Deferred, coalesced `malloc_trim(0)`.
//!
//! glibc keeps freed memory in its arenas; on a heap of hundreds of GiB that shows up as
//! resident memory the OS cannot reclaim, so proving daemons call `malloc_trim(0)`. That call
//! walks every arena and can take seconds. Calling it from finalizers, under a lock, is the
//! stall this engine exists to remove. Here finalizers (and workers, for the evaluations they
//! free) only add the bytes they freed to an atomic counter; one trimmer thread wakes once per
//! interval and, when the bytes reported since its last trim pass the threshold, trims once,
//! holding no engine lock.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{RecvTimeoutError, Sender};

use crate::stats::Stats;

/// When the trimmer trims.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TrimPolicy {
    /// Never call `malloc_trim`.
    Disabled,
    /// At most once per `interval`, and only once `min_freed_bytes` have been reported
    /// freed since the last trim.
    Every {
        /// Shortest time between two trims.
        interval: Duration,
        /// Freed bytes that make a trim worth its cost.
        min_freed_bytes: u64,
    },
}

impl Default for TrimPolicy {
    fn default() -> Self {
        TrimPolicy::Every {
            interval: Duration::from_secs(10),
            min_freed_bytes: 1 << 30,
        }
    }
}

/// The trim threshold [`bound_arena_tops`] fixes: an arena keeps at most this much free at its
/// top once something is freed there.
pub const ARENA_TOP_BYTES: usize = 4 << 20;
/// The mmap threshold [`bound_arena_tops`] fixes: blocks from this size up get their own
/// mapping, as glibc's own dynamic threshold reaches on a proving host anyway (its maximum).
pub const MMAP_THRESHOLD_BYTES: usize = 32 << 20;

/// Makes glibc give back the free top of every arena, not only of the main heap, bounding
/// what stays resident after an engine has freed its memory. `malloc_trim(0)` returns the
/// free pages inside every arena but shrinks only the main heap's top; a per-thread arena's
/// top is given back only when a free leaves it above the trim threshold, and glibc raises
/// that threshold (up to 64 MiB, twice the mmap threshold it raises as large blocks are
/// freed), so each of a proving host's arenas kept up to 64 MiB free but resident (the soak
/// on an H200: 477 MiB after the engine was dropped and trimmed, all in arena heaps). Fixing
/// both thresholds (`mallopt`) stops glibc from raising them. Process-wide, like
/// `malloc_trim` itself, and once set it stays; opt-in (`EngineConfig::trim_arena_tops`).
/// Returns whether the allocator took the settings (glibc on Linux; elsewhere nothing is
/// done).
pub fn bound_arena_tops() -> bool {
    let bounded;
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: mallopt only sets the allocator's parameters under its own lock.
        bounded = unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES as i32) == 1
                && libc::mallopt(libc::M_TRIM_THRESHOLD, ARENA_TOP_BYTES as i32) == 1
        };
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        bounded = false;
    }
    bounded
}

/// What the trimmer calls in place of `malloc_trim(0)`: tests use it to observe the call.
pub type TrimFn = Arc<dyn Fn() + Send + Sync>;

/// Returns freed memory to the OS where the allocator can (glibc on Linux); elsewhere nothing.
pub fn malloc_trim() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only takes the allocator's own locks and has no preconditions.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// The counter reporters add to; cloning shares it.
#[derive(Clone, Default)]
pub struct FreedCounter(Arc<AtomicU64>);

impl FreedCounter {
    /// Reports `bytes` freed. Lock-free: safe on any hot path.
    pub fn report(&self, bytes: u64) {
        self.0.fetch_add(bytes, Relaxed);
    }

    /// Bytes reported since the last trim.
    pub fn pending(&self) -> u64 {
        self.0.load(Relaxed)
    }
}

/// The trimmer thread; stops and joins when dropped.
pub struct Trimmer {
    freed: FreedCounter,
    stop: Option<Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Trimmer {
    /// Starts the trimmer under `policy`; `trim` replaces `malloc_trim(0)` when given.
    pub fn start(
        policy: TrimPolicy,
        trim: Option<TrimFn>,
        stats: Arc<Stats>,
    ) -> std::io::Result<Self> {
        let freed = FreedCounter::default();
        let TrimPolicy::Every {
            interval,
            min_freed_bytes,
        } = policy
        else {
            return Ok(Trimmer {
                freed,
                stop: None,
                thread: None,
            });
        };
        let (stop, stopped) = crossbeam_channel::bounded::<()>(0);
        let counter = freed.clone();
        let thread = std::thread::Builder::new()
            .name("cuzk-trimmer".into())
            .spawn(move || loop {
                match stopped.recv_timeout(interval) {
                    Err(RecvTimeoutError::Timeout) => {}
                    Ok(()) | Err(RecvTimeoutError::Disconnected) => return,
                }
                let pending = counter.pending();
                if pending < min_freed_bytes.max(1) {
                    continue;
                }
                // Subtract what was seen rather than zeroing, so reports that race this
                // trim count towards the next one.
                counter.0.fetch_sub(pending, Relaxed);
                let t = Instant::now();
                match &trim {
                    Some(f) => f(),
                    None => malloc_trim(),
                }
                let d = t.elapsed();
                stats.trim.record(d);
                tracing::debug!(
                    target: "cuzk::fin_timing",
                    trim_us = d.as_micros() as u64,
                    freed_bytes = pending,
                    "malloc_trim"
                );
            })?;
        Ok(Trimmer {
            freed,
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    /// The counter to report freed bytes to.
    pub fn counter(&self) -> FreedCounter {
        self.freed.clone()
    }
}

impl Drop for Trimmer {
    fn drop(&mut self) {
        // Dropping the sender disconnects the channel, which ends the thread's wait.
        self.stop.take();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    fn counting() -> (TrimFn, Arc<AtomicUsize>) {
        let n = Arc::new(AtomicUsize::new(0));
        let m = n.clone();
        (
            Arc::new(move || {
                m.fetch_add(1, Relaxed);
            }),
            n,
        )
    }

    fn wait_for(mut cond: impl FnMut() -> bool) -> bool {
        let t = Instant::now();
        while t.elapsed() < Duration::from_secs(30) {
            if cond() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        false
    }

    #[test]
    fn trims_only_past_the_threshold_and_coalesces() {
        let stats = Arc::new(Stats::new(&[]));
        let (f, calls) = counting();
        let policy = TrimPolicy::Every {
            interval: Duration::from_millis(5),
            min_freed_bytes: 1000,
        };
        let t = Trimmer::start(policy, Some(f), stats.clone()).expect("thread");
        let c = t.counter();
        c.report(999);
        // Several intervals pass below the threshold: no trim.
        std::thread::sleep(Duration::from_millis(50));
        assert_eq!(calls.load(Relaxed), 0);
        // Many small reports add up to one trim, not one per report.
        for _ in 0..10 {
            c.report(1);
        }
        assert!(wait_for(|| calls.load(Relaxed) == 1));
        assert!(wait_for(|| c.pending() == 0));
        std::thread::sleep(Duration::from_millis(50));
        assert_eq!(calls.load(Relaxed), 1, "nothing new reported, no new trim");
        drop(t);
        assert_eq!(stats.trim.snapshot().count, 1);
    }

    #[test]
    fn disabled_never_trims() {
        let stats = Arc::new(Stats::new(&[]));
        let (f, calls) = counting();
        let t = Trimmer::start(TrimPolicy::Disabled, Some(f), stats.clone()).expect("thread");
        t.counter().report(u64::MAX / 2);
        std::thread::sleep(Duration::from_millis(30));
        drop(t);
        assert_eq!(calls.load(Relaxed), 0);
        assert_eq!(stats.trim.snapshot().count, 0);
    }
}
