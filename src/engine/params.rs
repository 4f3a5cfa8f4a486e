//! The engine's params registry: each `.params` file is loaded once and shared by every job
//! of its circuit until it is evicted.
//!
//! The registry's lock is held only to find or insert an entry; the load itself happens
//! outside it, under the entry's own once-cell, so a 45 GiB file being decoded for one
//! circuit never holds back a job of another, and two jobs asking for the same file wait for
//! one load instead of making two copies.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use crate::error::{Error, ErrorKind, Result};
use crate::groth16::{PointCheck, Srs, SrsId};
use crate::stats::Stats;

type Slot = Arc<OnceLock<std::result::Result<Arc<Srs>, Error>>>;

/// One loaded params file, as [`ParamsRegistry::loaded`] lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadedParams {
    /// The file.
    pub path: PathBuf,
    /// The SRS's identity (what the GPUs' resident copies key on).
    pub id: SrsId,
    /// Host bytes the decoded SRS takes.
    pub bytes: usize,
}

/// Params files loaded by an engine, by path.
pub struct ParamsRegistry {
    entries: Mutex<HashMap<PathBuf, Slot>>,
    stats: Arc<Stats>,
}

impl std::fmt::Debug for ParamsRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ParamsRegistry")
            .field("loaded", &self.loaded())
            .finish()
    }
}

impl ParamsRegistry {
    pub(crate) fn new(stats: Arc<Stats>) -> Self {
        ParamsRegistry {
            entries: Mutex::new(HashMap::new()),
            stats,
        }
    }

    fn slot(&self, path: &Path) -> Slot {
        let mut map = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        map.entry(path.to_path_buf()).or_default().clone()
    }

    /// The SRS in `path`, loaded now if no job loaded it before; with the time this call
    /// spent loading it (zero when it was already loaded). A failed load is not remembered:
    /// the next call tries again (the file may have been fetched meanwhile).
    pub fn get(&self, path: &Path, check: PointCheck) -> Result<(Arc<Srs>, Duration)> {
        let slot = self.slot(path);
        let mut loaded_here = Duration::ZERO;
        let result = slot.get_or_init(|| {
            let t = Instant::now();
            let r = load(path, check).map(Arc::new);
            loaded_here = t.elapsed();
            if r.is_ok() {
                self.stats.params_load.record(loaded_here);
                tracing::info!(
                    target: "cuzk::params",
                    path = %path.display(),
                    load_ms = loaded_here.as_millis() as u64,
                    "params loaded"
                );
            }
            r
        });
        match result {
            Ok(srs) => Ok((srs.clone(), loaded_here)),
            Err(e) => {
                let e = e.clone();
                self.forget_failed(path, &slot);
                Err(e)
            }
        }
    }

    /// Loads `path` now (a host's start-up preload), so that no job waits for it later.
    pub fn preload(&self, path: &Path, check: PointCheck) -> Result<Arc<Srs>> {
        self.get(path, check).map(|(srs, _)| srs)
    }

    /// Drops the registry's hold on `path`; returns whether it was loaded. Jobs that hold
    /// the SRS keep it until they end; the next job of the circuit loads it again.
    pub fn evict(&self, path: &Path) -> bool {
        let mut map = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        map.remove(path)
            .is_some_and(|slot| matches!(slot.get(), Some(Ok(_))))
    }

    /// The params files loaded now.
    pub fn loaded(&self) -> Vec<LoadedParams> {
        let map = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        let mut out: Vec<_> = map
            .iter()
            .filter_map(|(path, slot)| match slot.get() {
                Some(Ok(srs)) => Some(LoadedParams {
                    path: path.clone(),
                    id: srs.id(),
                    bytes: srs.memory_bytes(),
                }),
                _ => None,
            })
            .collect();
        out.sort_by(|a, b| a.path.cmp(&b.path));
        out
    }

    fn forget_failed(&self, path: &Path, slot: &Slot) {
        let mut map = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        if map.get(path).is_some_and(|s| Arc::ptr_eq(s, slot)) {
            map.remove(path);
        }
    }
}

fn load(path: &Path, check: PointCheck) -> Result<Srs> {
    if !path.exists() {
        return Err(Error::new(
            ErrorKind::ParamsNotFound,
            format!(
                "params file {} not found (the parameter cache is FIL_PROOFS_PARAMETER_CACHE, \
                 by default /var/tmp/filecoin-proof-parameters)",
                path.display()
            ),
        ));
    }
    Srs::load(path, check)
}
