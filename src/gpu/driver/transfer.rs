//! Copies between host and device. Large host copies go through two pinned buffers that
//! alternate (the host copy into one overlaps the DMA out of the other): pageable copies run
//! at a fraction of the link's speed, and pinning a caller's buffer per call costs more than
//! the copy. The pinned buffers are made once per owner and reused by every later copy.

use std::ffi::c_void;

use cudarc::driver::result;
use cudarc::driver::sys;

use super::buffer::DevPtr;
use super::probe::check;
use super::{Event, GpuContext};
use crate::gpu::GpuError;

/// Bytes of one pinned staging buffer.
pub(crate) const STAGE_BYTES: usize = 32 << 20;
/// Copies below this go straight from pageable memory.
pub(crate) const STAGE_MIN: usize = 4 << 20;

/// Two pinned host buffers and the events that say when the DMA using each has finished.
pub(crate) struct Staging {
    bufs: [*mut u8; 2],
    done: [sys::CUevent; 2],
    /// Recorded on a stream whose earlier work the copies must follow.
    ordered: sys::CUevent,
}

// SAFETY: pinned host memory and events of one context, used by one thread at a time (the
// owner's `&mut`).
unsafe impl Send for Staging {}

/// The work to run on each piece of a staged upload as soon as it is on the device:
/// `then(first, count)` for elements `first..first + count`.
pub(crate) type OnPiece<'a> = &'a mut dyn FnMut(usize, usize) -> Result<(), GpuError>;

impl Staging {
    /// Pins the two buffers (the context must be current).
    pub(crate) fn new() -> Result<Staging, GpuError> {
        let mut st = Staging {
            bufs: [std::ptr::null_mut(); 2],
            done: [std::ptr::null_mut(); 2],
            ordered: std::ptr::null_mut(),
        };
        st.ordered = check(
            result::event::create(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING),
            "cuEventCreate",
        )?;
        for k in 0..2 {
            st.bufs[k] = check(
                unsafe { result::malloc_host(STAGE_BYTES, 0) },
                "cuMemHostAlloc",
            )? as *mut u8;
            st.done[k] = check(
                result::event::create(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING),
                "cuEventCreate",
            )?;
        }
        Ok(st)
    }

