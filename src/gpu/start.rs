//! The start phase on a CUDA device: the H polynomial through the device NTTs, the four
//! G1 MSMs (H, L, A, B_g1) and the G2 MSM (B_g2) through the device Pippenger.
//!
//! H runs wholly on the device (one upload of a, b and c, one download of H). The SRS's point
//! sections stay on the device between proofs ([`ResidentCache`], least recently used
//! evicted, within half the device's memory), so an MSM uploads only its scalars. With a
//! resident SRS the aux values go to the device once and the A and B_g1 density gathers run
//! there (`gather.rs`); without one, they run on the host and each MSM uploads its scalars.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use blstrs::{G1Affine, G1Projective, G2Projective, Scalar};
use ff::Field;

use super::release::Releaser;
use super::resident::{ResidentCache, ResidentSrs};
use super::{
    DeviceG1Points, DeviceR1cs, DeviceScalars, GpuContext, GpuError, MsmTimings, StagedInputs,
    Stager,
};
use crate::cpu::msm::gather;
use crate::cpu::ntt::Domain;
use crate::error::{Error, Result};
use crate::groth16::assignment::{Evaluations, Witness};
use crate::groth16::deferred::DeferredEvaluations;
use crate::groth16::density::Selection;
use crate::groth16::prover::{Backend, PartialProof, Staged, StartPhase, StartTimings};
use crate::groth16::srs::{Srs, SrsId};

/// Share of a device's memory limit its resident SRSs may take; the rest is left to the MSM
/// and NTT scratch buffers.
const RESIDENT_SHARE: f64 = 0.5;
/// Share of a device's memory limit the recorded matrices of the circuit it proves may take (a
/// 32GiB PoRep partition's are about 6 GB, a fifth of its SRS points).
const R1CS_SHARE: f64 = 0.15;

/// The recorded matrices of the last circuit shape this device proved through its
/// recording: one shape at a time (a device proves one kind at a time in practice; a
/// different one replaces it), within a byte budget.
struct ResidentR1cs {
    budget: usize,
    kept: Option<(u64, DeviceR1cs)>,
}

impl ResidentR1cs {
    fn new(budget: usize) -> Self {
        ResidentR1cs { budget, kept: None }
    }

    /// `d`'s matrices on this device, uploaded when they are not there yet; `None` when they
    /// do not fit the budget or the upload fails (the caller then evaluates on the host).
    fn get(&mut self, ctx: &mut GpuContext, d: &dyn DeferredEvaluations) -> Option<&DeviceR1cs> {
        if self.kept.as_ref().map(|(id, _)| *id) != Some(d.id()) {
            let ([a, b, c], table) = d.matrices();
            let bytes: usize = [a, b, c]
                .iter()
                .map(|m| std::mem::size_of_val(m.row_start) + m.cols.len() * 6)
                .sum::<usize>()
                + std::mem::size_of_val(table);
            if bytes > self.budget {
                return None;
            }
            self.kept = None; // the old shape's memory goes first
            let (inputs, aux) = d.variables();
            let on_device = ctx.upload_r1cs([a, b, c], table, inputs, aux).ok()?;
            self.kept = Some((d.id(), on_device));
        }
        self.kept.as_ref().map(|(_, m)| m)
    }
}

struct DeviceState {
    // Fields drop in this order: the resident buffers before the context they live in (the
    // context's drop may release the last hold on the device's primary context, after which
    // their frees would fail; compute-sanitizer's leak check reported them).
    resident: ResidentCache,
    r1cs: ResidentR1cs,
    ctx: GpuContext,
}

/// SRSs a device has proved with from resident points (so its scratch buffers are grown
/// for their size): a partition of one of these is staged ahead of its start phase. One
/// that is not waits for its first start phase, which would grow scratch while another
/// partition's staged buffers hold memory.
const WARM_SRSS: usize = 4;

