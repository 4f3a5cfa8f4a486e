//! Device memory: what one context has allocated, against its limit, and what the device
//! itself has free.
//!
//! Every device buffer a [`GpuContext`](super::GpuContext) makes goes through its ledger, so
//! the context knows to the byte what it holds (resident SRS points, recorded matrices,
//! scratch, twiddles) and can refuse an allocation over its limit before the driver does. A
//! refusal, or the driver's own out-of-memory, is remembered until the start phase asks
//! ([`Ledger::take_refused`]): the start phase then gives back what it keeps resident and
//! runs the partition again, rather than failing it.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};

use super::GpuError;

/// The device bytes of one context's live buffers.
#[derive(Debug)]
#[cfg_attr(not(cuzk_cuda_kernels), allow(dead_code))]
pub(crate) struct Ledger {
    in_use: AtomicUsize,
    peak: AtomicUsize,
    limit: AtomicUsize,
    refused: AtomicBool,
    /// Allocations still to refuse (a test hook).
    refuse_next: AtomicUsize,
}

#[cfg_attr(not(cuzk_cuda_kernels), allow(dead_code))]
impl Ledger {
    pub(crate) fn new(limit: usize) -> Self {
        Ledger {
            in_use: AtomicUsize::new(0),
            peak: AtomicUsize::new(0),
            limit: AtomicUsize::new(limit),
            refused: AtomicBool::new(false),
            refuse_next: AtomicUsize::new(0),
        }
    }

    /// Refuses the next `n` allocations as if the limit had been reached.
    pub(crate) fn refuse_next(&self, n: usize) {
        self.refuse_next.store(n, Relaxed);
    }

    /// Counts `bytes` as allocated if they fit the limit; the caller allocates them next
    /// (and calls [`Ledger::release`] if the driver refuses).
    pub(crate) fn admit(&self, bytes: usize) -> Result<(), GpuError> {
        let limit = self.limit.load(Relaxed);
        let mut in_use = self.in_use.load(Relaxed);
        let injected = self
            .refuse_next
            .fetch_update(Relaxed, Relaxed, |n| n.checked_sub(1))
            .is_ok();
        loop {
            if injected || in_use.saturating_add(bytes) > limit {
                self.refused.store(true, Relaxed);
                return Err(GpuError::OutOfMemory {
                    requested: bytes,
                    in_use,
                    limit: Some(limit),
                });
            }
            match self
                .in_use
                .compare_exchange_weak(in_use, in_use + bytes, Relaxed, Relaxed)
            {
                Ok(_) => break,
                Err(now) => in_use = now,
            }
        }
        self.peak.fetch_max(in_use + bytes, Relaxed);
        Ok(())
    }

    /// Counts `bytes` as allocated if they fit the limit, and otherwise only says no: an
    /// optional allocation (inputs staged ahead of a start phase) that finds no room must not
    /// make the running start phase evict what is resident.
    pub(crate) fn admit_if_room(&self, bytes: usize) -> bool {
        let limit = self.limit.load(Relaxed);
        let admitted = self.in_use.fetch_update(Relaxed, Relaxed, |in_use| {
            in_use.checked_add(bytes).filter(|&total| total <= limit)
        });
        match admitted {
            Ok(before) => {
                self.peak.fetch_max(before + bytes, Relaxed);
                true
            }
            Err(_) => false,
        }
    }

    /// The driver had no memory for an admitted allocation.
    pub(crate) fn driver_refused(&self, bytes: usize) -> GpuError {
        self.release(bytes);
        self.refused.store(true, Relaxed);
        GpuError::OutOfMemory {
            requested: bytes,
            in_use: self.in_use(),
            limit: None,
        }
    }

    pub(crate) fn release(&self, bytes: usize) {
        self.in_use.fetch_sub(bytes, Relaxed);
    }

    pub(crate) fn in_use(&self) -> usize {
        self.in_use.load(Relaxed)
    }

    pub(crate) fn peak(&self) -> usize {
        self.peak.load(Relaxed)
    }

    pub(crate) fn limit(&self) -> usize {
        self.limit.load(Relaxed)
    }

    pub(crate) fn set_limit(&self, bytes: usize) {
        self.limit.store(bytes, Relaxed);
    }

    /// Whether an allocation was refused since the last call.
    pub(crate) fn take_refused(&self) -> bool {
        self.refused.swap(false, Relaxed)
    }
}

/// A device's memory as the driver reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryInfo {
    /// Bytes free on the device now (every context and process counted).
    pub free: usize,
    /// The device's memory.
    pub total: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn admits_within_the_limit_and_remembers_a_refusal() {
        let l = Ledger::new(100);
        l.admit(60).unwrap();
        assert_eq!(l.in_use(), 60);
        let e = l.admit(41).unwrap_err();
        assert!(
            matches!(
                e,
                GpuError::OutOfMemory {
                    requested: 41,
                    in_use: 60,
                    limit: Some(100)
                }
            ),
            "{e:?}"
        );
        assert!(e.to_string().contains("41 bytes"), "{e}");
        assert!(l.take_refused());
        assert!(!l.take_refused(), "a refusal is reported once");
        l.admit(40).unwrap();
        assert_eq!((l.in_use(), l.peak()), (100, 100));
        l.release(60);
        let e = l.driver_refused(40);
        assert!(
            matches!(e, GpuError::OutOfMemory { limit: None, .. }),
            "{e:?}"
        );
        assert_eq!((l.in_use(), l.peak()), (0, 100));
        assert!(l.take_refused());
        l.set_limit(10);
        assert!(l.admit(11).is_err());
        l.refuse_next(1);
        assert!(l.admit(1).is_err(), "an injected refusal");
        assert!(l.take_refused());
        l.admit(1).unwrap();
    }

    #[test]
    fn an_optional_allocation_without_room_is_refused_quietly() {
        let l = Ledger::new(100);
        assert!(l.admit_if_room(70));
        assert!(!l.admit_if_room(31));
        assert!(!l.take_refused(), "no eviction for an optional allocation");
        assert!(l.admit_if_room(30));
        assert_eq!((l.in_use(), l.peak()), (100, 100));
    }
}