    /// Copies `src` to `dst` on `copy_stream` through the pinned buffers, after the work
    /// already queued on `after` (when given: `dst` may still be read there). With `then`,
    /// `compute` waits for each piece and `then` is called for it, so the kernels it queues
    /// there run while the next pieces are still being copied. Pieces are whole elements.
    /// Returns when `src` may be reused (every DMA out of the pinned buffers has finished).
    pub(crate) fn upload<T: Copy>(
        &self,
        dst: DevPtr<T>,
        src: &[T],
        copy_stream: sys::CUstream,
        after: Option<sys::CUstream>,
        mut then: Option<(sys::CUstream, OnPiece<'_>)>,
    ) -> Result<(), GpuError> {
        let bytes = std::mem::size_of_val(src);
        let elem = std::mem::size_of::<T>().max(1);
        // SAFETY: T is Copy plain data (field elements, points); viewed as bytes for the copy.
        let src = unsafe { std::slice::from_raw_parts(src.as_ptr() as *const u8, bytes) };
        if let Some(after) = after {
            check(
                unsafe { result::event::record(self.ordered, after) },
                "cuEventRecord",
            )?;
            check(
                unsafe {
                    result::stream::wait_event(
                        copy_stream,
                        self.ordered,
                        sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT,
                    )
                },
                "cuStreamWaitEvent",
            )?;
        }
        // Pieces of whole elements, so that `then` sees whole scalars or points (32 MB is not a
        // multiple of a 96-byte point).
        let piece = STAGE_BYTES - STAGE_BYTES % elem;
        for (i, chunk) in src.chunks(piece).enumerate() {
            let k = i % 2;
            // The buffer is free once the DMA issued from it two chunks ago has finished.
            check(
                unsafe { result::event::synchronize(self.done[k]) },
                "cuEventSynchronize",
            )?;
            // SAFETY: bufs[k] holds STAGE_BYTES >= chunk.len() bytes, and no DMA reads it now.
            let stage = unsafe { std::slice::from_raw_parts_mut(self.bufs[k], chunk.len()) };
            par_copy(stage, chunk);
            let off = (i * piece) as u64;
            check(
                unsafe { result::memcpy_htod_async(dst.addr() + off, &*stage, copy_stream) },
                "cuMemcpyHtoDAsync",
            )?;
            check(
                unsafe { result::event::record(self.done[k], copy_stream) },
                "cuEventRecord",
            )?;
            if let Some((compute, f)) = then.as_mut() {
                check(
                    unsafe {
                        result::stream::wait_event(
                            *compute,
                            self.done[k],
                            sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT,
                        )
                    },
                    "cuStreamWaitEvent",
                )?;
                f(i * piece / elem, chunk.len() / elem)?;
            }
        }
        // Both buffers must be idle before the next call (or Drop) touches them.
        for k in 0..2 {
            check(
                unsafe { result::event::synchronize(self.done[k]) },
                "cuEventSynchronize",
            )?;
        }
        Ok(())
    }

    /// Copies `src` on the device into `dst` on the host, through the pinned buffers, on
    /// `stream` after its earlier work; returns when `dst` holds the data.
    fn download(
        &self,
        dst: &mut [u8],
        src: sys::CUdeviceptr,
        stream: sys::CUstream,
    ) -> Result<(), GpuError> {
        let chunks: Vec<&mut [u8]> = dst.chunks_mut(STAGE_BYTES).collect();
        let mut pending: Option<(usize, &mut [u8])> = None;
        for (i, out) in chunks.into_iter().enumerate() {
            let k = i % 2;
            let len = out.len();
            // SAFETY: bufs[k] is idle: its previous chunk was copied out before this point.
            let stage = unsafe { std::slice::from_raw_parts_mut(self.bufs[k], len) };
            let off = (i * STAGE_BYTES) as u64;
            check(
                unsafe { result::memcpy_dtoh_async(stage, src + off, stream) },
                "cuMemcpyDtoHAsync",
            )?;
            check(
                unsafe { result::event::record(self.done[k], stream) },
                "cuEventRecord",
            )?;
            // While this chunk moves, copy the previous one out of its buffer.
            if let Some((j, prev)) = pending.take() {
                self.drain(j, prev)?;
            }
            pending = Some((i, out));
        }
        if let Some((j, prev)) = pending.take() {
            self.drain(j, prev)?;
        }
        Ok(())
    }

    /// Copies chunk `j` out of its pinned buffer once its DMA has finished.
    fn drain(&self, j: usize, out: &mut [u8]) -> Result<(), GpuError> {
        let k = j % 2;
        check(
            unsafe { result::event::synchronize(self.done[k]) },
            "cuEventSynchronize",
        )?;
        // SAFETY: the DMA into bufs[k] has finished; out.len() <= STAGE_BYTES.
        let stage = unsafe { std::slice::from_raw_parts(self.bufs[k], out.len()) };
        par_copy(out, stage);
        Ok(())
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        for k in 0..2 {
            unsafe {
                if !self.bufs[k].is_null() {
                    let _ = result::free_host(self.bufs[k] as *mut c_void);
                }
                if !self.done[k].is_null() {
                    let _ = result::event::destroy(self.done[k]);
                }
            }
        }
        if !self.ordered.is_null() {
            let _ = unsafe { result::event::destroy(self.ordered) };
        }
    }
}

/// dst.copy_from_slice(src) over several threads (a single core copies far slower than
/// the PCIe link moves data).
fn par_copy(dst: &mut [u8], src: &[u8]) {
    use rayon::prelude::*;
    dst.par_chunks_mut(1 << 20)
        .zip(src.par_chunks(1 << 20))
        .for_each(|(d, s)| d.copy_from_slice(s));
}

impl GpuContext {
    /// Host → device copy on the compute stream, from pageable memory (small copies).
    pub(crate) fn upload<T>(&self, dst: DevPtr<T>, src: &[T]) -> Result<(), GpuError> {
        check(
            unsafe { result::memcpy_htod_async(dst.addr(), src, self.stream()) },
            "cuMemcpyHtoDAsync",
        )
    }

    /// Host → device copy of a large buffer through the pinned staging buffers, ordered on
    /// the compute stream. Returns when `src` may be reused.
    pub(crate) fn upload_staged<T: Copy>(
        &mut self,
        dst: DevPtr<T>,
        src: &[T],
    ) -> Result<(), GpuError> {
        if std::mem::size_of_val(src) < STAGE_MIN {
            return self.upload(dst, src);
        }
        let stream = self.stream();
        self.staging()?.upload(dst, src, stream, None, None)
    }

