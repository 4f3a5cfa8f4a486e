//! The ordered partition queue the device workers pop from.
//!
//! Order is strict: (priority class, job sequence, partition index), smallest first. A
//! WinningPoSt partition always goes before any WindowPoSt one, and so on; within a class the
//! older job's partitions all go before a newer job's, and a job's partitions go in order.
//! Strict priority means a steady stream of higher-class jobs postpones a lower-class job for
//! as long as the stream lasts; that is the intended policy (a WinningPoSt proof that misses
//! its slot loses a block reward, a late PoRep costs nothing comparable), and it is tested.
//!
//! Who takes the queue's lock: `prove_start` (push), `Job::cancel` (remove a job), the device
//! workers (pop) and shutdown. Never a finalizer or the trimmer, so a worker popping the next
//! partition never waits behind finalization or a trim.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::sync::atomic::{
    AtomicBool, AtomicU64, Ordering::Acquire, Ordering::Relaxed, Ordering::Release,
};
use std::sync::Condvar;

use crossbeam_channel::{Receiver, Sender};

use super::lock::TrackedMutex;
use crate::stats::PRIORITY_CLASSES;

/// How often a pop that skipped every queued partition looks again.
pub const RECHECK: std::time::Duration = std::time::Duration::from_millis(20);

/// A job's priority class; a lower class never runs while a higher one has work queued.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u32)]
pub enum Priority {
    /// WinningPoSt: a block reward depends on it finishing within seconds.
    WinningPost = 0,
    /// WindowPoSt: due within its deadline window.
    WindowPost = 1,
    /// PoRep (C2) and SnapDeals proofs.
    PorepSnap = 2,
    /// Anything else.
    Other = 3,
}

impl Priority {
    /// All classes, highest first.
    pub const ALL: [Priority; PRIORITY_CLASSES] = [
        Priority::WinningPost,
        Priority::WindowPost,
        Priority::PorepSnap,
        Priority::Other,
    ];

    /// The class's index in [`crate::stats::StatsSnapshot::queue_depth`].
    pub fn index(self) -> usize {
        self as usize
    }
}

/// Where a partition goes in the queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct QueueKey {
    /// Its job's class.
    pub priority: Priority,
    /// Its job's sequence number (admission order).
    pub job_seq: u64,
    /// Its index within the job.
    pub partition: usize,
}

struct Entry<T> {
    key: QueueKey,
    item: T,
}

impl<T> PartialEq for Entry<T> {
    fn eq(&self, o: &Self) -> bool {
        self.key == o.key
    }
}
impl<T> Eq for Entry<T> {}
impl<T> PartialOrd for Entry<T> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl<T> Ord for Entry<T> {
    // BinaryHeap is a max-heap; the smallest key must come out first.
    fn cmp(&self, o: &Self) -> Ordering {
        o.key.cmp(&self.key)
    }
}

struct Inner<T> {
    heap: BinaryHeap<Entry<T>>,
    closed: bool,
}

/// A priority queue of partitions with blocking pop, job removal and per-class depth
/// counters that can be read without its lock.
pub struct PartitionQueue<T> {
    inner: TrackedMutex<Inner<T>>,
    ready: Condvar,
    depth: [AtomicU64; PRIORITY_CLASSES],
    // Mirrors `Inner::closed` for readers that must not take the lock.
    closed: AtomicBool,
    // Jobs to remove, sent by threads that must not take the queue's lock (finalizers).
    purge_tx: Sender<u64>,
    purge_rx: Receiver<u64>,
}

impl<T> Default for PartitionQueue<T> {
    fn default() -> Self {
        let (purge_tx, purge_rx) = crossbeam_channel::unbounded();
        PartitionQueue {
            inner: TrackedMutex::new(Inner {
                heap: BinaryHeap::new(),
                closed: false,
            }),
            ready: Condvar::new(),
            depth: Default::default(),
            closed: AtomicBool::new(false),
            purge_tx,
            purge_rx,
        }
    }
}

impl<T> PartitionQueue<T> {
    /// An empty, open queue.
    pub fn new() -> Self {
        Self::default()
    }

    /// Queues `items` under one lock. Returns them back if the queue is closed.
    pub fn push_all(&self, items: Vec<(QueueKey, T)>) -> Result<(), Vec<(QueueKey, T)>> {
        let n = items.len();
        {
            let mut q = self.inner.lock();
            if q.closed {
                return Err(items);
            }
            for (key, item) in items {
                self.depth[key.priority.index()].fetch_add(1, Relaxed);
                q.heap.push(Entry { key, item });
            }
        }
        if n == 1 {
            self.ready.notify_one();
        } else if n > 1 {
            self.ready.notify_all();
        }
        Ok(())
    }

