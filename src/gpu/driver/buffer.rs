//! Device memory as the rest of the backend sees it: typed addresses ([`DevPtr`]), owned
//! allocations counted in their context's ledger ([`DevBuf`]), and points kept on a device
//! ([`DevicePoints`]).

use std::marker::PhantomData;
use std::sync::Arc;

use blstrs::{G1Affine, G2Affine};
use cudarc::driver::result;
use cudarc::driver::sys;

use crate::gpu::memory::Ledger;

/// A device address of `T`s. It owns nothing (the [`DevBuf`] it points into does); its type
/// is what lets the kernel wrappers (`gpu/kernels.rs`) and the copies check that a buffer of
/// points is not passed where scalars go. A kernel receives it as the raw address.
#[repr(transparent)]
pub(crate) struct DevPtr<T> {
    addr: sys::CUdeviceptr,
    _of: PhantomData<fn() -> T>,
}

impl<T> Clone for DevPtr<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for DevPtr<T> {}

impl<T> std::fmt::Debug for DevPtr<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DevPtr({:#x})", self.addr)
    }
}

impl<T> DevPtr<T> {
    /// No buffer: the kernels that take an optional buffer (a gather's bitmap) test for it.
    pub(crate) const NULL: Self = DevPtr::at(0);

    /// `addr` as an address of `T`s.
    pub(crate) const fn at(addr: sys::CUdeviceptr) -> Self {
        DevPtr {
            addr,
            _of: PhantomData,
        }
    }

    /// The raw address.
    pub(crate) fn addr(self) -> sys::CUdeviceptr {
        self.addr
    }

    /// The address of element `n`.
    pub(crate) fn add(self, n: usize) -> Self {
        DevPtr::at(self.addr + (n * std::mem::size_of::<T>()) as u64)
    }

    /// The same address as `U`s (a reinterpretation the caller vouches for).
    pub(crate) fn cast<U>(self) -> DevPtr<U> {
        DevPtr::at(self.addr)
    }
}

/// A device allocation, freed on drop and counted in its context's ledger until then.
#[derive(Debug)]
pub(crate) struct DevBuf {
    ptr: sys::CUdeviceptr,
    pub bytes: usize,
    ledger: Arc<Ledger>,
    /// From cuMemAllocAsync: freed with cuMemFreeAsync on this stream, without waiting.
    free_on: Option<FreeStream>,
}

/// The stream a stream-ordered buffer is freed on.
#[derive(Debug)]
struct FreeStream(sys::CUstream);

// SAFETY: a stream handle of the buffer's context, only passed to cuMemFreeAsync.
unsafe impl Send for FreeStream {}
unsafe impl Sync for FreeStream {}

impl DevBuf {
    /// Takes ownership of `bytes` at `ptr` (from cuMemAlloc), which `ledger` has admitted.
    pub(crate) fn new(ptr: sys::CUdeviceptr, bytes: usize, ledger: Arc<Ledger>) -> Self {
        DevBuf {
            ptr,
            bytes,
            ledger,
            free_on: None,
        }
    }

    /// [`Self::new`] for `ptr` from cuMemAllocAsync, to be freed on `free_on` (a stream of
    /// the same context that outlives the buffer): the free runs after the work queued there
    /// before the drop, so the owner must drop it only once work on other streams that reads
    /// it has finished, and once the allocation itself has been reached.
    pub(crate) fn new_stream_ordered(
        ptr: sys::CUdeviceptr,
        bytes: usize,
        ledger: Arc<Ledger>,
        free_on: sys::CUstream,
    ) -> Self {
        DevBuf {
            ptr,
            bytes,
            ledger,
            free_on: Some(FreeStream(free_on)),
        }
    }

    /// The buffer's start as an address of `T`s.
    pub(crate) fn ptr<T>(&self) -> DevPtr<T> {
        DevPtr::at(self.ptr)
    }
}

impl Drop for DevBuf {
    fn drop(&mut self) {
        // SAFETY: ptr came from cuMemAlloc(Async) in this context, which outlives its buffers
        // (GpuContext drops them before releasing the context); a stream-ordered one is freed
        // after everything it was used for (`new_stream_ordered`). Errors here have no caller.
        unsafe {
            let _ = match &self.free_on {
                Some(stream) => result::free_async(self.ptr, stream.0),
                None => result::free_sync(self.ptr),
            };
        }
        self.ledger.release(self.bytes);
    }
}

/// Points kept on one device (e.g. an SRS section reused by many proofs), made by
/// [`GpuContext::upload_g1_points`](crate::gpu::GpuContext::upload_g1_points) /
/// `upload_g2_points` and read by `msm_g1_resident` / `msm_g2_resident`. Drop it before the
/// `GpuContext` it came from.
pub struct DevicePoints<A> {
    // Field order: `buf` is freed (in its own Drop) after this struct's Drop made `ctx` current.
    buf: DevBuf,
    len: usize,
    ctx: sys::CUcontext,
    // Which curve the bytes are: a G1 buffer cannot be passed to a G2 MSM.
    _points: PhantomData<fn() -> A>,
}

/// G1 points on a device.
pub type DeviceG1Points = DevicePoints<G1Affine>;
/// G2 points on a device.
pub type DeviceG2Points = DevicePoints<G2Affine>;

// SAFETY: a device allocation and the context handle it belongs to; freeing binds the context.
unsafe impl<A> Send for DevicePoints<A> {}
unsafe impl<A> Sync for DevicePoints<A> {}

impl<A> DevicePoints<A> {
    pub(crate) fn new(buf: DevBuf, len: usize, ctx: sys::CUcontext) -> Self {
        DevicePoints {
            buf,
            len,
            ctx,
            _points: PhantomData,
        }
    }

    /// Number of points.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no points.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Device memory held, in bytes.
    pub fn device_bytes(&self) -> usize {
        self.buf.bytes
    }

    pub(crate) fn device_ptr(&self) -> DevPtr<A> {
        self.buf.ptr()
    }

    pub(crate) fn context(&self) -> sys::CUcontext {
        self.ctx
    }
}

impl<A> std::fmt::Debug for DevicePoints<A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DevicePoints")
            .field("len", &self.len)
            .finish_non_exhaustive()
    }
}

impl<A> Drop for DevicePoints<A> {
    fn drop(&mut self) {
        // cuMemFree needs a current context; the buffer is freed right after this.
        let _ = unsafe { result::ctx::set_current(self.ctx) };
    }
}
