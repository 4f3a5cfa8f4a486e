//! Devices and the device mutex.
//!
//! A [`Device`] is anything that runs a start phase: a GPU (once its backend plugs in here) or
//! a logical CPU device running [`CpuStart`]. Each device has one [`DeviceMutex`] shared by
//! that device's workers (two by default, so one worker stages its next partition while the
//! other computes).
//!
//! Exactly one thing runs inside the device mutex: the [`StartPhase::start`] call (H's NTTs
//! and the G1 MSMs, with their transfers on a GPU). Everything that needs no device runs
//! outside: validation and admission (in `prove_start`), taking the next partition from the
//! queue, skipping cancelled work, host staging, releasing the evaluations' reservation,
//! handing the result to a finalizer, and the stats. The mutex times its wait and its hold
//! separately, so a worker waiting for the device is never mistaken for a device computing.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use super::lock::{TrackedGuard, TrackedMutex};
use crate::cpu::CpuStart;
use crate::groth16::StartPhase;
use crate::stats::Stats;

/// A device the engine schedules start phases on.
#[derive(Clone)]
pub struct Device {
    /// The name the stats and logs use (e.g. `cpu0`, `cuda0`).
    pub name: String,
    /// The start-phase backend this device runs.
    pub backend: Arc<dyn StartPhase>,
}

impl std::fmt::Debug for Device {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Device")
            .field("name", &self.name)
            .field("backend", &self.backend.name())
            .finish()
    }
}

impl Device {
    /// A device named `name` running `backend`.
    pub fn new(name: impl Into<String>, backend: Arc<dyn StartPhase>) -> Self {
        Device {
            name: name.into(),
            backend,
        }
    }

    /// One device per usable CUDA GPU, each running [`GpuStart`](crate::gpu::GpuStart);
    /// empty where there is no driver, no GPU or no compiled kernels. A GPU that is found but
    /// cannot be opened is an error, not silently skipped.
    pub fn gpus() -> crate::error::Result<Vec<Device>> {
        crate::gpu::devices()
            .into_iter()
            .map(|info| {
                let backend = crate::gpu::GpuStart::new(info.ordinal)?;
                Ok(Device::new(
                    format!("cuda{}", info.ordinal),
                    Arc::new(backend),
                ))
            })
            .collect()
    }

    /// `per_gpu` logical devices on each of the first `max_gpus` GPUs (`0`: every GPU), each
    /// with a context of its own: first one on every GPU, then a second on every GPU, and so
    /// on, so that the first k devices are on k different GPUs where there are that many.
    /// A GPU's second logical device is named `cuda0.1`. More than one a GPU shares its
    /// kernels; it exercises multi-device scheduling on a machine with fewer GPUs.
    pub fn logical_gpus(per_gpu: usize, max_gpus: usize) -> crate::error::Result<Vec<Device>> {
        let mut out = Vec::new();
        for k in 0..per_gpu {
            let mut round = Device::gpus()?;
            if max_gpus > 0 {
                round.truncate(max_gpus);
            }
            for d in &mut round {
                if k > 0 {
                    d.name = format!("{}.{k}", d.name);
                }
            }
            out.extend(round);
        }
        Ok(out)
    }

    /// The devices an engine uses by default: every GPU, or one CPU device where there is
    /// none (or where opening a GPU failed; the failure is logged).
    pub fn detect() -> Vec<Device> {
        match Device::gpus() {
            Ok(gpus) if !gpus.is_empty() => gpus,
            Ok(_) => Device::cpu(1),
            Err(e) => {
                tracing::warn!(target: "cuzk::engine", error = %e, "GPU present but unusable; proving on the CPU");
                Device::cpu(1)
            }
        }
    }

    /// `n` logical CPU devices. They share the machine's cores (the CPU backend is itself
    /// multi-threaded), so more than one only serves to exercise multi-device scheduling.
    pub fn cpu(n: usize) -> Vec<Device> {
        (0..n)
            .map(|i| Device::new(format!("cpu{i}"), Arc::new(CpuStart)))
            .collect()
    }
}

/// One device's mutex: serializes its start phases and times the wait, the hold and the gap
/// between holds.
///
/// It is handed over first come, first served: a worker takes its partition from the
/// priority queue before it locks the device, so with an unfair lock a worker that just
/// released it could take the next partition and lock again ahead of a worker already
/// waiting with an older or more urgent one (seen on an H200: one partition waited 1.6 s
/// while 17 later ones ran). Tickets keep the device order equal to the queue order.
pub struct DeviceMutex {
    index: usize,
    lock: TrackedMutex<()>,
    /// The next ticket to hand out, and the ticket whose turn it is.
    next_ticket: AtomicU64,
    serving: Mutex<u64>,
    turn: Condvar,
    stats: Arc<Stats>,
    waiting: AtomicUsize,
    /// When the last hold ended, in ns since the stats epoch.
    released_at: AtomicU64,
    /// Whether work was waiting when the last hold ended (so the next acquisition's delay
    /// is device idle time with a backlog: the gap).
    released_with_backlog: AtomicBool,
}

/// A held device mutex; records the hold and the device's busy time when dropped.
pub struct DeviceGuard<'a> {
    mutex: &'a DeviceMutex,
    acquired: Instant,
    _guard: TrackedGuard<'a, ()>,
    /// Whether the queue had work when the hold ended, as the caller saw it.
    backlog: Box<dyn Fn() -> bool + 'a>,
}

