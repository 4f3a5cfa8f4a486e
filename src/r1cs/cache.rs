//! Recorded circuits by shape key: the first synthesis of a key records the circuit (and
//! has its witness from that run); later ones compute only the witness and the mat-vec.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use bellpepper_core::Circuit;
use blstrs::Scalar;

use super::file;
use super::record::record;
use super::recorded::RecordedCircuit;
use super::witness::{witness, WitnessValues};
use crate::error::Result;
use crate::groth16::{Assignment, Witness};

/// Names a circuit shape: every circuit synthesized under one key must have the same R1CS
/// (for Filecoin, storage-proofs' circuit id, which also names the params file).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ShapeKey(Arc<str>);

impl ShapeKey {
    /// The key `name`.
    pub fn new(name: impl Into<Arc<str>>) -> Self {
        ShapeKey(name.into())
    }

    /// The key's name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// One key's recording; its lock is held while the circuit records, so that concurrent
/// first uses of a key record once.
type Slot = Arc<Mutex<Option<Arc<RecordedCircuit>>>>;

/// The recorded circuits of one engine (or any owner), by shape key.
///
/// The map's lock is held only to find a key's slot; a slot's lock while its circuit
/// records (the other keys' synthesis goes on).
#[derive(Debug, Default)]
pub struct R1csCache {
    slots: Mutex<HashMap<ShapeKey, Slot>>,
    recordings: AtomicU64,
    /// Where recordings are kept on disk (`<key>.cuzk-r1cs`), if anywhere.
    dir: Option<PathBuf>,
    loaded: AtomicU64,
}

impl R1csCache {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty cache that keeps its recordings in `dir` too ([`super::file`]): a key missing
    /// in memory is read from there when its file belongs to the params in use, and
    /// recorded and written there otherwise (a missing, stale or corrupt file).
    pub fn with_dir(dir: impl Into<PathBuf>) -> Self {
        R1csCache {
            dir: Some(dir.into()),
            ..Self::default()
        }
    }

    /// The file `key`'s recording is kept in, when the cache has a folder.
    pub fn file_of(&self, key: &ShapeKey) -> Option<PathBuf> {
        let name: String = key
            .as_str()
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        self.dir
            .as_ref()
            .map(|d| d.join(format!("{name}.cuzk-r1cs")))
    }

    /// Recordings read from files since the cache was made.
    pub fn loaded_from_files(&self) -> u64 {
        self.loaded.load(Relaxed)
    }

    /// `key`'s recording for `circuit` when the slot (locked by the caller) has none: from
    /// its file, else recorded (and the file written). Returns the circuit's witness values
    /// too (computed alone when the recording came from the file).
    fn fill<C: Circuit<Scalar>>(
        &self,
        key: &ShapeKey,
        circuit: C,
        vk: Option<&dyn Fn() -> Vec<u8>>,
    ) -> Result<(Arc<RecordedCircuit>, WitnessValues)> {
        let file = self.file_of(key).zip(vk.map(|f| f()));
        if let Some((path, vk)) = &file {
            match file::load(vk, path) {
                Ok(file::Loaded::Recording(r)) => {
                    self.loaded.fetch_add(1, Relaxed);
                    tracing::debug!(target: "cuzk::r1cs", key = key.as_str(), path = %path.display(), "recording read");
                    return Ok((Arc::new(r), witness(circuit)?));
                }
                Ok(file::Loaded::Missing) => {}
                Ok(file::Loaded::Stale(why) | file::Loaded::Corrupt(why)) => {
                    tracing::warn!(target: "cuzk::r1cs", key = key.as_str(), path = %path.display(), why, "recording file refused; recording again");
                }
                Err(e) => {
                    tracing::warn!(target: "cuzk::r1cs", key = key.as_str(), error = %e, "recording file unreadable; recording again");
                }
            }
        }
        let started = Instant::now();
        // A failed recording leaves the slot empty: the next circuit of the key records.
        let (r, values) = record(circuit)?;
        self.recordings.fetch_add(1, Relaxed);
        tracing::debug!(
            target: "cuzk::r1cs",
            key = key.as_str(),
            constraints = r.shape().constraints,
            bytes = r.bytes(),
            record_ms = started.elapsed().as_millis() as u64,
            "recorded"
        );
        if let Some((path, vk)) = &file {
            // The proof does not depend on the file: a folder that cannot be written costs
            // the next engine a recording, nothing more.
            if let Err(e) = file::save(&r, vk, path) {
                tracing::warn!(target: "cuzk::r1cs", key = key.as_str(), error = %e, "recording not written");
            }
        }
        Ok((Arc::new(r), values))
    }

    /// `key`'s recording, if it has one.
    pub fn get(&self, key: &ShapeKey) -> Option<Arc<RecordedCircuit>> {
        let slot = self.lock_slots().get(key).cloned()?;
        let got = slot.lock().unwrap_or_else(|p| p.into_inner()).clone();
        got
    }

