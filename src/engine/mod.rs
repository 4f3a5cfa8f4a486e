//! The proving engine: keeps every device busy while a backlog exists, and times every wait.
//!
//! ```text
//! submit(JobRequest)
//!   ├─ Ready partitions: validate ─ reserve budget ───────────────────────┐
//!   └─ circuits: SynthQueue (priority, job seq, partition)                │
//!        synthesis threads: reserve budget (shape from the SRS),          │
//!        synthesize (keyed: witness + mat-vec, R1csCache), validate,      │
//!        take a ReadyGate place (not PoSt) ───────────────────────────────┤
//!                                                                         ▼
//!                                       PartitionQueue (priority, job seq, partition)
//!                                                  │ pop (queue lock: submitters, workers)
//!                      per device, N workers ◄─────┘ (give the ReadyGate place back)
//!                        DeviceMutex { StartPhase::start }   (wait and hold timed apart)
//!                        device fault? re-queue the partition (faults.rs) ──► PartitionQueue
//!                        release the evaluations' reservation (atomic)
//!                        ──channel──► finalizers: finish (B_g2, assembly), store the proof
//!                                     (job lock), release the rest (atomic), report freed
//!                                     bytes (atomic) ──► Trimmer: malloc_trim(0), no lock
//! ```
//!
//! Locks, and who takes them:
//! - the synthesis queue's lock: `submit`, `Job::cancel`, synthesis threads, shutdown;
//! - the ready gate's lock: synthesis threads, and a device worker giving a place back;
//! - the R1CS cache's map lock: synthesis threads, only to find a shape key's slot; a
//!   slot's lock: the synthesis threads of that key, held while its first circuit records;
//! - the queue's lock: `submit`, `Job::cancel`, device workers, synthesis threads, shutdown,
//!   and a finalizer re-queueing a partition whose proof failed verification (one push, no
//!   other lock held; only on a device fault);
//! - a device's mutex: that device's workers, around `StartPhase::start` only;
//! - a job's state lock: finalizers, the host's `finish`/`poll`/`cancel`, shutdown.
//!
//! So between two partitions a device worker takes only the queue's lock, which no finalizer
//! and not the trimmer ever takes; it hands work to the finalizers by channel, and releases
//! memory and reports freed bytes through atomics. The trimmer holds no lock at all. A
//! finalizer that fails a job cannot remove the job's queued partitions itself (that would
//! be the queue's lock); it asks the queue to do so on its next pop, also by channel.

mod budget;
mod device;
mod faults;
mod finalizer;
mod hang;
mod job;
mod lock;
mod params;
mod queue;
mod recordings;
mod request;
mod synthesis;
mod trimmer;
mod worker;

pub use budget::{default_budget, default_safety_margin, total_memory, MemoryBudget, Reservation};
pub use device::{Acquired, Device, DeviceGuard, DeviceMutex};
pub use faults::{FaultInjector, FaultPolicy, Injected, InjectedFault};
pub use job::{Job, JobStatus, JobTimings};
pub use lock::{engine_locks_held, TrackedGuard, TrackedMutex};
pub use params::{LoadedParams, ParamsRegistry};
pub use queue::{PartitionQueue, Priority, QueueKey};
pub use request::{JobInput, JobKind, JobRequest, PartitionCircuit, JOB_KINDS};
pub use trimmer::{
    bound_arena_tops, malloc_trim, FreedCounter, TrimFn, TrimPolicy, Trimmer, ARENA_TOP_BYTES,
};

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::Sender;

use crate::error::{Error, ErrorKind, Result};
use crate::groth16::{Assignment, DeferredEvaluations, PointCheck, Proof, Randomness, Srs};
use crate::r1cs::{R1csCache, ShapeKey};
use crate::stats::{Stats, StatsSnapshot, MAX_DEVICES};
use job::JobShared;

