//! The host budget's charges for recorded circuits, and their eviction.
//!
//! A recorded shape's matrices are charged to the budget once (out of the share its first
//! partition reserved for a, b and c) and kept for the engine's life, unless a partition
//! needs their room. A waiting partition evicts recordings, least recently used first, in
//! two cases only:
//! - **they stand in its way for good**: the budget less every recording's charge could not
//!   hold it, so no partition finishing would ever make its room (without eviction it would
//!   wait until its job is cancelled);
//! - **they are stale**: not used for [`STALE_AFTER`], while partitions wait for memory.
//!
//! Otherwise a waiting partition waits for partitions in flight, as it always has: a PoRep
//! backlog that fills the budget does not throw away the WindowPoSt recording it will need
//! at the next deadline (at 32GiB its recording takes ~40 s of 16 cores, or a read of
//! 8.4 GB from the recordings folder).
//!
//! Only an idle recording goes (no partition synthesizing or proving with it: the cache's
//! own reference is its only one), so eviction frees its memory at once; a partition of the
//! shape that comes later records it again, or reads it from the recordings folder.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::budget::{MemoryBudget, Reservation};
use super::lock::TrackedMutex;
use crate::r1cs::{R1csCache, RecordedCircuit, ShapeKey};

/// A recording not used for this long is evicted when a partition waits for memory.
pub(crate) const STALE_AFTER: Duration = Duration::from_secs(10 * 60);

/// One recorded shape's charge to the budget.
#[derive(Debug)]
struct Charge {
    reservation: Reservation,
    last_used: Instant,
}

/// A recording that could be evicted, as [`choose_evictions`] sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Candidate {
    pub(crate) key: ShapeKey,
    pub(crate) bytes: u64,
    pub(crate) idle: Duration,
}

/// The recordings to evict, in order, so that a partition of `need` bytes fits a budget of
/// `limit` bytes of which `reserved` are held, `charged` of them by the recordings
/// (`candidates` among them): least recently used first, only while the partition does not
/// fit, and only when the ones that go make its room (evicting short of it would cost later
/// recordings and gain nothing now). Stale recordings go when they make the room now; as
/// many as it takes, oldest first, when the partition could never fit beside them all.
pub(crate) fn choose_evictions(
    mut candidates: Vec<Candidate>,
    limit: u64,
    reserved: u64,
    charged: u64,
    need: u64,
) -> Vec<ShapeKey> {
    let free = limit.saturating_sub(reserved);
    if free >= need {
        return Vec::new();
    }
    candidates.sort_by(|a, b| b.idle.cmp(&a.idle).then_with(|| a.key.cmp(&b.key)));
    // No partition finishing makes the room while the recordings stay: evict until the
    // budget less the remaining charges holds the partition. Otherwise only stale ones,
    // until the partition fits now.
    if limit.saturating_sub(charged) < need {
        take_until(candidates.iter(), limit.saturating_sub(charged), need)
    } else {
        let stale = candidates.iter().filter(|c| c.idle >= STALE_AFTER);
        take_until(stale, free, need)
    }
}

/// The keys of `candidates`, in order, until `room` plus their bytes reaches `need`; none
/// if all of them together do not reach it.
fn take_until<'a>(
    candidates: impl Iterator<Item = &'a Candidate>,
    mut room: u64,
    need: u64,
) -> Vec<ShapeKey> {
    let mut chosen = Vec::new();
    for c in candidates {
        if room >= need {
            break;
        }
        room += c.bytes;
        chosen.push(c.key.clone());
    }
    if room < need {
        return Vec::new();
    }
    chosen
}

/// The budget's share held by each recorded shape, for as long as the recording is kept.
#[derive(Debug, Default)]
pub(crate) struct RecordingCharges {
    charges: TrackedMutex<HashMap<ShapeKey, Charge>>,
}

impl RecordingCharges {
    /// Charges `key`'s recording to `budget` once: out of the recording partition's own
    /// share for a, b and c (up to `eval` bytes of `reservation`; a recording is smaller
    /// than the evaluations it replaces), the rest, if any, when the budget has it. Not
    /// charged when what would be left of the budget could not hold one `partition` more:
    /// a charge must never leave a shape's partitions waiting for room that cannot come.
    /// A shape already charged is only marked used now.
    pub(crate) fn charge(
        &self,
        r1cs: &R1csCache,
        budget: &MemoryBudget,
        key: &ShapeKey,
        reservation: &mut Reservation,
        eval: u64,
        partition: u64,
    ) {
        let mut charges = self.charges.lock();
        if let Some(c) = charges.get_mut(key) {
            c.last_used = Instant::now();
            return;
        }
        let Some(recorded) = r1cs.get(key) else {
            return;
        };
        let bytes = recorded.bytes() as u64;
        let charged: u64 = charges.values().map(|c| c.reservation.bytes()).sum();
        if charged + bytes + partition > budget.limit() {
            tracing::warn!(target: "cuzk::synthesis", shape = key.as_str(), bytes,
                "recorded circuit not charged to the memory budget: it would leave no room for its partitions");
            return;
        }
        let mut charge = reservation.split(bytes.min(eval));
        if charge.bytes() < bytes {
            // Not waited for: the synthesis thread holds a partition's share, and the rest of
            // the budget may be held by partitions waiting for this one's shape.
            match budget.try_reserve(bytes - charge.bytes()) {
                Ok(more) => charge.absorb(more),
                Err(e) => {
                    tracing::warn!(target: "cuzk::synthesis", shape = key.as_str(), error = %e,
                    "recorded circuit only partly charged to the memory budget")
                }
            }
        }
        charges.insert(
            key.clone(),
            Charge {
                reservation: charge,
                last_used: Instant::now(),
            },
        );
    }

