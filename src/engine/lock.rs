//! The engine's one mutex type, which counts the engine locks each thread holds.
//!
//! The engine's central promise is about locks: the trimmer calls `malloc_trim(0)` holding
//! none, and a device worker between two partitions takes none that a finalizer or the
//! trimmer can hold. Every engine lock is a [`TrackedMutex`], so [`engine_locks_held`] tells
//! a thread how many it holds right now, and tests (through the engine's hooks) assert it is
//! zero where the design says so.

use std::cell::Cell;
use std::ops::{Deref, DerefMut};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;

thread_local! {
    static HELD: Cell<usize> = const { Cell::new(0) };
}

/// How many engine locks the calling thread holds.
pub fn engine_locks_held() -> usize {
    HELD.with(Cell::get)
}

fn acquired() {
    HELD.with(|h| h.set(h.get() + 1));
}

fn released() {
    HELD.with(|h| h.set(h.get() - 1));
}

/// A mutex that never reports poisoning (every engine critical section leaves its data
/// consistent at each step, and backend panics are caught before they reach one) and that
/// counts itself in [`engine_locks_held`].
#[derive(Debug, Default)]
pub struct TrackedMutex<T> {
    inner: Mutex<T>,
}

/// A held [`TrackedMutex`].
pub struct TrackedGuard<'a, T> {
    // `None` only inside `wait_timeout`, while the condvar owns the std guard.
    guard: Option<MutexGuard<'a, T>>,
}

impl<T> TrackedMutex<T> {
    /// A new mutex holding `value`.
    pub fn new(value: T) -> Self {
        TrackedMutex {
            inner: Mutex::new(value),
        }
    }

    /// Locks, blocking until the lock is free.
    pub fn lock(&self) -> TrackedGuard<'_, T> {
        let guard = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        acquired();
        TrackedGuard { guard: Some(guard) }
    }

    /// Locks if the lock is free now.
    pub fn try_lock(&self) -> Option<TrackedGuard<'_, T>> {
        let guard = match self.inner.try_lock() {
            Ok(g) => g,
            Err(std::sync::TryLockError::Poisoned(p)) => p.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => return None,
        };
        acquired();
        Some(TrackedGuard { guard: Some(guard) })
    }
}

impl<'a, T> TrackedGuard<'a, T> {
    /// Releases the lock and waits on `cv` for at most `timeout`; the thread does not count
    /// the lock as held while it waits.
    pub fn wait_timeout(mut self, cv: &Condvar, timeout: Duration) -> Self {
        let g = self.guard.take().expect("guard present outside wait");
        released();
        let (g, _) = cv
            .wait_timeout(g, timeout)
            .unwrap_or_else(|p| p.into_inner());
        acquired();
        self.guard = Some(g);
        self
    }

    /// As [`Self::wait_timeout`], with no limit.
    pub fn wait(mut self, cv: &Condvar) -> Self {
        let g = self.guard.take().expect("guard present outside wait");
        released();
        let g = cv.wait(g).unwrap_or_else(|p| p.into_inner());
        acquired();
        self.guard = Some(g);
        self
    }
}

impl<T> Deref for TrackedGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        self.guard.as_ref().expect("guard present outside wait")
    }
}

impl<T> DerefMut for TrackedGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        self.guard.as_mut().expect("guard present outside wait")
    }
}

impl<T> Drop for TrackedGuard<'_, T> {
    fn drop(&mut self) {
        if self.guard.take().is_some() {
            released();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_locks_per_thread() {
        let a = TrackedMutex::new(1);
        let b = TrackedMutex::new(2);
        assert_eq!(engine_locks_held(), 0);
        let ga = a.lock();
        let gb = b.try_lock().expect("free");
        assert_eq!(engine_locks_held(), 2);
        std::thread::scope(|s| {
            s.spawn(|| {
                assert_eq!(engine_locks_held(), 0);
                assert!(a.try_lock().is_none());
            });
        });
        drop(gb);
        let cv = Condvar::new();
        let ga = ga.wait_timeout(&cv, Duration::from_millis(1));
        assert_eq!(*ga, 1);
        assert_eq!(engine_locks_held(), 1);
        drop(ga);
        assert_eq!(engine_locks_held(), 0);
    }
}
