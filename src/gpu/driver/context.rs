//! One device's context: its primary context, streams, the loaded kernels, scratch buffers
//! by purpose, the memory ledger and the kernel timeline.

use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::Arc;

use cudarc::driver::result;
use cudarc::driver::sys;

use super::buffer::{DevBuf, DevPtr};
use super::launch::Kernel;
use super::probe::{check, device_info, probe};
use super::transfer::Staging;
use crate::gpu::memory::Ledger;
use crate::gpu::timeline::KernelTimeline;
use crate::gpu::types::NttGeometry;
use crate::gpu::{DeviceInfo, GpuError, MsmTuning, NttTuning};

/// The fatbin `build.rs` compiled from `cuda/*.cu`.
static FATBIN: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/cuzk.fatbin"));

/// The device scratch buffers a context keeps, one per purpose: each grows to the largest
/// request and is reused by every later call (an MSM or NTT allocates nothing once warm).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Scratch {
    /// The H step's a, b and c (the coefficient vectors the transforms run over in place).
    NttA,
    NttB,
    NttC,
    /// The H step's out-of-place transform target; also where H ends (the H MSM's scalars).
    NttT,
    /// The 32-entry power table the scale and twiddle kernels read.
    NttPowers,
    /// A density gather's bitmap words and their prefix counts.
    GatherWords,
    GatherPrefix,
    /// An MSM's scalars (uploaded, or gathered there on the device).
    MsmScalars,
    /// An MSM's points, when they are not resident.
    MsmPoints,
    /// Per window digit histogram, its totals and the chunked scan's partial sums.
    MsmHistogram,
    MsmTotals,
    MsmScanChunks,
    /// Point indices sorted by digit, per window.
    MsmSortedIndices,
    /// The affine rounds' lists (rounds alternate between the two), their ends and entry
    /// counts (likewise), and the running products of each thread's denominators.
    MsmAffinePoints,
    MsmAffinePoints2,
    MsmAffineEnds,
    MsmAffineEnds2,
    MsmAffineTotals,
    MsmAffineTotals2,
    MsmAffinePrefix,
    /// Bucket sums, per window.
    MsmBuckets,
    /// Per-slice partial bucket sums and their buckets, and the merge's second level.
    MsmPieces,
    MsmPieceBuckets,
    MsmPieces2,
    MsmPieceBuckets2,
    /// The bucket reduction's per-segment totals and running sums.
    MsmSegmentTotals,
    MsmSegmentSums,
    /// One sum per window, downloaded and combined on the host.
    MsmWindowSums,
    /// A witness's inputs, for the recorded-R1CS mat-vec (its aux values have their own
    /// buffer, shared with the MSMs).
    R1csInputs,
}

/// One device: its primary context, a stream, the loaded kernels and cached buffers.
///
/// Not `Sync`: one thread at a time drives a context (the engine's device mutex). Methods
/// take `&mut self` because they reuse the cached buffers.
pub struct GpuContext {
    info: DeviceInfo,
    dev: sys::CUdevice,
    ctx: sys::CUcontext,
    stream: sys::CUstream,
    /// Host-to-device copies that overlap kernels on `stream` (`upload_staged_then`).
    pub(super) copy_stream: sys::CUstream,
    module: sys::CUmodule,
    /// Indexed by [`Kernel::index`].
    functions: Vec<sys::CUfunction>,
    /// Scratch buffers by purpose, grown on demand and kept between calls.
    scratch: HashMap<Scratch, DevBuf>,
    /// NTT twiddle tables by (log n, inverse).
    pub(crate) twiddles: HashMap<(u32, bool), DevBuf>,
    /// Pinned host staging for large copies, allocated on first use.
    pub(super) staging: Option<Staging>,
    /// Events around every launch on `stream`: the device's kernel-active time. A cell
    /// because launches take `&self`; the context is not `Sync`.
    timeline: RefCell<KernelTimeline>,
    /// The MSM's overrides (benchmarking): none unless a caller sets them
    /// ([`GpuContext::set_msm_tuning`]); nothing reads the environment.
    pub(crate) msm_tuning: MsmTuning,
    /// The NTT's kernel choice (benchmarking; [`GpuContext::set_ntt_tuning`]).
    pub(crate) ntt_tuning: NttTuning,
    /// Whether the H step's host uploads run on the copy stream under its kernels or in
    /// order on the compute stream (the default; [`GpuContext::set_overlap_uploads`]).
    pub(crate) overlap_uploads: bool,
    /// A diagnostic: every scratch buffer and a fresh aux buffer are filled with 0xff bytes
    /// before an H step that uploads (`set_poison_scratch`).
    pub(crate) poison_scratch: bool,
    /// Every device buffer this context made, against its limit.
    ledger: Arc<Ledger>,
}