/// What [`DeviceMutex::lock`] measured.
#[derive(Clone, Copy, Debug, Default)]
pub struct Acquired {
    /// Time spent waiting for the lock.
    pub wait: Duration,
    /// Device idle time before this hold while work was waiting, if it was.
    pub gap: Option<Duration>,
}

impl DeviceMutex {
    /// The mutex of device `index`, recording into `stats`.
    pub fn new(index: usize, stats: Arc<Stats>) -> Self {
        DeviceMutex {
            index,
            lock: TrackedMutex::new(()),
            next_ticket: AtomicU64::new(0),
            serving: Mutex::new(0),
            turn: Condvar::new(),
            stats,
            waiting: AtomicUsize::new(0),
            released_at: AtomicU64::new(0),
            released_with_backlog: AtomicBool::new(false),
        }
    }

    fn now_ns(&self, t: Instant) -> u64 {
        t.saturating_duration_since(self.stats.epoch).as_nanos() as u64
    }

    /// Locks the device. `backlog` is asked when the hold ends whether work is waiting; with
    /// the workers that wait on this mutex, that decides whether the idle time until the next
    /// hold counts as a gap.
    pub fn lock<'a>(&'a self, backlog: impl Fn() -> bool + 'a) -> (DeviceGuard<'a>, Acquired) {
        self.lock_if(backlog, || true)
            .expect("a lock that is always wanted is always taken")
    }

    /// [`DeviceMutex::lock`], unless `wanted` says no when the caller's turn comes (its
    /// device left rotation, or hung, while it waited): then the turn passes on and nothing
    /// is recorded.
    pub fn lock_if<'a>(
        &'a self,
        backlog: impl Fn() -> bool + 'a,
        wanted: impl FnOnce() -> bool,
    ) -> Option<(DeviceGuard<'a>, Acquired)> {
        let t0 = Instant::now();
        self.waiting.fetch_add(1, Relaxed);
        self.stats.record_device_waiting(self.index, true);
        let ticket = self.next_ticket.fetch_add(1, Relaxed);
        {
            let mut serving = self.serving.lock().unwrap_or_else(|p| p.into_inner());
            while *serving != ticket {
                serving = self.turn.wait(serving).unwrap_or_else(|p| p.into_inner());
            }
            if !wanted() {
                *serving += 1;
                self.waiting.fetch_sub(1, Relaxed);
                self.stats.record_device_waiting(self.index, false);
                drop(serving);
                self.turn.notify_all();
                return None;
            }
        }
        // Only the ticket holder gets here, so this never waits (it keeps the lock counting
        // that the engine's lock-order tests rely on).
        let guard = self.lock.lock();
        self.waiting.fetch_sub(1, Relaxed);
        self.stats.record_device_waiting(self.index, false);
        let acquired = Instant::now();
        let wait = acquired - t0;
        self.stats.mutex_wait.record(wait);
        // The previous holder wrote these before unlocking; the mutex orders them before us.
        let gap = if self.released_with_backlog.load(Relaxed) {
            let since = self.released_at.load(Relaxed);
            let gap = Duration::from_nanos(self.now_ns(acquired).saturating_sub(since));
            self.stats.gap.record(gap);
            Some(gap)
        } else {
            None
        };
        self.stats.device(self.index).begin(acquired);
        Some((
            DeviceGuard {
                mutex: self,
                acquired,
                _guard: guard,
                backlog: Box::new(backlog),
            },
            Acquired { wait, gap },
        ))
    }
}

impl DeviceGuard<'_> {
    /// How long the mutex has been held.
    pub fn held(&self) -> Duration {
        self.acquired.elapsed()
    }
}

impl Drop for DeviceGuard<'_> {
    fn drop(&mut self) {
        let m = self.mutex;
        let end = Instant::now();
        m.stats.mutex_hold.record(end - self.acquired);
        m.stats.device(m.index).end(self.acquired, end);
        let backlog = m.waiting.load(Relaxed) > 0 || (self.backlog)();
        m.released_at.store(m.now_ns(end), Relaxed);
        m.released_with_backlog.store(backlog, Relaxed);
        // The next ticket's turn: it may find `_guard` still held for the rest of this drop.
        *m.serving.lock().unwrap_or_else(|p| p.into_inner()) += 1;
        m.turn.notify_all();
        // `_guard` unlocks after this body.
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::groth16::Backend;
    use crate::stats::Gauges;

    fn waiting(stats: &Stats) -> u64 {
        stats.snapshot(Gauges::default()).devices()[1].waiting
    }

    #[test]
    fn a_worker_waiting_for_the_mutex_shows_in_the_stats() {
        let stats = Arc::new(Stats::new(&[Backend::Cpu, Backend::Cpu]));
        let m = DeviceMutex::new(1, stats.clone());
        let (held, _) = m.lock(|| false);
        assert_eq!(waiting(&stats), 0);
        std::thread::scope(|s| {
            let waiter = s.spawn(|| drop(m.lock(|| false)));
            let t = Instant::now();
            while waiting(&stats) != 1 {
                assert!(
                    t.elapsed() < Duration::from_secs(10),
                    "the waiter never showed"
                );
                std::thread::yield_now();
            }
            drop(held);
            waiter.join().unwrap();
        });
        assert_eq!(waiting(&stats), 0);
        // A turn given up (`wanted` says no) is no longer waiting either.
        assert!(m.lock_if(|| false, || false).is_none());
        assert_eq!(waiting(&stats), 0);
        let text = stats.snapshot(Gauges::default()).prometheus();
        assert!(
            text.contains("cuzk_device_waiting{device=\"1\"} 0"),
            "{text}"
        );
    }
}