/// The start phase on one CUDA device.
pub struct GpuStart {
    ordinal: u32,
    // Declared before `state`, so dropped first: the stager's stream and pinned buffers go
    // while the context in `state` still holds the device's primary context.
    /// The staging side (`stage.rs`); its lock is never taken by a start phase.
    stager: Mutex<Stager>,
    /// SRSs this device proved with from resident points, most recent last.
    warm: Mutex<Vec<SrsId>>,
    // The engine's device mutex already serializes start phases per device; this lock only
    // gives `&self` access to the context's `&mut` API and is never contended.
    state: Mutex<DeviceState>,
    evictions: AtomicU64,
    /// Where a start phase's consumed host evaluations are freed (`release.rs`).
    releaser: Releaser,
    /// Partitions staged ahead of their start phase, and those whose staging found no room.
    staged: AtomicU64,
    unstaged: AtomicU64,
}

impl std::fmt::Debug for GpuStart {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuStart").finish_non_exhaustive()
    }
}

impl GpuStart {
    /// A start phase on device `ordinal`; fails when there is no such device or no kernels.
    pub fn new(ordinal: usize) -> Result<Self> {
        Self::with_resident_budget(ordinal, None)
    }

    /// As [`GpuStart::new`], with at most `budget` bytes of resident SRS points (default:
    /// half the device's memory).
    pub fn with_resident_budget(ordinal: usize, budget: Option<usize>) -> Result<Self> {
        Self::with_limits(ordinal, None, budget)
    }

    /// As [`GpuStart::new`], allocating at most `limit` bytes of device memory in all
    /// (resident SRSs, recorded matrices and scratch; default: the device's memory), of
    /// which resident SRS points at most `resident_budget` (default: half the limit; the
    /// recorded matrices may take 15%). A start phase that finds no room evicts what is
    /// resident and runs again.
    pub fn with_limits(
        ordinal: usize,
        limit: Option<usize>,
        resident_budget: Option<usize>,
    ) -> Result<Self> {
        let mut ctx = GpuContext::new(ordinal)?;
        if let Some(limit) = limit {
            ctx.set_memory_limit(limit);
        }
        let share = |f: f64| (ctx.memory_limit() as f64 * f) as usize;
        Ok(GpuStart {
            ordinal: ordinal as u32,
            stager: Mutex::new(ctx.stager()?),
            warm: Mutex::new(Vec::new()),
            evictions: AtomicU64::new(0),
            releaser: Releaser::new(ordinal),
            staged: AtomicU64::new(0),
            unstaged: AtomicU64::new(0),
            state: Mutex::new(DeviceState {
                r1cs: ResidentR1cs::new(share(R1CS_SHARE)),
                resident: ResidentCache::new(resident_budget.unwrap_or(share(RESIDENT_SHARE))),
                ctx,
            }),
        })
    }

    /// Device bytes the resident SRS copies take now.
    pub fn resident_bytes(&self) -> usize {
        self.state
            .lock()
            .map(|s| s.resident.used())
            .unwrap_or_default()
    }
}

/// Σ scalars·points, from the resident copy when there is one; with its wall time, and
/// its transfers added to `timings`.
fn msm(
    ctx: &mut GpuContext,
    resident: Option<&DeviceG1Points>,
    points: &[G1Affine],
    scalars: &[Scalar],
    timings: &mut StartTimings,
) -> Result<(G1Projective, Duration)> {
    let t = Instant::now();
    let (p, m) = match resident {
        Some(r) => ctx.msm_g1_resident(r, 0, scalars)?,
        None => ctx.msm_g1_timed(points, scalars)?,
    };
    timings.host_to_device += ms(m.upload_ms);
    timings.device_to_host += ms(m.download_ms);
    Ok((p, t.elapsed()))
}

/// The results of the L, A, B_g1 and B_g2 MSMs, each with its time.
type Msms = ([(G1Projective, Duration); 3], (G2Projective, Duration));