    /// Synthesizes `circuit`, of shape `key`: records it if the key has no recording yet,
    /// else computes its witness and the mat-vec. The same [`Assignment`] as
    /// [`synthesize`](crate::groth16::synthesize) either way.
    pub fn synthesize<C: Circuit<Scalar>>(&self, key: &ShapeKey, circuit: C) -> Result<Assignment> {
        self.synthesize_with(key, circuit, None)
    }

    /// [`R1csCache::synthesize`], with the verifying key of the params the circuit proves
    /// with (`vk`, asked for only when the key's file is read or written).
    pub fn synthesize_with<C: Circuit<Scalar>>(
        &self,
        key: &ShapeKey,
        circuit: C,
        vk: Option<&dyn Fn() -> Vec<u8>>,
    ) -> Result<Assignment> {
        let slot = self.lock_slots().entry(key.clone()).or_default().clone();
        let mut recorded = slot.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(r) = recorded.clone() {
            drop(recorded);
            return r.synthesize(circuit);
        }
        let (r, values) = self.fill(key, circuit, vk)?;
        *recorded = Some(r.clone());
        drop(recorded);
        r.evaluate(values)
    }

    /// `circuit`'s witness, of shape `key`, and the key's recording (made from this circuit
    /// when the key has none yet): what a start phase that computes a, b and c itself needs
    /// ([`crate::groth16::DeferredEvaluations`]). No mat-vec runs here.
    pub fn witness<C: Circuit<Scalar>>(
        &self,
        key: &ShapeKey,
        circuit: C,
        vk: Option<&dyn Fn() -> Vec<u8>>,
    ) -> Result<(Arc<RecordedCircuit>, Witness)> {
        let slot = self.lock_slots().entry(key.clone()).or_default().clone();
        let mut recorded = slot.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(r) = recorded.clone() {
            drop(recorded);
            let w = r.witness_only(witness(circuit)?)?;
            return Ok((r, w));
        }
        let (r, values) = self.fill(key, circuit, vk)?;
        *recorded = Some(r.clone());
        drop(recorded);
        let w = r.witness_only(values)?;
        Ok((r, w))
    }

    /// Drops `key`'s recording (a circuit proving it again records it again).
    pub fn remove(&self, key: &ShapeKey) -> Option<Arc<RecordedCircuit>> {
        let slot = self.lock_slots().remove(key)?;
        let got = slot.lock().unwrap_or_else(|p| p.into_inner()).take();
        got
    }

    /// Drops `key`'s recording if nothing but the cache holds it (no synthesis of the key
    /// under way, no partition proving with it), so that dropping what is returned frees
    /// its memory. The map's lock is held throughout: no one can take the key's slot or
    /// recording between the check and the removal.
    pub fn remove_if_idle(&self, key: &ShapeKey) -> Option<Arc<RecordedCircuit>> {
        let mut slots = self.lock_slots();
        let slot = slots.get(key)?;
        // A slot handle held elsewhere is a synthesis of the key under way (it may be
        // waiting for the slot's lock, or reading its recording).
        if Arc::strong_count(slot) > 1 {
            return None;
        }
        let idle = {
            let recorded = slot.lock().unwrap_or_else(|p| p.into_inner());
            recorded.as_ref().is_some_and(|r| Arc::strong_count(r) == 1)
        };
        if !idle {
            return None;
        }
        let slot = slots.remove(key)?;
        let got = slot.lock().unwrap_or_else(|p| p.into_inner()).take();
        got
    }

    /// The keys recorded, in order.
    pub fn keys(&self) -> Vec<ShapeKey> {
        let slots: Vec<(ShapeKey, Slot)> = self
            .lock_slots()
            .iter()
            .map(|(k, s)| (k.clone(), s.clone()))
            .collect();
        let mut keys: Vec<ShapeKey> = slots
            .into_iter()
            .filter(|(_, s)| s.lock().unwrap_or_else(|p| p.into_inner()).is_some())
            .map(|(k, _)| k)
            .collect();
        keys.sort();
        keys
    }

    /// Circuits recorded since the cache was made (a key recorded again after
    /// [`R1csCache::remove`] counts again).
    pub fn recordings(&self) -> u64 {
        self.recordings.load(Relaxed)
    }

    /// Host bytes the recordings take.
    pub fn bytes(&self) -> usize {
        self.keys()
            .iter()
            .filter_map(|k| self.get(k))
            .map(|r| r.bytes())
            .sum()
    }

    fn lock_slots(&self) -> std::sync::MutexGuard<'_, HashMap<ShapeKey, Slot>> {
        self.slots.lock().unwrap_or_else(|p| p.into_inner())
    }
}