/// What `prove_start` does when the memory budget cannot take a job yet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AdmissionPolicy {
    /// Wait up to this long for memory to be released, then fail with `Timeout`.
    Wait(Duration),
    /// Fail with `ResourceExhausted` at once.
    FailFast,
}

/// The (r, s) randomizers of a job's proofs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RandomnessChoice {
    /// One pair per partition, given by the caller (reproducible proofs).
    Given(Vec<Randomness>),
    /// Fresh pairs from the operating system's RNG.
    Random,
}

/// A callback that sees a partition's job sequence number and index.
pub type PartitionHook = Arc<dyn Fn(u64, usize) + Send + Sync>;

/// Observation points for tests and instrumentation. Each runs on an engine thread in the
/// middle of its work, so it should be quick; a panic in one fails only that partition's job.
#[derive(Clone, Default)]
pub struct Hooks {
    /// Run by a synthesis thread once the partition's memory is reserved, just before it
    /// synthesizes; its time counts as the partition's synthesis (a test holds the stage
    /// here to fix what is queued when it moves on).
    pub on_synthesis_start: Option<PartitionHook>,
    /// Run by a device worker inside the device mutex (or the CPU fallback's lock), just
    /// before `StartPhase::start`.
    pub on_device_start: Option<PartitionHook>,
    /// Run by a finalizer just before it finishes a partition.
    pub on_finalize: Option<PartitionHook>,
    /// Run by the trimmer in place of `malloc_trim(0)`.
    pub trim: Option<TrimFn>,
    /// Makes devices fail on demand (start phases that fail, results that do not verify).
    pub faults: Option<Arc<FaultInjector>>,
}

impl std::fmt::Debug for Hooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hooks")
            .field("on_synthesis_start", &self.on_synthesis_start.is_some())
            .field("on_device_start", &self.on_device_start.is_some())
            .field("on_finalize", &self.on_finalize.is_some())
            .field("trim", &self.trim.is_some())
            .field("faults", &self.faults.is_some())
            .finish()
    }
}

/// How to build an [`Engine`].
#[derive(Clone, Debug)]
pub struct EngineConfig {
    /// The devices to run start phases on. The default, [`Device::detect`], is every CUDA GPU
    /// (each a [`GpuStart`](crate::gpu::GpuStart)), or one CPU device where there is none.
    pub devices: Vec<Device>,
    /// Workers per device. Two let one worker take and stage its next partition while the
    /// other holds the device, so the device does not idle between partitions.
    pub workers_per_device: usize,
    /// Host memory the engine may reserve for jobs; `None` for [`default_budget`].
    pub memory_budget: Option<u64>,
    /// Finalizer threads (B_g2 MSM and proof assembly on the CPU).
    pub finalizers: usize,
    /// When to call `malloc_trim(0)`.
    pub trim: TrimPolicy,
    /// Whether the engine fixes glibc's trim and mmap thresholds when it starts
    /// ([`bound_arena_tops`]), so that the free tops of the per-thread arenas go back to the
    /// OS too and the host's resident memory returns to about where it was once the engine's
    /// jobs are done. Process-wide and permanent for the host's allocator; off by default.
    pub trim_arena_tops: bool,
    /// What `submit` does when the budget cannot take a job of ready partitions yet.
    pub admission: AdmissionPolicy,
    /// Threads of the synthesis stage; `0` for one per core.
    pub synthesis_threads: usize,
    /// Most synthesized partitions waiting for a device (PoSt partitions do not count);
    /// `0` for the default, one per device worker.
    pub max_ready: usize,
    /// Whether partitions with a recorded R1CS reach the devices as a witness only, a, b
    /// and c left to the start phase (a GPU computes them on the device:
    /// [`StartPhase::start_deferred`](crate::groth16::StartPhase::start_deferred)). `None`:
    /// when any device is a GPU. The CPU computes them in its start phase either way.
    pub defer_evaluations: Option<bool>,
    /// A folder where recorded circuits are kept between engines (`<shape key>.cuzk-r1cs`,
    /// tied to their params' verifying key; a stale or corrupt file is recorded again and
    /// rewritten). `None`: in memory only.
    pub recordings_dir: Option<std::path::PathBuf>,
    /// Retries of partitions a device failed, and when a failing device leaves rotation.
    pub faults: FaultPolicy,
    /// Test and instrumentation hooks.
    pub hooks: Hooks,
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            devices: Device::detect(),
            workers_per_device: 2,
            memory_budget: None,
            finalizers: 2,
            trim: TrimPolicy::default(),
            trim_arena_tops: false,
            admission: AdmissionPolicy::Wait(Duration::from_secs(600)),
            synthesis_threads: 0,
            max_ready: 0,
            defer_evaluations: None,
            recordings_dir: None,
            faults: FaultPolicy::default(),
            hooks: Hooks::default(),
        }
    }
}

