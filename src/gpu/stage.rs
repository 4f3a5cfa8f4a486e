//! A start phase's inputs moved to the device ahead of it, outside the device mutex.
//!
//! Without staging, a start phase began by uploading its partition's aux values (and, with
//! host evaluations, a, b and c) while holding the device: the device sat idle for the copy
//! (2^22 constraints: 0.5 GB, about a tenth of the start phase). The engine's worker now
//! calls [`GpuStart::stage`](super::GpuStart) before it takes the device mutex, while the
//! device's other worker runs its partition's kernels: the copies run on this stager's own
//! stream, through two pinned host buffers made once per device and reused by every
//! partition (no pinned allocation per partition), into device buffers the start phase then
//! reads in place. Only one worker stages at a time (the stager's lock, never taken by a
//! start phase).
//!
//! Staged buffers are optional allocations: they are made only when the device's ledger has
//! room (`Ledger::admit_if_room`), and a refusal is not remembered, so a partition that
//! cannot be staged is started as before rather than making the running one evict what is
//! resident.

use std::sync::Arc;

use blstrs::Scalar;
use cudarc::driver::{result, sys};

use blstrs::G1Projective;

use super::driver::{
    alloc_if_room, check, DevBuf, DevPtr, DeviceG1Points, GpuContext, Staging, STAGE_MIN,
};
use super::gather::DeviceScalars;
use super::memory::Ledger;
use super::{GpuError, MsmTimings, NttTimings};

/// A partition's inputs on the device, uploaded before its start phase took the device.
pub(crate) struct StagedInputs {
    /// The witness's aux values: what the recorded mat-vec and the L, A, B MSMs read.
    pub(crate) aux: DeviceScalars,
    /// Host evaluations a, b and c, each zero-padded to the domain; the H step transforms
    /// them in place, so they serve one attempt.
    pub(crate) evaluations: Option<StagedEvaluations>,
}

/// a, b and c on the device, `n` (a power of two) elements each.
pub(crate) struct StagedEvaluations {
    bufs: [DevBuf; 3],
    pub(crate) n: usize,
}

impl GpuContext {
    /// A stager for this device (its own stream; pinned buffers at its first large copy).
    pub(crate) fn stager(&self) -> Result<Stager, GpuError> {
        self.bind()?;
        Stager::new(self.cu_ctx(), self.stream(), self.ledger().clone())
    }

    /// The H step and MSM from staged a, b and c (transformed in place; see
    /// `h_msm_g1_resident_device`).
    pub(crate) fn h_msm_g1_resident_staged(
        &mut self,
        e: &StagedEvaluations,
        points: &DeviceG1Points,
    ) -> Result<(G1Projective, NttTimings, MsmTimings), GpuError> {
        let ptrs = [e.bufs[0].ptr(), e.bufs[1].ptr(), e.bufs[2].ptr()];
        self.h_msm_g1_resident_device(ptrs, e.n, points)
    }
}

/// The staging side of one device: its own copy stream and pooled pinned buffers.
pub(crate) struct Stager {
    ctx: sys::CUcontext,
    stream: sys::CUstream,
    /// The context's compute stream, where the start phases read the staged buffers: they
    /// are freed there, after the last of that work, without waiting for the device.
    compute: sys::CUstream,
    /// Made at the first large copy, then reused.
    pinned: Option<Staging>,
    ledger: Arc<Ledger>,
}

// SAFETY: driver handles of one context, used by one thread at a time (the owner's lock);
// every method binds the context first.
unsafe impl Send for Stager {}

impl Stager {
    /// A stager for the device whose primary context is `ctx` (held by the device's
    /// `GpuContext` for longer than this stager lives; current on this thread), counting in
    /// its `ledger`.
    fn new(
        ctx: sys::CUcontext,
        compute: sys::CUstream,
        ledger: Arc<Ledger>,
    ) -> Result<Self, GpuError> {
        let stream = check(
            result::stream::create(result::stream::StreamKind::NonBlocking),
            "cuStreamCreate",
        )?;
        Ok(Stager {
            ctx,
            stream,
            compute,
            pinned: None,
            ledger,
        })
    }