// SAFETY: the raw handles belong to this context; the driver allows using a context from
// any thread once it is made current there, which every method does first.
unsafe impl Send for GpuContext {}

impl std::fmt::Debug for GpuContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuContext")
            .field("info", &self.info)
            .finish_non_exhaustive()
    }
}

impl GpuContext {
    /// Opens device `ordinal`: retains its primary context and loads the kernels.
    pub fn new(ordinal: usize) -> Result<Self, GpuError> {
        probe()?;
        let count = check(result::device::get_count(), "cuDeviceGetCount")?;
        if ordinal >= count.max(0) as usize {
            return Err(GpuError::NoDevice(ordinal));
        }
        let info = device_info(ordinal)?;
        let ledger = Arc::new(Ledger::new(info.total_memory));
        let dev = check(result::device::get(ordinal as i32), "cuDeviceGet")?;
        let ctx = check(
            unsafe { result::primary_ctx::retain(dev) },
            "cuDevicePrimaryCtxRetain",
        )?;
        let mut this = GpuContext {
            info,
            dev,
            ctx,
            stream: std::ptr::null_mut(),
            copy_stream: std::ptr::null_mut(),
            module: std::ptr::null_mut(),
            functions: Vec::with_capacity(Kernel::ALL.len()),
            scratch: HashMap::new(),
            twiddles: HashMap::new(),
            staging: None,
            timeline: RefCell::default(),
            msm_tuning: MsmTuning::default(),
            ntt_tuning: NttTuning::default(),
            overlap_uploads: false,
            poison_scratch: false,
            ledger,
        };
        this.bind()?;
        this.stream = check(
            result::stream::create(result::stream::StreamKind::NonBlocking),
            "cuStreamCreate",
        )?;
        this.copy_stream = check(
            result::stream::create(result::stream::StreamKind::NonBlocking),
            "cuStreamCreate",
        )?;
        // The module loader wants the image 8-byte aligned; include_bytes! promises 1.
        let mut image = vec![0u64; FATBIN.len().div_ceil(8)];
        // SAFETY: image has at least FATBIN.len() bytes.
        unsafe {
            std::ptr::copy_nonoverlapping(
                FATBIN.as_ptr(),
                image.as_mut_ptr() as *mut u8,
                FATBIN.len(),
            );
        }
        this.module = check(
            unsafe { result::module::load_data(image.as_ptr() as *const c_void) },
            "cuModuleLoadData",
        )?;
        for kernel in Kernel::ALL {
            debug_assert_eq!(this.functions.len(), kernel.index());
            let f = check(
                unsafe { result::module::get_function(this.module, kernel.symbol().to_owned()) },
                &format!("cuModuleGetFunction({kernel:?})"),
            )?;
            this.functions.push(f);
        }
        // The NTT's large tiles are 64 KB of dynamic shared memory, over the 48 KB a block
        // gets without opting in; where the device cannot give a block that much, the small
        // tiles run (`NttGeometry::for_device`).
        if NttGeometry::large_allowed(&this.info) {
            let large_tile = NttGeometry::tile_bytes(NttGeometry::LARGE.tile_log);
            for kernel in Kernel::NTT_TILES {
                check(
                    unsafe {
                        result::function::set_function_attribute(
                            this.function(kernel),
                            sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                            large_tile as i32,
                        )
                    },
                    &format!("cuFuncSetAttribute({kernel:?})"),
                )?;
            }
        }
        Ok(this)
    }

    /// Sets the NTT's kernel choice (benchmarks; a context starts with the default).
    pub fn set_ntt_tuning(&mut self, tuning: NttTuning) {
        self.ntt_tuning = tuning;
    }