    /// Evicts recordings (never `keep`'s) by [`choose_evictions`] so that `need` bytes fit
    /// `budget`; returns the recordings evicted and the bytes their charges held. A chosen
    /// recording that is in use is skipped (it would free nothing now).
    pub(crate) fn make_room(
        &self,
        r1cs: &R1csCache,
        budget: &MemoryBudget,
        need: u64,
        keep: Option<&ShapeKey>,
    ) -> (Vec<Arc<RecordedCircuit>>, u64) {
        // Cheap before the lock: the common case is a budget that has the room.
        if budget.limit().saturating_sub(budget.reserved()) >= need {
            return (Vec::new(), 0);
        }
        let mut charges = self.charges.lock();
        if charges.is_empty() {
            return (Vec::new(), 0);
        }
        let now = Instant::now();
        let charged: u64 = charges.values().map(|c| c.reservation.bytes()).sum();
        let candidates = charges
            .iter()
            .filter(|(k, _)| Some(*k) != keep)
            .map(|(k, c)| Candidate {
                key: k.clone(),
                bytes: c.reservation.bytes(),
                idle: now.saturating_duration_since(c.last_used),
            })
            .collect();
        let chosen = choose_evictions(candidates, budget.limit(), budget.reserved(), charged, need);
        let mut evicted = Vec::new();
        let mut freed = 0;
        for key in chosen {
            let Some(recorded) = r1cs.remove_if_idle(&key) else {
                continue;
            };
            if let Some(c) = charges.remove(&key) {
                freed += c.reservation.bytes();
            }
            tracing::info!(target: "cuzk::synthesis", shape = key.as_str(), bytes = recorded.bytes(),
                "recorded circuit evicted to make room in the memory budget");
            evicted.push(recorded);
        }
        (evicted, freed)
    }

    /// Drops every charge (the engine is going; nothing is admitted any more).
    pub(crate) fn clear(&self) {
        self.charges.lock().clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(key: &str, bytes: u64, idle_s: u64) -> Candidate {
        Candidate {
            key: ShapeKey::new(key),
            bytes,
            idle: Duration::from_secs(idle_s),
        }
    }

    fn keys(v: &[ShapeKey]) -> Vec<&str> {
        v.iter().map(ShapeKey::as_str).collect()
    }

    #[test]
    fn nothing_goes_while_the_partition_fits() {
        let cands = vec![c("a", 50, 10_000)];
        assert!(choose_evictions(cands, 100, 60, 50, 40).is_empty());
    }

    #[test]
    fn fresh_recordings_wait_for_partitions_in_flight() {
        // 100 bytes: two recordings of 20 charged, 50 held by partitions; 40 wanted. The
        // partitions' 50 coming back makes the room: nothing is evicted.
        let cands = vec![c("a", 20, 5), c("b", 20, 60)];
        assert!(choose_evictions(cands, 100, 90, 40, 40).is_empty());
    }

    #[test]
    fn recordings_in_the_way_for_good_go_least_recently_used_first() {
        // 100 bytes, recordings of 30 and 30 charged; a partition of 60 never fits beside
        // both: the older goes, and only it.
        let cands = vec![c("new", 30, 1), c("old", 30, 100)];
        assert_eq!(keys(&choose_evictions(cands, 100, 60, 60, 60)), ["old"]);
        // One of 90 needs both gone.
        let cands = vec![c("new", 30, 1), c("old", 30, 100)];
        assert_eq!(
            keys(&choose_evictions(cands, 100, 60, 60, 90)),
            ["old", "new"]
        );
    }

    #[test]
    fn nothing_goes_when_evicting_cannot_make_the_room() {
        // `keep`'s own 40 is not a candidate: evicting the other 30 leaves 70 < 80.
        let cands = vec![c("other", 30, 100)];
        assert!(choose_evictions(cands, 100, 70, 70, 80).is_empty());
    }

    #[test]
    fn stale_recordings_go_when_they_make_the_room_now() {
        let stale = STALE_AFTER.as_secs() + 1;
        // 100 bytes: 50 held by partitions, recordings of 20 (stale) and 20 (fresh); 20
        // wanted. The stale one alone makes it.
        let cands = vec![c("fresh", 20, 1), c("stale", 20, stale)];
        assert_eq!(keys(&choose_evictions(cands, 100, 90, 40, 20)), ["stale"]);
        // 35 wanted: the stale one is not enough, and the fresh one is not taken for it.
        let cands = vec![c("fresh", 20, 1), c("stale", 20, stale)];
        assert!(choose_evictions(cands, 100, 90, 40, 35).is_empty());
    }
}