    /// Uploads `aux`, and `evaluations` zero-padded to `n` elements each, into new device
    /// buffers; returns when they are there. `Ok(None)` when the device has no room for them.
    pub(crate) fn stage(
        &mut self,
        aux: &[Scalar],
        evaluations: Option<([&[Scalar]; 3], usize)>,
    ) -> Result<Option<StagedInputs>, GpuError> {
        check(
            unsafe { result::ctx::set_current(self.ctx) },
            "cuCtxSetCurrent",
        )?;
        let staged = self.stage_on_stream(aux, evaluations);
        // Whatever comes back, this stream's allocations and copies are done before any of
        // the buffers is freed (on the compute stream, which does not wait for this one).
        let synced = check(
            unsafe { result::stream::synchronize(self.stream) },
            "cuStreamSynchronize",
        );
        let staged = staged?;
        synced?;
        Ok(staged)
    }

    /// [`Self::stage`]'s allocations and copies, queued on this stager's stream.
    fn stage_on_stream(
        &mut self,
        aux: &[Scalar],
        evaluations: Option<([&[Scalar]; 3], usize)>,
    ) -> Result<Option<StagedInputs>, GpuError> {
        let alloc = |bytes| alloc_if_room(&self.ledger, bytes, self.stream, self.compute);
        let Some(aux_buf) = alloc(std::mem::size_of_val(aux))? else {
            return Ok(None);
        };
        let evaluations = match evaluations {
            None => None,
            Some((abc, n)) => {
                let mut bufs = Vec::with_capacity(3);
                for _ in 0..3 {
                    match alloc(n * 32)? {
                        Some(b) => bufs.push(b),
                        None => return Ok(None),
                    }
                }
                let Ok(bufs) = <[DevBuf; 3]>::try_from(bufs) else {
                    unreachable!("three buffers were pushed")
                };
                for (buf, v) in bufs.iter().zip(abc) {
                    self.upload(buf.ptr(), v)?;
                    if v.len() < n {
                        let tail = buf.ptr::<Scalar>().add(v.len());
                        check(
                            unsafe {
                                result::memset_d8_async(
                                    tail.addr(),
                                    0,
                                    (n - v.len()) * 32,
                                    self.stream,
                                )
                            },
                            "cuMemsetD8Async",
                        )?;
                    }
                }
                Some(StagedEvaluations { bufs, n })
            }
        };
        self.upload(aux_buf.ptr(), aux)?;
        Ok(Some(StagedInputs {
            aux: DeviceScalars::new(aux_buf, aux.len(), self.ctx),
            evaluations,
        }))
    }

    /// `src` into `dst` on this stager's stream: large copies through the pinned buffers,
    /// small ones straight from pageable memory.
    fn upload(&mut self, dst: DevPtr<Scalar>, src: &[Scalar]) -> Result<(), GpuError> {
        if std::mem::size_of_val(src) < STAGE_MIN {
            return check(
                unsafe { result::memcpy_htod_async(dst.addr(), src, self.stream) },
                "cuMemcpyHtoDAsync",
            );
        }
        if self.pinned.is_none() {
            self.pinned = Some(Staging::new()?);
        }
        let pinned = self.pinned.as_ref().expect("made above");
        pinned.upload(dst, src, self.stream, None, None)
    }
}

impl Drop for Stager {
    fn drop(&mut self) {
        // The pinned buffers and the stream go while the context is still held.
        let _ = unsafe { result::ctx::set_current(self.ctx) };
        let _ = unsafe { result::stream::synchronize(self.stream) };
        self.pinned = None;
        let _ = unsafe { result::stream::destroy(self.stream) };
    }
}