    /// Whether the H step's host uploads (b and c, and the aux values of a start phase that
    /// has none on the device) go up on the copy stream while the kernels before them run
    /// (`true`) or in order on the compute stream, with the device waiting for them (`false`,
    /// the default). The proofs are the same either way (and verify); the overlap is opt-in
    /// because supraseal-c2 proving later in the same process has made proofs that
    /// bellperson's verifier rejects, which it does not after in-order uploads (notes/gpu.md;
    /// the cause is not found).
    pub fn set_overlap_uploads(&mut self, on: bool) {
        self.overlap_uploads = on;
    }

    /// A diagnostic for the overlapped uploads: with `on`, every scratch buffer and the
    /// fresh buffer an H step uploads a witness's aux values into are filled with 0xff bytes
    /// on the compute stream before the H step, so that a kernel reading one before its copy
    /// has landed reads garbage instead of the previous proof's values (which, for a proof
    /// of the same assignment, would hide the race).
    #[doc(hidden)]
    pub fn set_poison_scratch(&mut self, on: bool) {
        self.poison_scratch = on;
    }

    /// Fills every scratch buffer and `extra` with 0xff bytes, ordered on the compute stream.
    pub(crate) fn poison(&self, extra: &[(sys::CUdeviceptr, usize)]) -> Result<(), GpuError> {
        let stream = self.stream();
        let scratch = self
            .scratch
            .values()
            .map(|b| (b.ptr::<u8>().addr(), b.bytes));
        for (addr, bytes) in scratch.chain(extra.iter().copied()) {
            check(
                unsafe { result::memset_d8_async(addr, 0xff, bytes, stream) },
                "cuMemsetD8Async",
            )?;
        }
        Ok(())
    }

    /// A diagnostic for a neighbour in the process (supraseal-c2 in the same primary
    /// context): fills the device memory that nobody holds with `byte` and gives it back, so
    /// that whatever is allocated next holds `byte` wherever its owner has not written. Goes
    /// through plain allocations (the driver's free memory) and then through the device's
    /// default memory pool (what `cudaMallocAsync` callers get), each in 1 GiB pieces, leaving
    /// 256 MiB free. Not counted in the ledger: everything is freed before it returns.
    /// Returns the bytes filled the plain way and through the pool.
    #[doc(hidden)]
    pub fn fill_free_memory(&self, byte: u8) -> Result<(usize, usize), GpuError> {
        self.bind()?;
        self.sync()?;
        let stream = self.stream();
        let plain = self.fill_pieces(
            byte,
            |bytes| unsafe { result::malloc_sync(bytes) },
            |ptr| unsafe { result::free_sync(ptr) },
        )?;
        // Freed on the stream, then the pool trimmed: it gives back memory past its release
        // threshold (0 by default) at a synchronization, but another user may have raised it.
        let pooled = self.fill_pieces(
            byte,
            |bytes| unsafe { result::malloc_async(stream, bytes) },
            |ptr| unsafe { result::free_async(ptr, stream) },
        )?;
        let mut pool = std::ptr::null_mut();
        check(
            unsafe { sys::cuDeviceGetDefaultMemPool(&mut pool, self.dev) }.result(),
            "cuDeviceGetDefaultMemPool",
        )?;
        check(
            unsafe { sys::cuMemPoolTrimTo(pool, 0) }.result(),
            "cuMemPoolTrimTo",
        )?;
        Ok((plain, pooled))
    }

    /// `fill_free_memory` through one allocator: pieces allocated until the driver has
    /// 256 MiB left or refuses, each filled on the compute stream and waited for (the pool's
    /// memory counts as free until the stream reaches its allocation), all held until the
    /// last so that each is new memory, then freed.
    fn fill_pieces(
        &self,
        byte: u8,
        alloc: impl Fn(usize) -> Result<sys::CUdeviceptr, result::DriverError>,
        free: impl Fn(sys::CUdeviceptr) -> Result<(), result::DriverError>,
    ) -> Result<usize, GpuError> {
        const PIECE: usize = 1 << 30;
        const LEAVE: usize = 256 << 20;
        let mut held = vec![];
        let mut filled = 0;
        let outcome = loop {
            let bytes = match check(result::mem_get_info(), "cuMemGetInfo") {
                Ok((free, _)) => free.saturating_sub(LEAVE).min(PIECE),
                Err(e) => break Err(e),
            };
            let Some(ptr) = (bytes > 0).then(|| alloc(bytes).ok()).flatten() else {
                break Ok(());
            };
            held.push(ptr);
            filled += bytes;
            let set = check(
                unsafe { result::memset_d8_async(ptr, byte, bytes, self.stream()) },
                "cuMemsetD8Async",
            );
            if let Err(e) = set.and_then(|()| self.sync()) {
                break Err(e);
            }
        };
        for ptr in held {
            let _ = free(ptr);
        }
        outcome.and_then(|()| self.sync())?;
        Ok(filled)
    }

