//! Frees what a start phase consumed on a thread of its own, after the start phase returns.
//!
//! A start phase from host evaluations owns a, b and c (3 × 128 MB at 2^22 constraints,
//! 3 × 512 MB at 2^24). Dropping them unmaps their pages: on the H200 host that took 26 ms of
//! each 256 ms hold of the device mutex at 2^22, with no kernel running (the engine's
//! `start phase host parts` debug events found it between the start phase's end and the
//! mutex's release). Handed to the releaser, they go while the next start phase runs.
//!
//! The engine returns their share of its host memory budget when the start phase returns,
//! a few milliseconds before the releaser has unmapped them; at most one partition's
//! evaluations per device are in that state at a time, since each drop takes less time than
//! a start phase.

use std::any::Any;
use std::thread::JoinHandle;

use crossbeam_channel::{unbounded, Sender};

/// A thread that drops what it is given.
pub(crate) struct Releaser {
    to_thread: Option<Sender<Box<dyn Any + Send>>>,
    thread: Option<JoinHandle<()>>,
}

impl Releaser {
    /// The releaser for device `ordinal` (its thread is named after it).
    pub(crate) fn new(ordinal: usize) -> Self {
        let (tx, rx) = unbounded::<Box<dyn Any + Send>>();
        let thread = std::thread::Builder::new()
            .name(format!("cuzk-gpu{ordinal}-release"))
            .spawn(move || {
                for spent in rx {
                    drop(spent);
                }
            });
        match thread {
            Ok(thread) => Releaser {
                to_thread: Some(tx),
                thread: Some(thread),
            },
            // No thread: everything is dropped where it is released, as without a releaser.
            Err(_) => Releaser {
                to_thread: None,
                thread: None,
            },
        }
    }

    /// Drops `spent` on the releaser's thread (here, when it has none).
    pub(crate) fn release<T: Send + 'static>(&self, spent: T) {
        if let Some(tx) = &self.to_thread {
            if let Err(back) = tx.send(Box::new(spent)) {
                drop(back.into_inner());
            }
        }
    }
}

impl Drop for Releaser {
    /// Waits until everything released so far has been dropped.
    fn drop(&mut self) {
        drop(self.to_thread.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
    use std::sync::Arc;

    struct Counted(Arc<AtomicUsize>, std::thread::ThreadId);

    impl Drop for Counted {
        fn drop(&mut self) {
            // Dropped on another thread than the one that released it.
            assert_ne!(std::thread::current().id(), self.1);
            self.0.fetch_add(1, SeqCst);
        }
    }

    #[test]
    fn drops_everything_on_its_thread_before_it_goes() {
        let dropped = Arc::new(AtomicUsize::new(0));
        let releaser = Releaser::new(0);
        for _ in 0..10 {
            releaser.release(Counted(dropped.clone(), std::thread::current().id()));
        }
        drop(releaser);
        assert_eq!(dropped.load(SeqCst), 10);
    }
}