/// A queued partition and everything it holds.
pub(crate) struct Work {
    pub(crate) job: Arc<JobShared>,
    pub(crate) index: usize,
    pub(crate) assignment: Assignment,
    /// When set, `assignment` has no evaluations: the start phase computes them from the
    /// witness with these recorded matrices.
    pub(crate) deferred: Option<Arc<dyn DeferredEvaluations>>,
    /// Released when the start phase ends.
    pub(crate) eval_res: Reservation,
    /// Released when the proof is assembled.
    pub(crate) rest_res: Reservation,
    pub(crate) queued_at: Instant,
    /// Held by a synthesized partition until a device worker takes it.
    pub(crate) ready_slot: Option<synthesis::ReadySlot>,
    /// The device faults of its earlier attempts (empty on its first).
    pub(crate) faults: Vec<faults::Fault>,
    /// Its device attempts are over: the CPU fallback proves it (`FaultPolicy::cpu_fallback`).
    pub(crate) cpu_fallback: bool,
}

impl Work {
    /// Whether device `device` already failed this partition.
    pub(crate) fn tried_on(&self, device: usize) -> bool {
        self.faults.iter().any(|f| f.device_index == device)
    }
}

/// The state every engine thread and every job handle shares.
pub(crate) struct Shared {
    pub(crate) queue: PartitionQueue<Work>,
    pub(crate) synth_queue: PartitionQueue<synthesis::SynthWork>,
    pub(crate) ready_gate: Arc<synthesis::ReadyGate>,
    pub(crate) stats: Arc<Stats>,
    pub(crate) budget: MemoryBudget,
    pub(crate) freed: FreedCounter,
    /// The recorded circuits the synthesis stage synthesizes keyed partitions from.
    pub(crate) r1cs: R1csCache,
    /// [`EngineConfig::defer_evaluations`], resolved.
    pub(crate) defer_evaluations: bool,
    /// Deferred partitions hold only their witness on the host: evaluations deferred, and
    /// every device makes them off the host.
    pub(crate) witness_only: bool,
    /// The budget's share held by each recorded circuit shape while it is kept.
    pub(crate) recordings: recordings::RecordingCharges,
    /// Which devices are in rotation; the fault policy.
    pub(crate) rotation: faults::Rotation,
    /// Held around a start phase on the CPU fallback: one at a time, since the CPU backend
    /// uses every core.
    pub(crate) cpu_fallback: TrackedMutex<()>,
    /// Start phases abandoned past their deadline that have not returned yet.
    pub(crate) stuck_calls: AtomicUsize,
    /// [`Hooks::on_synthesis_start`].
    pub(crate) on_synthesis_start: Option<PartitionHook>,
    next_seq: AtomicU64,
}

impl Shared {
    /// Queues a partition for the devices; once the queue is closed (only while the engine
    /// is being dropped) its job ends instead and the partition is dropped.
    pub(crate) fn push_partition(&self, key: QueueKey, work: Work) {
        if let Err(items) = self.queue.push_all(vec![(key, work)]) {
            for (_, w) in &items {
                w.job.end(
                    self,
                    Error::new(
                        ErrorKind::ShuttingDown,
                        "the engine shut down before this job was proved",
                    ),
                );
            }
            self.drop_work(items.into_iter().map(|(_, w)| w));
        }
    }