    /// Takes the first partition, waiting while the queue is empty; `None` once the queue is
    /// closed and empty. Partitions of jobs asked for with [`Self::purge_later`] are removed
    /// first and handed to `on_purged` with the lock released (freeing a partition's memory
    /// can take a while, and nobody should wait for it under this lock), before the pop goes
    /// on: a purged partition is never kept alive by a pop that then waits for work.
    pub fn pop(&self, on_purged: impl FnMut(Vec<(QueueKey, T)>)) -> Option<(QueueKey, T)> {
        self.pop_eligible(on_purged, |_| true)
    }

    /// [`Self::pop`] of the first partition `eligible` accepts (a device worker skips a
    /// retried partition its own device already failed while another device can take it).
    /// While only skipped partitions are queued it looks again every [`RECHECK`], since what
    /// `eligible` says can change without a push (a device leaving rotation).
    pub fn pop_eligible(
        &self,
        mut on_purged: impl FnMut(Vec<(QueueKey, T)>),
        eligible: impl Fn(&T) -> bool,
    ) -> Option<(QueueKey, T)> {
        let mut q = self.inner.lock();
        loop {
            if !self.purge_rx.is_empty() {
                let jobs: Vec<u64> = self.purge_rx.try_iter().collect();
                let mut purged = Vec::new();
                self.remove_locked(&mut q, |k| jobs.contains(&k.job_seq), &mut purged);
                if !purged.is_empty() {
                    drop(q);
                    on_purged(purged);
                    q = self.inner.lock();
                    continue;
                }
            }
            // Skipped entries are rare (retries only), so popping past them is cheap.
            let mut skipped = Vec::new();
            let found = loop {
                match q.heap.pop() {
                    Some(e) if eligible(&e.item) => break Some(e),
                    Some(e) => skipped.push(e),
                    None => break None,
                }
            };
            let any_skipped = !skipped.is_empty();
            q.heap.extend(skipped);
            if let Some(Entry { key, item }) = found {
                self.depth[key.priority.index()].fetch_sub(1, Relaxed);
                return Some((key, item));
            }
            if q.closed {
                return None;
            }
            q = if any_skipped {
                q.wait_timeout(&self.ready, RECHECK)
            } else {
                q.wait(&self.ready)
            };
        }
    }

    /// Removes the partitions of job `job_seq` now.
    pub fn remove_job(&self, job_seq: u64) -> Vec<(QueueKey, T)> {
        let mut out = Vec::new();
        let mut q = self.inner.lock();
        self.remove_locked(&mut q, |k| k.job_seq == job_seq, &mut out);
        out
    }

    /// Asks that job `job_seq`'s partitions be removed by the next `pop`; takes no lock.
    pub fn purge_later(&self, job_seq: u64) {
        // The receiver lives as long as `self`, so the send cannot fail.
        let _ = self.purge_tx.send(job_seq);
    }

    fn remove_locked(
        &self,
        q: &mut Inner<T>,
        doomed: impl Fn(&QueueKey) -> bool,
        out: &mut Vec<(QueueKey, T)>,
    ) {
        if !q.heap.iter().any(|e| doomed(&e.key)) {
            return;
        }
        let mut keep = Vec::with_capacity(q.heap.len());
        for e in std::mem::take(&mut q.heap).into_vec() {
            if doomed(&e.key) {
                self.depth[e.key.priority.index()].fetch_sub(1, Relaxed);
                out.push((e.key, e.item));
            } else {
                keep.push(e);
            }
        }
        q.heap = BinaryHeap::from(keep);
    }

    /// Closes the queue and returns everything still in it; every waiting `pop` returns.
    pub fn close(&self) -> Vec<(QueueKey, T)> {
        let mut q = self.inner.lock();
        q.closed = true;
        self.closed.store(true, Release);
        let mut out: Vec<_> = std::mem::take(&mut q.heap)
            .into_sorted_vec()
            .into_iter()
            .rev()
            .map(|e| (e.key, e.item))
            .collect();
        for (k, _) in &out {
            self.depth[k.priority.index()].fetch_sub(1, Relaxed);
        }
        drop(q);
        self.ready.notify_all();
        out.shrink_to_fit();
        out
    }

    /// Whether the queue has been closed, read without the lock.
    pub fn is_closed(&self) -> bool {
        self.closed.load(Acquire)
    }

    /// Partitions queued in each class, read without the lock.
    pub fn depth(&self) -> [u64; PRIORITY_CLASSES] {
        std::array::from_fn(|i| self.depth[i].load(Relaxed))
    }

    /// Partitions queued in all classes, read without the lock.
    pub fn len(&self) -> u64 {
        self.depth().iter().sum()
    }