    /// [`Self::upload_staged`] with work on each piece as soon as it has arrived: the copies
    /// run on the copy stream after the work already on the compute stream, and
    /// `then(ctx, first, count)` is called for elements `first..first + count` once the
    /// compute stream waits for them, so the kernels it launches there run while the next
    /// pieces are still being copied.
    pub(crate) fn upload_staged_then<T: Copy>(
        &mut self,
        dst: DevPtr<T>,
        src: &[T],
        then: &mut dyn FnMut(&Self, usize, usize) -> Result<(), GpuError>,
    ) -> Result<(), GpuError> {
        if std::mem::size_of_val(src) < STAGE_MIN {
            self.upload(dst, src)?;
            return then(self, 0, src.len());
        }
        let (stream, copy_stream) = (self.stream(), self.copy_stream);
        self.staging()?;
        let this = &*self;
        let st = this.staging.as_ref().expect("made above");
        let mut on_piece = |first: usize, count: usize| then(this, first, count);
        st.upload(
            dst,
            src,
            copy_stream,
            Some(stream),
            Some((stream, &mut on_piece)),
        )
    }

    /// Host → device copy of a large buffer through the pinned staging buffers on the copy
    /// stream, after `after` (an event on the compute stream) but beside the work queued
    /// there since, which must not touch `dst`. Returns when every piece is on the device,
    /// so whatever is queued after the call sees the data, while what was queued between
    /// `after` and the call runs under the copy. (Small copies go on the compute stream, in
    /// order.)
    pub(crate) fn upload_staged_beside<T: Copy>(
        &mut self,
        dst: DevPtr<T>,
        src: &[T],
        after: &Event,
    ) -> Result<(), GpuError> {
        if std::mem::size_of_val(src) < STAGE_MIN {
            return self.upload(dst, src);
        }
        let copy_stream = self.copy_stream;
        check(
            unsafe {
                result::stream::wait_event(
                    copy_stream,
                    after.raw(),
                    sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT,
                )
            },
            "cuStreamWaitEvent",
        )?;
        self.staging()?.upload(dst, src, copy_stream, None, None)
    }

    /// Device → host copy of a large buffer through the pinned staging buffers; returns
    /// when `dst` holds the data (earlier work on the stream included).
    pub(crate) fn download_staged<T: Copy>(
        &mut self,
        dst: &mut [T],
        src: DevPtr<T>,
    ) -> Result<(), GpuError> {
        let bytes = std::mem::size_of_val(dst);
        if bytes < STAGE_MIN {
            self.download(dst, src)?;
            return self.sync();
        }
        // SAFETY: as in upload; every byte of dst is written.
        let dst = unsafe { std::slice::from_raw_parts_mut(dst.as_mut_ptr() as *mut u8, bytes) };
        let stream = self.stream();
        self.staging()?.download(dst, src.addr(), stream)
    }

    /// The pinned buffers, made at the first large copy.
    fn staging(&mut self) -> Result<&Staging, GpuError> {
        if self.staging.is_none() {
            self.staging = Some(Staging::new()?);
        }
        Ok(self.staging.as_ref().expect("just set"))
    }

    /// `len` elements from `src` to `dst`, both on the device, ordered on the stream. Timed
    /// on the kernel timeline: the device's own work, as a driver's utilization counts it.
    pub(crate) fn copy_on_device<T>(
        &self,
        dst: DevPtr<T>,
        src: DevPtr<T>,
        len: usize,
    ) -> Result<(), GpuError> {
        let stream = self.stream();
        self.timeline().borrow_mut().bracket(stream, || {
            check(
                unsafe {
                    result::memcpy_dtod_async(
                        dst.addr(),
                        src.addr(),
                        len * std::mem::size_of::<T>(),
                        stream,
                    )
                },
                "cuMemcpyDtoDAsync",
            )
        })
    }

    /// Device → host copy on the compute stream (small copies; the caller synchronizes).
    pub(crate) fn download<T>(&self, dst: &mut [T], src: DevPtr<T>) -> Result<(), GpuError> {
        check(
            unsafe { result::memcpy_dtoh_async(dst, src.addr(), self.stream()) },
            "cuMemcpyDtoHAsync",
        )
    }

    /// Zeroes `len` elements at `dst`, ordered on the stream. Timed on the kernel timeline (a
    /// memset runs as a kernel, and the driver's utilization counts it).
    pub(crate) fn memset0<T>(&self, dst: DevPtr<T>, len: usize) -> Result<(), GpuError> {
        let stream = self.stream();
        self.timeline().borrow_mut().bracket(stream, || {
            check(
                unsafe {
                    result::memset_d8_async(dst.addr(), 0, len * std::mem::size_of::<T>(), stream)
                },
                "cuMemsetD8Async",
            )
        })
    }
}