    /// Drops partitions that will not be proved, counting them and reporting their memory.
    pub(crate) fn drop_work(&self, work: impl IntoIterator<Item = Work>) {
        for w in work {
            self.stats.partitions_dropped.fetch_add(1, Relaxed);
            let bytes = w.eval_res.bytes() + w.rest_res.bytes();
            drop(w);
            self.report_freed(bytes);
        }
    }

    fn snapshot(&self) -> StatsSnapshot {
        self.stats.snapshot(crate::stats::Gauges {
            queue_depth: self.queue.depth(),
            synthesis_queue_depth: self.synth_queue.len(),
            ready_waiting: self.ready_gate.waiting() as u64,
        })
    }

    /// Drops partitions that will not be synthesized (they hold no memory yet).
    pub(crate) fn drop_synth_work(&self, work: impl IntoIterator<Item = synthesis::SynthWork>) {
        for w in work {
            self.stats.partitions_dropped.fetch_add(1, Relaxed);
            drop(w);
        }
    }

    /// Tells the trimmer `bytes` were freed; lock-free.
    pub(crate) fn report_freed(&self, bytes: u64) {
        self.freed.report(bytes);
        self.stats.bytes_freed_reported.fetch_add(bytes, Relaxed);
    }

    /// Evicts recorded circuits (never `keep`'s) when a partition of `need` bytes cannot
    /// otherwise get its room ([`recordings`] says when); their memory goes at once and
    /// is reported to the trimmer.
    pub(crate) fn make_room(&self, need: u64, keep: Option<&ShapeKey>) {
        let (evicted, charged) = self
            .recordings
            .make_room(&self.r1cs, &self.budget, need, keep);
        if evicted.is_empty() {
            return;
        }
        let bytes: u64 = evicted.iter().map(|r| r.bytes() as u64).sum();
        self.stats
            .recordings_evicted
            .fetch_add(evicted.len() as u64, Relaxed);
        drop(evicted);
        self.report_freed(bytes.max(charged));
    }

    /// Frees what a started partition still holds and reports it to the trimmer.
    pub(crate) fn drop_work_parts(&self, rest: Reservation, witness: crate::groth16::Witness) {
        let bytes = rest.bytes();
        drop(witness);
        drop(rest);
        self.report_freed(bytes);
    }

    /// Removes job `seq`'s queued partitions (waiting for synthesis or for a device) and
    /// frees them.
    pub(crate) fn drop_queued(&self, seq: u64) {
        let removed = self.synth_queue.remove_job(seq);
        self.drop_synth_work(removed.into_iter().map(|(_, w)| w));
        let removed = self.queue.remove_job(seq);
        self.drop_work(removed.into_iter().map(|(_, w)| w));
    }
}

/// The proving engine. Dropping it fails the jobs still queued with `ShuttingDown`, lets the
/// partitions already on a device or a finalizer complete, and joins every thread.
pub struct Engine {
    shared: Arc<Shared>,
    params: ParamsRegistry,
    config: EngineConfig,
    workers: Vec<JoinHandle<()>>,
    synthesizers: Vec<JoinHandle<()>>,
    finalizers: Vec<JoinHandle<()>>,
    to_finalizers: Option<Sender<finalizer::Finalize>>,
    trimmer: Option<Trimmer>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("devices", &self.config.devices)
            .field("workers_per_device", &self.config.workers_per_device)
            .field("finalizers", &self.config.finalizers)
            .field("memory_budget", &self.shared.budget.limit())
            .finish()
    }
}

fn spawn_error(what: &str, e: std::io::Error) -> Error {
    Error::internal(format!("cannot start the {what} thread: {e}"))
}