/// The L, A, B_g1 and B_g2 MSMs against a resident SRS: the aux values are uploaded once; L
/// copies them on the device, A and both B sections gather their density-selected ones
/// there. B_g2 runs here rather than in the finalizer because on the host it is the longest
/// step of a proof, long enough to bound a GPU's throughput.
fn resident_msms(
    ctx: &mut GpuContext,
    kept: &ResidentSrs,
    aux: &DeviceScalars,
    w: &Witness,
    t: &mut StartTimings,
) -> Result<Msms> {
    let all = [(&[][..], Selection::All), (&w.aux[..], Selection::All)];
    Ok((
        [
            msm_gathered(ctx, aux, all, t, |c, f, s, sel| {
                c.msm_g1_resident_device_scalars(&kept.l, f, s, sel)
            })?,
            msm_gathered(ctx, aux, w.a_query(), t, |c, f, s, sel| {
                c.msm_g1_resident_device_scalars(&kept.a, f, s, sel)
            })?,
            msm_gathered(ctx, aux, w.b_query(), t, |c, f, s, sel| {
                c.msm_g1_resident_device_scalars(&kept.b_g1, f, s, sel)
            })?,
        ],
        msm_gathered(ctx, aux, w.b_query(), t, |c, f, s, sel| {
            c.msm_g2_resident_device_scalars(&kept.b_g2, f, s, sel)
        })?,
    ))
}