    /// The device's description.
    pub fn info(&self) -> &DeviceInfo {
        &self.info
    }

    pub(crate) fn cu_ctx(&self) -> sys::CUcontext {
        self.ctx
    }

    /// The compute stream: every kernel launches there.
    pub(crate) fn stream(&self) -> sys::CUstream {
        self.stream
    }

    pub(super) fn function(&self, kernel: Kernel) -> sys::CUfunction {
        self.functions[kernel.index()]
    }

    pub(super) fn timeline(&self) -> &RefCell<KernelTimeline> {
        &self.timeline
    }

    /// The ledger every buffer of this context is counted in (shared with what stages
    /// inputs for it on another thread).
    pub(crate) fn ledger(&self) -> &Arc<Ledger> {
        &self.ledger
    }

    /// Makes this context current on the calling thread.
    pub(crate) fn bind(&self) -> Result<(), GpuError> {
        check(
            unsafe { result::ctx::set_current(self.ctx) },
            "cuCtxSetCurrent",
        )
    }

    /// Frees cached device buffers (twiddles, MSM scratch).
    pub fn release_scratch(&mut self) {
        let _ = self.bind();
        self.scratch.clear();
        self.twiddles.clear();
    }

    /// Device bytes this context's buffers hold.
    pub fn memory_in_use(&self) -> usize {
        self.ledger.in_use()
    }

    /// The most device bytes this context's buffers held at once.
    pub fn memory_peak(&self) -> usize {
        self.ledger.peak()
    }

    /// The most device bytes this context may allocate (default: the device's memory).
    pub fn memory_limit(&self) -> usize {
        self.ledger.limit()
    }

    /// Sets the most device bytes this context may allocate; an allocation beyond it fails
    /// with [`GpuError::OutOfMemory`] as one the driver refuses does.
    pub fn set_memory_limit(&mut self, bytes: usize) {
        self.ledger.set_limit(bytes);
    }

    /// Refuses the next `n` allocations as if the limit had been reached (a test hook).
    #[doc(hidden)]
    pub fn refuse_allocations(&self, n: usize) {
        self.ledger.refuse_next(n);
    }

    /// Whether an allocation failed for lack of memory since the last call.
    pub(crate) fn take_out_of_memory(&self) -> bool {
        self.ledger.take_refused()
    }

    /// A new buffer of `bytes`, counted in the ledger (the context must be current).
    pub(crate) fn alloc(&self, bytes: usize) -> Result<DevBuf, GpuError> {
        alloc_in(&self.ledger, bytes)
    }

    /// Device bytes scratch buffers named `reusable` could grow to without a refusal: what
    /// this context may still allocate (its limit less what it holds, at most what the device
    /// has free) plus what those buffers already hold.
    pub(crate) fn scratch_room(&self, reusable: &[Scratch]) -> Result<usize, GpuError> {
        self.bind()?;
        let (free, _) = check(result::mem_get_info(), "cuMemGetInfo")?;
        let held: usize = reusable
            .iter()
            .filter_map(|n| self.scratch.get(n))
            .map(|b| b.bytes)
            .sum();
        let allowed = self.ledger.limit().saturating_sub(self.ledger.in_use());
        Ok(allowed.min(free) + held)
    }

    /// The scratch buffer `name` with room for at least `len` `T`s (contents undefined).
    pub(crate) fn scratch<T>(&mut self, name: Scratch, len: usize) -> Result<DevPtr<T>, GpuError> {
        let bytes = len * std::mem::size_of::<T>();
        if let Some(b) = self.scratch.get(&name) {
            if b.bytes >= bytes {
                return Ok(b.ptr());
            }
        }
        // Free the old one first so that the peak is not old + new.
        self.scratch.remove(&name);
        let b = self.alloc(bytes)?;
        let p = b.ptr();
        self.scratch.insert(name, b);
        Ok(p)
    }

    pub(crate) fn sync(&self) -> Result<(), GpuError> {
        check(
            unsafe { result::stream::synchronize(self.stream) },
            "cuStreamSynchronize",
        )
    }