impl Engine {
    /// Starts the engine's threads: `workers_per_device` per device, the finalizers and the
    /// trimmer.
    pub fn new(config: EngineConfig) -> Result<Engine> {
        if config.devices.is_empty() || config.devices.len() > MAX_DEVICES {
            return Err(Error::invalid_argument(format!(
                "an engine needs 1 to {MAX_DEVICES} devices, got {}",
                config.devices.len()
            )));
        }
        if config.workers_per_device == 0 || config.finalizers == 0 {
            return Err(Error::invalid_argument(
                "workers_per_device and finalizers must be at least 1",
            ));
        }
        if config.faults.start_deadline == Some(Duration::ZERO) {
            return Err(Error::invalid_argument(
                "faults.start_deadline must be longer than zero (None: no deadline)",
            ));
        }
        if config.faults.max_attempts == 0 {
            return Err(Error::invalid_argument(
                "faults.max_attempts must be at least 1 (the first attempt counts)",
            ));
        }
        let limit = config.memory_budget.unwrap_or_else(default_budget);
        let backends: Vec<_> = config.devices.iter().map(|d| d.backend.backend()).collect();
        let stats = Arc::new(Stats::new(&backends));
        if config.trim_arena_tops && !bound_arena_tops() {
            tracing::warn!(target: "cuzk::engine", "trim_arena_tops: the allocator is not glibc's; nothing set");
        }
        let trimmer = Trimmer::start(config.trim, config.hooks.trim.clone(), stats.clone())
            .map_err(|e| spawn_error("trimmer", e))?;
        let max_ready = match config.max_ready {
            0 => config.devices.len() * config.workers_per_device,
            n => n,
        };
        let defer_evaluations = config.defer_evaluations.unwrap_or_else(|| {
            backends
                .iter()
                .any(|b| b.kind() == crate::groth16::BackendKind::Cuda)
        });
        let shared = Arc::new(Shared {
            queue: PartitionQueue::new(),
            synth_queue: PartitionQueue::new(),
            ready_gate: synthesis::ReadyGate::new(max_ready),
            budget: MemoryBudget::with_stats(limit, stats.clone()),
            freed: trimmer.counter(),
            rotation: faults::Rotation::new(
                config.faults,
                config.devices.iter().map(|d| d.name.clone()).collect(),
                stats.clone(),
            ),
            cpu_fallback: TrackedMutex::new(()),
            stuck_calls: AtomicUsize::new(0),
            on_synthesis_start: config.hooks.on_synthesis_start.clone(),
            stats,
            r1cs: match &config.recordings_dir {
                Some(dir) => R1csCache::with_dir(dir),
                None => R1csCache::new(),
            },
            defer_evaluations,
            witness_only: defer_evaluations
                && config
                    .devices
                    .iter()
                    .all(|d| d.backend.evaluates_deferred_off_host()),
            recordings: recordings::RecordingCharges::default(),
            next_seq: AtomicU64::new(0),
        });
        // Unbounded: the budget already bounds the partitions in flight, and a worker must
        // never wait for a finalizer to make room.
        let (tx, rx) = crossbeam_channel::unbounded();
        let mut engine = Engine {
            params: ParamsRegistry::new(shared.stats.clone()),
            shared: shared.clone(),
            workers: Vec::new(),
            synthesizers: Vec::new(),
            finalizers: Vec::new(),
            to_finalizers: Some(tx.clone()),
            trimmer: Some(trimmer),
            config,
        };
        // `tx` and `rx` move into `spawn` so that, if it fails, they are gone before the
        // engine's drop waits for the finalizers to see the channel disconnect.
        engine.spawn(tx, rx)?;
        Ok(engine)
    }