/// One MSM of `resident_msms`: the query's (few) selected inputs are gathered on the host
/// and put in front, its aux part is selected on the device from `aux` by `run`. The
/// gather's time goes to `t.gather`; the returned duration is the MSM's without it.
fn msm_gathered<P>(
    ctx: &mut GpuContext,
    aux: &DeviceScalars,
    [inputs, (_, selection)]: [(&[Scalar], Selection<'_>); 2],
    t: &mut StartTimings,
    run: impl FnOnce(
        &mut GpuContext,
        &[Scalar],
        &DeviceScalars,
        Selection<'_>,
    ) -> std::result::Result<(P, MsmTimings), GpuError>,
) -> Result<(P, Duration)> {
    let t0 = Instant::now();
    let front = gather(&[inputs]);
    let host = t0.elapsed();
    let (p, m) = run(ctx, &front, aux, selection)?;
    let gathering = host + ms(m.upload_ms);
    t.gather += gathering;
    t.device_to_host += ms(m.download_ms);
    Ok((p, t0.elapsed().saturating_sub(gathering)))
}

/// The same MSMs without a resident SRS: the A and B scalars are gathered on the host, and
/// every MSM uploads its points and scalars.
fn uploaded_msms(
    ctx: &mut GpuContext,
    srs: &Srs,
    w: &Witness,
    t: &mut StartTimings,
) -> Result<Msms> {
    let l = msm(ctx, None, &srs.l, &w.aux, t)?;
    let tg = Instant::now();
    let a_scalars = gather(&w.a_query());
    t.gather += tg.elapsed();
    let a = msm(ctx, None, &srs.a, &a_scalars, t)?;
    drop(a_scalars);
    let tg = Instant::now();
    let b_scalars = gather(&w.b_query());
    t.gather += tg.elapsed();
    let b_g1 = msm(ctx, None, &srs.b_g1, &b_scalars, t)?;
    let tb = Instant::now();
    let (b_g2, m) = ctx.msm_g2_timed(&srs.b_g2, &b_scalars)?;
    t.host_to_device += ms(m.upload_ms);
    t.device_to_host += ms(m.download_ms);
    Ok(([l, a, b_g1], (b_g2, tb.elapsed())))
}

/// A device-event figure in milliseconds as a duration.
fn ms(v: f32) -> Duration {
    Duration::from_secs_f64(f64::from(v.max(0.0)) / 1e3)
}

/// What a start phase's H step starts from.
enum HInput<'a> {
    /// a, b and c from the host.
    Host(Evaluations),
    /// a, b and c to compute from the witness with these recorded matrices.
    Deferred(&'a dyn DeferredEvaluations),
}

/// What an attempt computes the H step from, once it knows what is resident.
enum Planned<'e, 'd> {
    /// Host evaluations (given, or computed here from a recording that is not resident).
    Host(&'e mut Evaluations),
    /// The recorded matrices on the device.
    Deferred(&'d dyn DeferredEvaluations),
}

/// Uploads the witness's aux values (once per start phase: the mat-vec and the four MSMs
/// that take them all read this copy), timed into `t.host_to_device`.
fn upload_aux(ctx: &mut GpuContext, w: &Witness, t: &mut StartTimings) -> Result<DeviceScalars> {
    let tu = Instant::now();
    let aux = ctx.upload_scalars(&w.aux)?;
    t.host_to_device += tu.elapsed();
    Ok(aux)
}

/// The aux values on the device: staged ahead of the start phase, or uploaded now.
enum Aux<'s> {
    Staged(&'s DeviceScalars),
    Uploaded(DeviceScalars),
}

impl Aux<'_> {
    fn get(&self) -> &DeviceScalars {
        match self {
            Aux::Staged(a) => a,
            Aux::Uploaded(a) => a,
        }
    }
}

impl GpuStart {
    fn run(
        &self,
        srs: &Srs,
        mut input: HInput<'_>,
        w: &Witness,
        staged: Option<Staged>,
    ) -> Result<(PartialProof, StartTimings)> {
        // Staged by this device for this witness (another backend's staging is not ours).
        let mut staged = staged.and_then(Staged::into_inner::<StagedInputs>);
        if staged.as_ref().is_some_and(|s| s.aux.len() != w.aux.len()) {
            staged = None;
        }
        let entered = Instant::now();
        let mut guard = self
            .state
            .lock()
            .map_err(|_| Error::internal("a previous start phase on this device panicked"))?;
        let locked = entered.elapsed();
        let state = &mut *guard;
        state.ctx.take_out_of_memory();
        let result = match attempt(state, srs, &mut input, w, &mut staged) {
            // Out of device memory: what this device keeps between proofs (resident SRSs,
            // recorded matrices, scratch, twiddles) goes, and the partition runs once more
            // with the device to itself. Host evaluations a first attempt has transformed in
            // place cannot run again; the engine's retry covers those.
            Err(e) if state.ctx.take_out_of_memory() && input.reusable() => {
                tracing::warn!(target: "cuzk::gpu", device = self.ordinal, error = %e,
                    in_use = state.ctx.memory_in_use(), limit = state.ctx.memory_limit(),
                    "out of device memory; evicting what is resident and running the partition again");
                state.evict_all();
                self.evictions.fetch_add(1, Relaxed);
                attempt(state, srs, &mut input, w, &mut staged).map_err(|again| {
                    Error::new(
                        again.kind(),
                        format!(
                            "{again} (after evicting every resident SRS and matrix for an earlier {e})"
                        ),
                    )
                })
            }
            r => r,
        };
        let released = Instant::now();
        drop(guard);
        // The stub build's staged inputs hold nothing to release; the CUDA build's do.
        #[allow(clippy::drop_non_drop)]
        drop(staged);
        // Unmapping a, b and c would hold the device's mutex (the engine's) with no kernel.
        if let HInput::Host(spent) = input {
            self.releaser.release(spent);
        }
        let mut done = result?;
        done.phases.lock = locked;
        done.phases.release = released.elapsed();
        let p = &done.phases;
        let us = |d: Duration| d.as_micros() as u64;
        tracing::debug!(target: "cuzk::gpu_timing", device = self.ordinal,
            lock_us = us(p.lock), prepare_us = us(p.prepare), h_us = us(p.h), aux_us = us(p.aux),
            msms_us = us(p.msms), kernel_clock_us = us(p.kernel_clock),
            release_us = us(p.release), "start phase host parts");
        if done.resident {
            self.mark_warm(srs.id());
        }
        Ok((done.proof, done.timings))
    }

    /// Remembers that this device proved with `srs` from resident points.
    fn mark_warm(&self, id: SrsId) {
        if let Ok(mut warm) = self.warm.lock() {
            if warm.last() != Some(&id) {
                warm.retain(|&w| w != id);
                warm.push(id);
                if warm.len() > WARM_SRSS {
                    warm.remove(0);
                }
            }
        }
    }

    fn is_warm(&self, id: SrsId) -> bool {
        self.warm.lock().map(|w| w.contains(&id)).unwrap_or(false)
    }

    /// Partitions whose inputs were staged ahead of their start phase, and partitions of a
    /// warm SRS whose staging found no room on the device (they were started unstaged).
    pub fn staging_counts(&self) -> (u64, u64) {
        (self.staged.load(Relaxed), self.unstaged.load(Relaxed))
    }

    /// Device bytes this device's context holds now (resident points, matrices, scratch).
    pub fn memory_in_use(&self) -> usize {
        self.state
            .lock()
            .map(|s| s.ctx.memory_in_use())
            .unwrap_or_default()
    }

    /// The most device bytes this device's context held at once.
    pub fn memory_peak(&self) -> usize {
        self.state
            .lock()
            .map(|s| s.ctx.memory_peak())
            .unwrap_or_default()
    }

    /// Refuses this device's next `n` allocations as if its memory were full (a test hook
    /// for the eviction path).
    #[doc(hidden)]
    pub fn refuse_allocations(&self, n: usize) {
        if let Ok(s) = self.state.lock() {
            s.ctx.refuse_allocations(n);
        }
    }

    /// The MSM overrides on this device ([`GpuContext::set_msm_tuning`]): for benchmarks.
    pub fn set_msm_tuning(&self, tuning: super::MsmTuning) {
        if let Ok(mut s) = self.state.lock() {
            s.ctx.set_msm_tuning(tuning);
        }
    }

    /// Overlapped or in-order (the default) H-step uploads on this device
    /// ([`GpuContext::set_overlap_uploads`]): for benchmarks that compare the two.
    pub fn set_overlap_uploads(&self, on: bool) {
        if let Ok(mut s) = self.state.lock() {
            s.ctx.set_overlap_uploads(on);
        }
    }

    /// The scratch-poisoning diagnostic on this device ([`GpuContext::set_poison_scratch`]).
    #[doc(hidden)]
    pub fn set_poison_scratch(&self, on: bool) {
        if let Ok(mut s) = self.state.lock() {
            s.ctx.set_poison_scratch(on);
        }
    }

    /// The free-memory fill diagnostic on this device ([`GpuContext::fill_free_memory`]),
    /// between start phases: what a neighbour allocates next holds `byte` wherever it does
    /// not write.
    #[doc(hidden)]
    pub fn fill_free_memory(&self, byte: u8) -> Result<(usize, usize), GpuError> {
        let s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        s.ctx.fill_free_memory(byte)
    }

    /// Times a start phase ran out of device memory and evicted everything resident.
    pub fn evictions(&self) -> u64 {
        self.evictions.load(Relaxed)
    }
}

impl DeviceState {
    /// Frees everything kept between start phases.
    fn evict_all(&mut self) {
        self.resident.clear();
        self.r1cs.kept = None;
        self.ctx.release_scratch();
    }
}

impl HInput<'_> {
    /// Whether a second attempt can start from this input.
    fn reusable(&self) -> bool {
        match self {
            HInput::Host(e) => !e.a.is_empty(),
            HInput::Deferred(_) => true,
        }
    }
}

/// What one attempt returns: the proof's device share, its timings, and whether the SRS was
/// resident (the device is then warm for it: `GpuStart::stage` stages its partitions).
struct Attempt {
    proof: PartialProof,
    timings: StartTimings,
    resident: bool,
    /// Host time of its parts, for the debug log ([`HostPhases`]).
    phases: HostPhases,
}

/// Where a start phase's host time went, in order, logged at debug level under
/// `cuzk::gpu_timing` next to the device's kernel time: the time the device mutex is held
/// but no kernel runs is in one of these.
#[derive(Clone, Copy, Default, Debug)]
struct HostPhases {
    /// Waiting for this device's state (held by nothing else when the engine's mutex is).
    lock: Duration,
    /// From the attempt's start to the H step: the kernel clock, the resident lookups.
    prepare: Duration,
    /// The H step (the quotient and its MSM).
    h: Duration,
    /// The aux values' upload after the H step, when they were not on the device.
    aux: Duration,
    /// The L, A and B MSMs.
    msms: Duration,
    /// Reading the kernel clock at the end.
    kernel_clock: Duration,
    /// After the attempt: freeing its staged buffers and the rest of its state.
    release: Duration,
}

/// One start phase on the device. Host evaluations are taken from `input` only where the
/// step transforms them in place; staged evaluations are taken from `staged` when used (the
/// H step transforms them in place too), its aux values only read.
fn attempt(
    state: &mut DeviceState,
    srs: &Srs,
    input: &mut HInput<'_>,
    w: &Witness,
    staged: &mut Option<StagedInputs>,
) -> Result<Attempt> {
    let DeviceState {
        ctx,
        resident,
        r1cs,
    } = state;
    let entered = Instant::now();
    let mut phases = HostPhases::default();
    // Kernels a failed start phase left behind are not this one's.
    ctx.take_kernel_time()?;
    let mut timings = StartTimings::default();
    // Uploads the SRS's sections when they are not resident yet (host-timed).
    let t1 = Instant::now();
    let kept = resident.get(ctx, srs);
    let srs_upload = t1.elapsed();
    timings.host_to_device = srs_upload;
    let t = &mut timings;
    // The recorded path needs the SRS and the matrices resident; without either, a, b
    // and c are computed on the host and go the usual way.
    let mut evaluated;
    let input = match (&mut *input, kept) {
        (HInput::Deferred(d), Some(_)) if d.rows() >= 2 && r1cs.get(ctx, *d).is_some() => {
            Planned::Deferred(*d)
        }
        (HInput::Deferred(d), _) => {
            let t0 = Instant::now();
            evaluated = d.evaluate(w)?;
            t.matvec = t0.elapsed();
            Planned::Host(&mut evaluated)
        }
        (HInput::Host(e), _) => Planned::Host(e),
    };
    // Staged a, b and c serve one attempt (the H step transforms them in place).
    let staged_evaluations = staged.as_mut().and_then(|s| s.evaluations.take());
    // The aux values on the device, where the recorded mat-vec and the resident MSMs read
    // them (only with a resident SRS: without one the MSMs take host scalars): staged ahead
    // of this start phase; else uploaded here when the H step reads them (the recorded
    // mat-vec), or by the H step under its transforms (host evaluations), or after it.
    let mut aux = match (staged.as_ref(), kept, &input) {
        (_, None, _) => None,
        (Some(s), Some(_), _) => Some(Aux::Staged(&s.aux)),
        (None, Some(_), Planned::Deferred(_)) => Some(Aux::Uploaded(upload_aux(ctx, w, t)?)),
        (None, Some(_), Planned::Host(_)) => None,
    };
    let h_started = Instant::now();
    phases.prepare = h_started - entered;
    let (h, msm_h) = match (input, kept) {
        (Planned::Deferred(d), Some(kept)) => {
            let aux = aux.as_ref().expect("with a resident SRS").get();
            let matrices = r1cs.get(ctx, d).expect("made resident above");
            let n = d.rows().next_power_of_two();
            let (h, nt, matvec_ms, m) =
                ctx.h_msm_g1_resident_recorded(matrices, &w.input, aux, n, &kept.h)?;
            // The mat-vec that makes a, b and c, then the H step's NTTs.
            t.matvec = ms(matvec_ms);
            t.ntt = ms(nt.total_ms);
            t.host_to_device += ms(m.upload_ms);
            t.device_to_host += ms(m.download_ms);
            (h, ms(m.total_ms))
        }
        (Planned::Deferred(_), None) => unreachable!("deferred only with a resident SRS"),
        (Planned::Host(evaluations), Some(kept)) => {
            let on_device =
                staged_evaluations.filter(|e| e.n == evaluations.a.len().next_power_of_two());
            match on_device {
                Some(e) if e.n >= 2 => {
                    let (h, nt, m) = ctx.h_msm_g1_resident_staged(&e, &kept.h)?;
                    t.ntt = ms(nt.total_ms);
                    t.device_to_host += ms(m.download_ms);
                    (h, ms(m.total_ms))
                }
                _ => {
                    let upload = aux.is_none().then_some(&w.aux[..]);
                    let (h, uploaded) = host_h(ctx, Some(kept), srs, evaluations, upload, t)?;
                    aux = aux.or(uploaded.map(Aux::Uploaded));
                    h
                }
            }
        }
        (Planned::Host(evaluations), None) => host_h(ctx, None, srs, evaluations, None, t)?.0,
    };
    phases.h = h_started.elapsed();
    if let (None, Some(_)) = (&aux, kept) {
        aux = Some(Aux::Uploaded(upload_aux(ctx, w, t)?));
    }
    let t2 = Instant::now();
    phases.aux = t2 - h_started - phases.h;
    let ([(l, msm_l), (a, msm_a), (b_g1, msm_b_g1)], (b_g2, _msm_b_g2)) = match (kept, &aux) {
        (Some(kept), Some(aux)) => resident_msms(ctx, kept, aux.get(), w, t)?,
        _ => uploaded_msms(ctx, srs, w, t)?,
    };
    phases.msms = t2.elapsed();
    timings.msm = srs_upload + msm_h + phases.msms;
    let clock = Instant::now();
    let kernel_time = ctx.take_kernel_time()?;
    phases.kernel_clock = clock.elapsed();
    timings.kernels = kernel_time.active;
    timings.kernel_span = kernel_time.span;
    Ok(Attempt {
        proof: PartialProof {
            h,
            l,
            a,
            b_g1,
            b_g2: Some(b_g2),
        },
        timings: StartTimings {
            msm_h,
            msm_l,
            msm_a,
            msm_b_g1,
            ..timings
        },
        resident: kept.is_some(),
        phases,
    })
}

/// The H step and MSM from host evaluations: on the device with the quotient going straight
/// into the resident H points, or through the host without a resident SRS. With the points
/// resident, `aux` (the witness's aux values, when they are not on the device yet) goes up
/// under the quotient's transforms and comes back on the device.
fn host_h(
    ctx: &mut GpuContext,
    kept: Option<&ResidentSrs>,
    srs: &Srs,
    evaluations: &mut Evaluations,
    aux: Option<&[Scalar]>,
    t: &mut StartTimings,
) -> Result<((G1Projective, Duration), Option<DeviceScalars>)> {
    let n = evaluations.a.len().next_power_of_two();
    for v in [&mut evaluations.a, &mut evaluations.b, &mut evaluations.c] {
        v.resize(n, Scalar::ZERO);
    }
    match kept {
        // The quotient's coefficients go from the transforms into the H MSM on the device;
        // the evaluations are only read, and kept until the start phase ends, so that a
        // second attempt can start from them (their budget share is held until then anyway).
        Some(kept) if n >= 2 => {
            let Evaluations { a, b, c } = &*evaluations;
            let (h, nt, m, uploaded) = match aux {
                Some(aux) => {
                    let (h, nt, m, d) = ctx.h_msm_g1_resident_uploading([a, b, c], &kept.h, aux)?;
                    (h, nt, m, Some(d))
                }
                None => {
                    let (h, nt, m) = ctx.h_msm_g1_resident(a, b, c, &kept.h)?;
                    (h, nt, m, None)
                }
            };
            t.ntt = ms(nt.total_ms);
            t.ntt_upload = ms(nt.upload_ms);
            t.host_to_device += t.ntt_upload + ms(nt.overlapped_upload_ms) + ms(m.upload_ms);
            t.device_to_host += ms(m.download_ms);
            Ok(((h, ms(m.total_ms)), uploaded))
        }
        _ => {
            // Transformed in place: taken, so a second attempt knows it cannot rerun.
            let Evaluations { mut a, b, c } = std::mem::take(evaluations);
            let t0 = Instant::now();
            let h = if n < 2 {
                // A one-element domain has no H coefficient; the device transform needs n ≥ 2.
                crate::cpu::ntt::h_coefficients(&*Domain::cached(0)?, a, b, c)
            } else {
                let nt = ctx.h_coefficients(&mut a, &b, &c)?;
                t.ntt_upload = ms(nt.upload_ms);
                t.ntt_download = ms(nt.download_ms);
                t.host_to_device += t.ntt_upload + ms(nt.overlapped_upload_ms);
                t.device_to_host += t.ntt_download;
                drop((b, c));
                a.truncate(n - 1);
                a
            };
            t.ntt = t0.elapsed();
            Ok((msm(ctx, kept.map(|r| &r.h), &srs.h, &h, t)?, None))
        }
    }
}

impl StartPhase for GpuStart {
    fn name(&self) -> &'static str {
        "cuda"
    }

    fn backend(&self) -> Backend {
        Backend::Cuda {
            ordinal: self.ordinal,
        }
    }

    fn start(
        &self,
        srs: &Srs,
        evaluations: Evaluations,
        w: &Witness,
    ) -> Result<(PartialProof, StartTimings)> {
        self.run(srs, HInput::Host(evaluations), w, None)
    }

    fn start_deferred(
        &self,
        srs: &Srs,
        deferred: &dyn DeferredEvaluations,
        w: &Witness,
    ) -> Result<(PartialProof, StartTimings)> {
        self.run(srs, HInput::Deferred(deferred), w, None)
    }

    /// Uploads the aux values (and host evaluations, zero-padded to the domain) on the
    /// device's staging stream, through pinned buffers kept for the device, while another
    /// partition may be running there (`stage.rs`). Only for an SRS this device has proved
    /// with from resident points, and only when its memory has room; otherwise `None`.
    fn stage(
        &self,
        srs: &Srs,
        evaluations: Option<&Evaluations>,
        w: &Witness,
    ) -> Result<Option<Staged>> {
        if !self.is_warm(srs.id()) {
            return Ok(None);
        }
        let mut stager = self
            .stager
            .lock()
            .map_err(|_| Error::internal("a previous staging on this device panicked"))?;
        let evaluations = evaluations.filter(|e| !e.a.is_empty()).map(|e| {
            let n = e.a.len().next_power_of_two();
            ([&e.a[..], &e.b[..], &e.c[..]], n)
        });
        match stager.stage(&w.aux, evaluations)? {
            Some(inputs) => {
                self.staged.fetch_add(1, Relaxed);
                Ok(Some(Staged::new(inputs)))
            }
            None => {
                self.unstaged.fetch_add(1, Relaxed);
                Ok(None)
            }
        }
    }

    fn start_staged(
        &self,
        srs: &Srs,
        evaluations: Evaluations,
        w: &Witness,
        staged: Staged,
    ) -> Result<(PartialProof, StartTimings)> {
        self.run(srs, HInput::Host(evaluations), w, Some(staged))
    }

    fn start_deferred_staged(
        &self,
        srs: &Srs,
        deferred: &dyn DeferredEvaluations,
        w: &Witness,
        staged: Staged,
    ) -> Result<(PartialProof, StartTimings)> {
        self.run(srs, HInput::Deferred(deferred), w, Some(staged))
    }

    /// On the device, when the SRS and the matrices are resident there (they are unless
    /// they do not fit their shares of the device's memory: then this one partition's a, b
    /// and c are made on the host, beyond the engine's budget).
    fn evaluates_deferred_off_host(&self) -> bool {
        true
    }

    fn preload(&self, srs: &Srs) -> Result<()> {
        let mut guard = self
            .state
            .lock()
            .map_err(|_| Error::internal("a previous start phase on this device panicked"))?;
        let DeviceState { ctx, resident, .. } = &mut *guard;
        // An SRS that does not fit the resident budget is not kept: its proofs upload the
        // points as they go, as without a preload.
        let _ = resident.get(ctx, srs);
        Ok(())
    }
}