    /// The time the device had kernels of this context running since the last call, and the
    /// span from the first of them to the last (device-side event times; see `timeline.rs`).
    /// Waits for the last launched kernel.
    pub fn take_kernel_time(&mut self) -> Result<crate::gpu::KernelTime, GpuError> {
        self.bind()?;
        self.timeline.get_mut().take()
    }

    /// A timing event recorded now on the stream.
    pub(crate) fn mark(&self) -> Result<Event, GpuError> {
        Event::record(self.stream)
    }
}

/// A new buffer of `bytes` in the current context when `ledger` has room and the driver has
/// the memory; `None` otherwise, remembering no refusal (an optional buffer must not make a
/// running start phase evict what is resident).
///
/// Stream-ordered: allocated on `stream` (usable once that stream has reached this point)
/// and freed on `free_on` without waiting (`DevBuf::new_stream_ordered`). These are the
/// buffers the engine stages a partition's inputs into while another partition's kernels
/// run: cuMemFree waits for the whole device, staging copies included, so a start phase that
/// freed its staged buffers held the device idle until the other worker's copies were done.
pub(crate) fn alloc_if_room(
    ledger: &Arc<Ledger>,
    bytes: usize,
    stream: sys::CUstream,
    free_on: sys::CUstream,
) -> Result<Option<DevBuf>, GpuError> {
    let bytes = bytes.max(1);
    if !ledger.admit_if_room(bytes) {
        return Ok(None);
    }
    match unsafe { result::malloc_async(stream, bytes) } {
        Ok(ptr) => Ok(Some(DevBuf::new_stream_ordered(
            ptr,
            bytes,
            Arc::clone(ledger),
            free_on,
        ))),
        Err(e) => {
            ledger.release(bytes);
            match e.0 {
                sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY => Ok(None),
                _ => check(Err(e), "cuMemAllocAsync").map(|()| None),
            }
        }
    }
}

/// A new buffer of `bytes` in the current context, counted in `ledger` (at least one byte:
/// the driver refuses empty allocations).
fn alloc_in(ledger: &Arc<Ledger>, bytes: usize) -> Result<DevBuf, GpuError> {
    let bytes = bytes.max(1);
    ledger.admit(bytes)?;
    match unsafe { result::malloc_sync(bytes) } {
        Ok(ptr) => Ok(DevBuf::new(ptr, bytes, Arc::clone(ledger))),
        Err(e) if e.0 == sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY => {
            Err(ledger.driver_refused(bytes))
        }
        Err(e) => {
            ledger.release(bytes);
            check(Err(e), "cuMemAlloc")
        }
    }
}

impl Drop for GpuContext {
    fn drop(&mut self) {
        // Buffers and the module go before the context they live in.
        let _ = self.bind();
        let _ = self.sync();
        self.scratch.clear();
        self.twiddles.clear();
        self.staging = None;
        drop(std::mem::take(self.timeline.get_mut()));
        unsafe {
            if !self.module.is_null() {
                let _ = result::module::unload(self.module);
            }
            if !self.stream.is_null() {
                let _ = result::stream::destroy(self.stream);
            }
            if !self.copy_stream.is_null() {
                let _ = result::stream::destroy(self.copy_stream);
            }
            let _ = result::primary_ctx::release(self.dev);
        }
    }
}

/// A CUDA event, destroyed on drop.
pub(crate) struct Event(sys::CUevent);

impl Event {
    /// A timing event recorded now on `stream`.
    pub(crate) fn record(stream: sys::CUstream) -> Result<Event, GpuError> {
        let e = check(
            result::event::create(sys::CUevent_flags::CU_EVENT_DEFAULT),
            "cuEventCreate",
        )?;
        let ev = Event(e);
        check(
            unsafe { result::event::record(ev.0, stream) },
            "cuEventRecord",
        )?;
        Ok(ev)
    }

    /// The handle, for stream waits.
    pub(crate) fn raw(&self) -> sys::CUevent {
        self.0
    }

    /// Milliseconds from `self` to `later` (both must have completed).
    pub(crate) fn ms_to(&self, later: &Event) -> Result<f32, GpuError> {
        check(
            unsafe { result::event::elapsed(self.0, later.0) },
            "cuEventElapsedTime",
        )
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        unsafe {
            let _ = result::event::destroy(self.0);
        }
    }
}