    fn spawn(
        &mut self,
        tx: Sender<finalizer::Finalize>,
        rx: crossbeam_channel::Receiver<finalizer::Finalize>,
    ) -> Result<()> {
        let shared = self.shared.clone();
        for i in 0..self.config.finalizers {
            let (rx, shared, hook) = (
                rx.clone(),
                shared.clone(),
                self.config.hooks.on_finalize.clone(),
            );
            let t = std::thread::Builder::new()
                .name(format!("cuzk-fin{i}"))
                .spawn(move || finalizer::run(rx, shared, hook))
                .map_err(|e| spawn_error("finalizer", e))?;
            self.finalizers.push(t);
        }
        let synthesis_threads = match self.config.synthesis_threads {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        };
        shared
            .stats
            .synthesis_threads
            .store(synthesis_threads as u64, Relaxed);
        for i in 0..synthesis_threads {
            let shared = shared.clone();
            let t = std::thread::Builder::new()
                .name(format!("cuzk-syn{i}"))
                .spawn(move || synthesis::run(shared))
                .map_err(|e| spawn_error("synthesis", e))?;
            self.synthesizers.push(t);
        }
        for (d, device) in self.config.devices.iter().enumerate() {
            let mutex = Arc::new(DeviceMutex::new(d, shared.stats.clone()));
            for w in 0..self.config.workers_per_device {
                let ctx = worker::Worker {
                    device_index: d,
                    device: device.clone(),
                    mutex: mutex.clone(),
                    shared: shared.clone(),
                    to_finalizers: tx.clone(),
                    on_device_start: self.config.hooks.on_device_start.clone(),
                    faults: self.config.hooks.faults.clone(),
                };
                let t = std::thread::Builder::new()
                    .name(format!("cuzk-{}-w{w}", device.name))
                    .spawn(move || ctx.run())
                    .map_err(|e| spawn_error("device worker", e))?;
                self.workers.push(t);
            }
        }
        Ok(())
    }

    /// Submits a job and returns as soon as its partitions are queued.
    ///
    /// Ready partitions are validated against the SRS first (one bad partition fails the
    /// whole job with an error naming it) and the job's memory is reserved at once: a job
    /// larger than the whole budget fails with `ResourceExhausted`, one that does not fit yet
    /// waits or fails as the admission policy says. Circuits to synthesize are queued for the
    /// synthesis stage at once; each reserves its own partition's memory when a synthesis
    /// thread takes it, so only a single partition larger than the whole budget is refused.
    pub fn submit(&self, request: JobRequest) -> Result<Job> {
        let kind = request.kind;
        let r = self.admit(request);
        match &r {
            Ok(job) => {
                let stats = &self.shared.stats;
                stats.jobs_admitted.fetch_add(1, Relaxed);
                stats.jobs_by_kind[kind.index()].fetch_add(1, Relaxed);
                let n = job.partitions() as u64;
                stats.partitions_admitted.fetch_add(n, Relaxed);
                stats.partitions_by_kind[kind.index()].fetch_add(n, Relaxed);
            }
            Err(_) => {
                self.shared.stats.jobs_rejected.fetch_add(1, Relaxed);
            }
        }
        r
    }

    /// [`Engine::submit`] of ready partitions of [`JobKind::Other`], unverified.
    pub fn prove_start(
        &self,
        srs: Arc<Srs>,
        partitions: Vec<Assignment>,
        rs: RandomnessChoice,
        priority: Priority,
    ) -> Result<Job> {
        self.prove_start_with_admission(srs, partitions, rs, priority, self.config.admission)
    }

    /// [`Engine::prove_start`] with this job's own admission policy in place of the
    /// engine's (the C ABI's per-job admission timeout).
    pub fn prove_start_with_admission(
        &self,
        srs: Arc<Srs>,
        partitions: Vec<Assignment>,
        rs: RandomnessChoice,
        priority: Priority,
        admission: AdmissionPolicy,
    ) -> Result<Job> {
        self.submit(JobRequest {
            randomness: rs,
            priority: Some(priority),
            admission: Some(admission),
            // The host synthesized these itself and verifies where it wants to.
            verify: false,
            ..JobRequest::new(srs, JobInput::Ready(partitions), JobKind::Other)
        })
    }