    /// Whether nothing is queued, read without the lock.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(priority: Priority, job_seq: u64, partition: usize) -> QueueKey {
        QueueKey {
            priority,
            job_seq,
            partition,
        }
    }

    fn push(q: &PartitionQueue<()>, keys: &[QueueKey]) {
        q.push_all(keys.iter().map(|&k| (k, ())).collect())
            .map_err(|_| ())
            .expect("open");
    }

    fn pop(q: &PartitionQueue<()>) -> QueueKey {
        q.pop(|_| {}).expect("item").0
    }

    #[test]
    fn priority_then_job_then_partition() {
        let q = PartitionQueue::new();
        use Priority::*;
        // Pushed in scrambled order: a newer WinningPoSt job, older low-class jobs, ...
        push(
            &q,
            &[
                key(PorepSnap, 1, 1),
                key(Other, 0, 0),
                key(PorepSnap, 1, 0),
                key(WindowPost, 3, 0),
                key(WinningPost, 5, 0),
                key(PorepSnap, 2, 0),
                key(WindowPost, 4, 1),
                key(WindowPost, 4, 0),
            ],
        );
        assert_eq!(q.depth(), [1, 3, 3, 1]);
        let order: Vec<_> = (0..8).map(|_| pop(&q)).collect();
        assert_eq!(
            order,
            vec![
                key(WinningPost, 5, 0),
                key(WindowPost, 3, 0),
                key(WindowPost, 4, 0),
                key(WindowPost, 4, 1),
                key(PorepSnap, 1, 0),
                key(PorepSnap, 1, 1),
                key(PorepSnap, 2, 0),
                key(Other, 0, 0),
            ]
        );
        assert!(q.is_empty());
    }

    #[test]
    fn strict_priority_postpones_an_old_low_class_job_while_high_work_keeps_coming() {
        let q = PartitionQueue::new();
        push(&q, &[key(Priority::PorepSnap, 0, 0)]);
        // A new WinningPoSt job arrives before each pop: the old PoRep job keeps waiting.
        for seq in 1..=100 {
            push(&q, &[key(Priority::WinningPost, seq, 0)]);
            assert_eq!(pop(&q), key(Priority::WinningPost, seq, 0));
        }
        // The stream stops: the old job runs next.
        assert_eq!(pop(&q), key(Priority::PorepSnap, 0, 0));
    }

    #[test]
    fn fifo_by_job_within_a_class_even_when_newer_jobs_arrive() {
        let q = PartitionQueue::new();
        push(
            &q,
            &[
                key(Priority::PorepSnap, 7, 0),
                key(Priority::PorepSnap, 7, 1),
            ],
        );
        assert_eq!(pop(&q), key(Priority::PorepSnap, 7, 0));
        push(&q, &[key(Priority::PorepSnap, 8, 0)]);
        assert_eq!(pop(&q), key(Priority::PorepSnap, 7, 1));
        assert_eq!(pop(&q), key(Priority::PorepSnap, 8, 0));
    }

    #[test]
    fn remove_and_purge_take_only_that_job() {
        let q = PartitionQueue::new();
        push(
            &q,
            &[
                key(Priority::Other, 1, 0),
                key(Priority::Other, 2, 0),
                key(Priority::Other, 2, 1),
                key(Priority::Other, 3, 0),
            ],
        );
        let removed = q.remove_job(2);
        assert_eq!(removed.len(), 2);
        assert!(removed.iter().all(|(k, _)| k.job_seq == 2));
        assert_eq!(q.len(), 2);
        q.purge_later(1);
        let mut purged = Vec::new();
        assert_eq!(
            q.pop(|p| purged.extend(p)).expect("item").0,
            key(Priority::Other, 3, 0)
        );
        assert_eq!(purged.len(), 1);
        assert_eq!(purged[0].0, key(Priority::Other, 1, 0));
        assert!(q.is_empty());
    }

    #[test]
    fn close_wakes_poppers_and_returns_leftovers() {
        let q = PartitionQueue::<()>::new();
        std::thread::scope(|s| {
            let waiter = s.spawn(|| q.pop(|_| {}).map(|(k, _)| k));
            // Whether the waiter is already asleep or not, close must end its pop.
            std::thread::sleep(std::time::Duration::from_millis(20));
            assert!(q.close().is_empty());
            assert_eq!(waiter.join().expect("no panic"), None);
        });
        let q = PartitionQueue::<()>::new();
        push(
            &q,
            &[key(Priority::Other, 1, 0), key(Priority::WinningPost, 2, 0)],
        );
        let left: Vec<_> = q.close().into_iter().map(|(k, _)| k).collect();
        assert_eq!(
            left,
            vec![key(Priority::WinningPost, 2, 0), key(Priority::Other, 1, 0)]
        );
        assert!(q.push_all(vec![(key(Priority::Other, 3, 0), ())]).is_err());
        assert_eq!(q.depth(), [0; 4]);
    }
}