    fn admit(&self, request: JobRequest) -> Result<Job> {
        let JobRequest {
            srs,
            input,
            randomness,
            kind,
            priority,
            admission,
            verify,
            params_load,
        } = request;
        let priority = priority.unwrap_or_else(|| kind.priority());
        let n = input.len();
        if n == 0 {
            return Err(Error::invalid_argument(
                "a job needs at least one partition",
            ));
        }
        let rs = match randomness {
            RandomnessChoice::Given(v) if v.len() == n => v,
            RandomnessChoice::Given(v) => {
                return Err(Error::invalid_argument(format!(
                    "{n} partitions but {} (r, s) pairs",
                    v.len()
                )))
            }
            RandomnessChoice::Random => (0..n).map(|_| Randomness::random()).collect(),
        };
        let key = |seq, partition| QueueKey {
            priority,
            job_seq: seq,
            partition,
        };
        // A sequence number only for a job that is admitted: seq is admission order.
        let new_job = |srs| {
            Arc::new(JobShared::new(
                self.shared.next_seq.fetch_add(1, Relaxed),
                priority,
                kind,
                srs,
                rs,
                verify,
                params_load,
            ))
        };
        let partitions = match input {
            JobInput::Ready(partitions) => partitions,
            JobInput::Synthesize(circuits) => {
                let shape = request::srs_shape(&srs);
                let one = shape.evaluation_bytes() + shape.witness_bytes();
                if one as u64 > self.shared.budget.limit() {
                    return Err(Error::new(
                        ErrorKind::ResourceExhausted,
                        format!(
                            "one partition of this circuit needs {one} bytes of host memory \
                             but the budget is {} bytes: it can never be synthesized",
                            self.shared.budget.limit()
                        ),
                    ));
                }
                let job = new_job(srs);
                let now = Instant::now();
                let items = circuits
                    .into_iter()
                    .enumerate()
                    .map(|(index, circuit)| {
                        let work = synthesis::SynthWork {
                            job: job.clone(),
                            index,
                            circuit,
                            queued_at: now,
                        };
                        (key(job.seq, index), work)
                    })
                    .collect();
                if let Err(items) = self.shared.synth_queue.push_all(items) {
                    return Err(self.refuse_at_shutdown(&job, items.len()));
                }
                return Ok(Job {
                    job,
                    shared: self.shared.clone(),
                });
            }
        };

        let mut shares = Vec::with_capacity(n);
        for (i, a) in partitions.iter().enumerate() {
            a.validate(&srs)
                .map_err(|e| e.context(format!("partition {i}")))?;
            let shape = a.shape();
            let rest = shape.witness_bytes() + std::mem::size_of::<Proof>();
            shares.push((shape.evaluation_bytes() as u64, rest as u64));
        }
        let total = shares
            .iter()
            .try_fold(0u64, |acc, (e, r)| acc.checked_add(e + r))
            .ok_or_else(|| Error::new(ErrorKind::ResourceExhausted, "job size overflows"))?;

        let t = Instant::now();
        // Recordings are evicted for a job's room only where [`recordings`] allows.
        self.shared.make_room(total, None);
        let mut reservation = match admission.unwrap_or(self.config.admission) {
            AdmissionPolicy::FailFast => self.shared.budget.try_reserve(total),
            AdmissionPolicy::Wait(timeout) => self.shared.budget.reserve(total, timeout),
        }?;
        self.shared.stats.admission_wait.record(t.elapsed());

        let job = new_job(srs);
        let now = Instant::now();
        let items: Vec<_> = partitions
            .into_iter()
            .zip(shares)
            .enumerate()
            .map(|(index, (assignment, (eval, rest)))| {
                let work = Work {
                    job: job.clone(),
                    index,
                    assignment,
                    deferred: None,
                    eval_res: reservation.split(eval),
                    rest_res: reservation.split(rest),
                    queued_at: now,
                    ready_slot: None,
                    faults: Vec::new(),
                    cpu_fallback: false,
                };
                (key(job.seq, index), work)
            })
            .collect();
        if let Err(items) = self.shared.queue.push_all(items) {
            let e = self.refuse_at_shutdown(&job, 0);
            self.shared.drop_work(items.into_iter().map(|(_, w)| w));
            return Err(e);
        }
        Ok(Job {
            job,
            shared: self.shared.clone(),
        })
    }

    /// Ends a job the closed queues refused (only while the engine is being dropped).
    fn refuse_at_shutdown(&self, job: &JobShared, unsynthesized: usize) -> Error {
        let e = Error::new(ErrorKind::ShuttingDown, "the engine is shutting down");
        job.end(&self.shared, e.clone());
        self.shared
            .stats
            .partitions_dropped
            .fetch_add(unsynthesized as u64, Relaxed);
        e
    }
    /// A snapshot of the engine's statistics.
    pub fn stats(&self) -> StatsSnapshot {
        self.shared.snapshot()
    }

    /// Shuts the engine down as dropping it does, and returns the final statistics: every
    /// partition accounted for, every thread joined.
    pub fn shutdown(self) -> StatsSnapshot {
        let shared = self.shared.clone();
        drop(self);
        shared.snapshot()
    }

    /// The params files this engine has loaded, shared by all its jobs.
    pub fn params(&self) -> &ParamsRegistry {
        &self.params
    }

    /// A host's start-up preload of a circuit's params: loads `path` into the registry (see
    /// [`ParamsRegistry::preload`]) and makes it ready on every device (a GPU keeps its
    /// points resident, within its budget), so that the circuit's first proof waits for
    /// neither. A device's upload waits for a start phase running there.
    pub fn preload_params(&self, path: &std::path::Path, check: PointCheck) -> Result<Arc<Srs>> {
        let srs = self.params.preload(path, check)?;
        for d in &self.config.devices {
            d.backend.preload(&srs)?;
        }
        Ok(srs)
    }

    /// The circuits this engine's synthesis stage has recorded, by shape key (kept for the
    /// engine's lifetime; [`R1csCache::remove`] drops one).
    pub fn recorded_circuits(&self) -> &R1csCache {
        &self.shared.r1cs
    }

    /// The memory budget.
    pub fn memory_budget(&self) -> &MemoryBudget {
        &self.shared.budget
    }

    /// Start phases abandoned past `faults.start_deadline` whose call has not returned yet
    /// (each holds its memory reserved and its device out of rotation until it does; an
    /// engine dropped meanwhile leaves its thread behind).
    pub fn stuck_calls(&self) -> usize {
        self.shared.stuck_calls.load(Relaxed)
    }

    /// The devices, in stats order.
    pub fn devices(&self) -> &[Device] {
        &self.config.devices
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        let shut = || {
            Error::new(
                ErrorKind::ShuttingDown,
                "the engine shut down before this job was proved",
            )
        };
        // Synthesis first: a synthesis in progress finishes (a circuit cannot be stopped
        // half way) and its partition reaches the device queue, which is closed next.
        let left = self.shared.synth_queue.close();
        for (_, w) in &left {
            w.job.end(&self.shared, shut());
        }
        self.shared
            .drop_synth_work(left.into_iter().map(|(_, w)| w));
        for t in self.synthesizers.drain(..) {
            let _ = t.join();
        }
        let left = self.shared.queue.close();
        // Workers resting while their device is out of rotation see the queue closed.
        self.shared.rotation.wake_all();
        for (_, w) in &left {
            w.job.end(&self.shared, shut());
        }
        self.shared.drop_work(left.into_iter().map(|(_, w)| w));
        for t in self.workers.drain(..) {
            let _ = t.join();
        }
        // The workers' senders are gone with them; this was the last one, so the finalizers
        // drain what is left and stop.
        self.to_finalizers.take();
        for t in self.finalizers.drain(..) {
            let _ = t.join();
        }
        // Nothing is admitted any more: the recordings' charges go with the engine's jobs.
        self.shared.recordings.clear();
        self.trimmer.take();
    }
}

/// A panic payload's message.
pub(crate) fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "non-string panic payload".into())
}
