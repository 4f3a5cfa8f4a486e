//! The CUDA driver through cudarc's raw (`result`) API: probing, one context per device,
//! the embedded module, device buffers, launches and events.
//!
//! cudarc's dynamic loading panics when `libcuda` is missing or lacks a symbol of the CUDA
//! version it was built for (13.0). So [`probe`] first opens the library itself and asks
//! `cuDriverGetVersion`, and only then lets cudarc load it (inside `catch_unwind` as a last
//! guard); a machine without a driver, or with a driver older than 13.0, gets an error value.

use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::{c_void, CString};
use std::marker::PhantomData;
use std::sync::{Arc, OnceLock};

use blstrs::{G1Affine, G2Affine};
use cudarc::driver::result;
use cudarc::driver::sys;

use super::memory::Ledger;
use super::timeline::KernelTimeline;
use super::{DeviceInfo, GpuError, MemoryInfo, MsmTuning};

/// The fatbin `build.rs` compiled from `cuda/*.cu`.
static FATBIN: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/cuzk.fatbin"));

/// The oldest driver API version the kernels and cudarc's symbol table need (13.0).
const MIN_DRIVER_VERSION: i32 = 13000;

/// Turns a driver result into a [`GpuError`] naming the call.
pub(crate) fn check<T>(r: Result<T, result::DriverError>, call: &str) -> Result<T, GpuError> {
    r.map_err(|e| GpuError::Cuda {
        call: call.to_string(),
        error: e
            .error_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|_| format!("{:?}", e.0)),
    })
}

/// Loads and initialises the driver once per process; later calls return the same answer.
pub(crate) fn probe() -> Result<(), GpuError> {
    static PROBE: OnceLock<Result<(), GpuError>> = OnceLock::new();
    PROBE.get_or_init(probe_uncached).clone()
}

fn probe_uncached() -> Result<(), GpuError> {
    #[cfg(unix)]
    {
        let v = driver_version_dlopen()?;
        if v < MIN_DRIVER_VERSION {
            return Err(GpuError::NoDriver(format!(
                "the driver supports CUDA {}.{}; cuzk's kernels need {}.{} or newer",
                v / 1000,
                (v % 1000) / 10,
                MIN_DRIVER_VERSION / 1000,
                (MIN_DRIVER_VERSION % 1000) / 10
            )));
        }
    }
    // SAFETY: only loads the library and resolves symbols; a missing symbol panics, caught here.
    let present = std::panic::catch_unwind(|| unsafe { sys::is_culib_present() }).unwrap_or(false);
    if !present {
        return Err(GpuError::NoDriver("libcuda could not be loaded".into()));
    }
    check(result::init(), "cuInit")
}

/// `cuDriverGetVersion` through a plain dlopen, so nothing panics when the library is absent.
#[cfg(unix)]
fn driver_version_dlopen() -> Result<i32, GpuError> {
    type GetVersion = unsafe extern "C" fn(*mut i32) -> i32;
    for name in ["libcuda.so.1", "libcuda.so"] {
        let cname = CString::new(name).expect("no NUL in a literal");
        // SAFETY: dlopen/dlsym with valid C strings; the handle is kept open for the process
        // (cudarc opens the same library again; the loader shares it).
        unsafe {
            let h = libc::dlopen(cname.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL);
            if h.is_null() {
                continue;
            }
            let sym = libc::dlsym(h, c"cuDriverGetVersion".as_ptr());
            if sym.is_null() {
                return Err(GpuError::NoDriver(format!(
                    "{name} has no cuDriverGetVersion"
                )));
            }
            let f: GetVersion = std::mem::transmute::<*mut c_void, GetVersion>(sym);
            let mut v = 0i32;
            let rc = f(&mut v);
            if rc != 0 {
                return Err(GpuError::NoDriver(format!(
                    "cuDriverGetVersion returned {rc}"
                )));
            }
            return Ok(v);
        }
    }
    Err(GpuError::NoDriver("libcuda.so.1 not found".into()))
}

/// The usable devices: `Ok(empty)` when there is no driver or no GPU; `Err` only when a
/// driver is there but a query on it fails.
pub fn discover() -> Result<Vec<DeviceInfo>, GpuError> {
    if probe().is_err() {
        return Ok(Vec::new());
    }
    let count = match result::device::get_count() {
        Ok(c) => c,
        // A driver without devices (or without access to them) answers NO_DEVICE.
        Err(e) if e.0 == sys::CUresult::CUDA_ERROR_NO_DEVICE => return Ok(Vec::new()),
        Err(e) => return check(Err(e), "cuDeviceGetCount"),
    };
    (0..count.max(0) as usize).map(device_info).collect()
}

fn device_info(ordinal: usize) -> Result<DeviceInfo, GpuError> {
    let dev = check(result::device::get(ordinal as i32), "cuDeviceGet")?;
    let attr = |a| {
        check(
            unsafe { result::device::get_attribute(dev, a) },
            "cuDeviceGetAttribute",
        )
    };
    use sys::CUdevice_attribute::*;
    Ok(DeviceInfo {
        ordinal,
        name: check(result::device::get_name(dev), "cuDeviceGetName")?,
        compute_capability: (
            attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)? as u32,
            attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)? as u32,
        ),
        total_memory: check(
            unsafe { result::device::total_mem(dev) },
            "cuDeviceTotalMem",
        )?,
        multiprocessors: attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)? as u32,
    })
}

/// The device's free and total memory. Binds the device's primary context to the calling
/// thread for the query (creating it if no one holds it; it goes again when released).
pub fn memory_info(ordinal: usize) -> Result<MemoryInfo, GpuError> {
    probe()?;
    let count = check(result::device::get_count(), "cuDeviceGetCount")?;
    if ordinal >= count.max(0) as usize {
        return Err(GpuError::NoDevice(ordinal));
    }
    let dev = check(result::device::get(ordinal as i32), "cuDeviceGet")?;
    let ctx = check(
        unsafe { result::primary_ctx::retain(dev) },
        "cuDevicePrimaryCtxRetain",
    )?;
    let info = check(unsafe { result::ctx::set_current(ctx) }, "cuCtxSetCurrent")
        .and_then(|()| check(result::mem_get_info(), "cuMemGetInfo"));
    // SAFETY: retained above, released once.
    let _ = unsafe { result::primary_ctx::release(dev) };
    let (free, total) = info?;
    Ok(MemoryInfo { free, total })
}

/// A device allocation, freed on drop and counted in its context's ledger until then.
#[derive(Debug)]
pub(crate) struct DevBuf {
    pub ptr: sys::CUdeviceptr,
    pub bytes: usize,
    ledger: Arc<Ledger>,
}

impl Drop for DevBuf {
    fn drop(&mut self) {
        // SAFETY: ptr came from cuMemAlloc in this context, which outlives its buffers
        // (GpuContext drops them before releasing the context). Errors here have no caller.
        unsafe {
            let _ = result::free_sync(self.ptr);
        }
        self.ledger.release(self.bytes);
    }
}

/// Points kept on one device (e.g. an SRS section reused by many proofs), made by
/// [`GpuContext::upload_g1_points`] / [`GpuContext::upload_g2_points`] and read by
/// [`GpuContext::msm_g1_resident`] / [`GpuContext::msm_g2_resident`]. Drop it before the
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

    pub(crate) fn device_ptr(&self) -> sys::CUdeviceptr {
        self.buf.ptr
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

/// Every kernel in the fatbin; looked up once per context.
pub(crate) const KERNELS: &[&str] = &[
    "cuzk_msm_scalars_hist",
    "cuzk_msm_scan_chunk_sums",
    "cuzk_msm_scan_chunk_offsets",
    "cuzk_msm_scan_apply",
    "cuzk_msm_scatter",
    "cuzk_msm_accumulate",
    "cuzk_msm_merge_pieces",
    "cuzk_msm_bucket_reduce",
    "cuzk_msm_tree_reduce",
    "cuzk_msm_accumulate_g2",
    "cuzk_msm_merge_pieces_g2",
    "cuzk_msm_bucket_reduce_g2",
    "cuzk_msm_tree_reduce_g2",
    "cuzk_ntt_powers",
    "cuzk_ntt_scale",
    "cuzk_ntt_bitrev",
    "cuzk_ntt_stage",
    "cuzk_ntt_first_stages",
    "cuzk_ntt_mid_stages",
    "cuzk_ntt_ab_minus_c",
    "cuzk_gather_dense",
    "cuzk_r1cs_matvec",
];

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
    /// Host-to-device copies that overlap kernels on `stream` ([`Self::upload_staged_then`]).
    copy_stream: sys::CUstream,
    module: sys::CUmodule,
    functions: HashMap<&'static str, sys::CUfunction>,
    /// Scratch buffers by purpose, grown on demand and kept between calls.
    scratch: HashMap<Scratch, DevBuf>,
    /// NTT twiddle tables by (log n, inverse).
    pub(crate) twiddles: HashMap<(u32, bool), DevBuf>,
    /// Pinned host staging for large copies, allocated on first use.
    staging: Option<Staging>,
    /// Events around every launch on `stream`: the device's kernel-active time. A cell
    /// because launches take `&self`; the context is not `Sync`.
    timeline: RefCell<KernelTimeline>,
    /// The MSM's overrides (benchmarking), read from the environment once, at creation.
    pub(crate) msm_tuning: MsmTuning,
    /// Every device buffer this context made, against its limit.
    ledger: Arc<Ledger>,
}

/// Bytes of one pinned staging buffer; two alternate so that the host copy into one overlaps
/// the DMA out of the other.
const STAGE_BYTES: usize = 32 << 20;
/// Copies below this go straight from pageable memory.
const STAGE_MIN: usize = 4 << 20;

/// Two pinned host buffers and the events that say when the DMA using each has finished.
struct Staging {
    bufs: [*mut u8; 2],
    done: [sys::CUevent; 2],
    /// Recorded on the compute stream so that copies on the copy stream start after it.
    ordered: sys::CUevent,
}

impl Staging {
    fn new() -> Result<Staging, GpuError> {
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
            functions: HashMap::new(),
            scratch: HashMap::new(),
            twiddles: HashMap::new(),
            staging: None,
            timeline: RefCell::default(),
            msm_tuning: MsmTuning::from_env(),
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
        for &name in KERNELS {
            let cname = CString::new(name).expect("no NUL in kernel names");
            let f = check(
                unsafe { result::module::get_function(this.module, cname) },
                &format!("cuModuleGetFunction({name})"),
            )?;
            this.functions.insert(name, f);
        }
        Ok(this)
    }

    /// The device's description.
    pub fn info(&self) -> &DeviceInfo {
        &self.info
    }

    pub(crate) fn cu_ctx(&self) -> sys::CUcontext {
        self.ctx
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

    pub(crate) fn alloc(&self, bytes: usize) -> Result<DevBuf, GpuError> {
        let bytes = bytes.max(1);
        self.ledger.admit(bytes)?;
        match unsafe { result::malloc_sync(bytes) } {
            Ok(ptr) => Ok(DevBuf {
                ptr,
                bytes,
                ledger: Arc::clone(&self.ledger),
            }),
            Err(e) if e.0 == sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY => {
                Err(self.ledger.driver_refused(bytes))
            }
            Err(e) => {
                self.ledger.release(bytes);
                check(Err(e), "cuMemAlloc")
            }
        }
    }

    /// The scratch buffer `name`, at least `bytes` long (contents undefined).
    pub(crate) fn scratch(
        &mut self,
        name: Scratch,
        bytes: usize,
    ) -> Result<sys::CUdeviceptr, GpuError> {
        if let Some(b) = self.scratch.get(&name) {
            if b.bytes >= bytes {
                return Ok(b.ptr);
            }
        }
        // Free the old one first so that the peak is not old + new.
        self.scratch.remove(&name);
        let b = self.alloc(bytes)?;
        let p = b.ptr;
        self.scratch.insert(name, b);
        Ok(p)
    }

    pub(crate) fn upload<T>(&self, dst: sys::CUdeviceptr, src: &[T]) -> Result<(), GpuError> {
        check(
            unsafe { result::memcpy_htod_async(dst, src, self.stream) },
            "cuMemcpyHtoDAsync",
        )
    }

    /// Host → device copy of a large buffer through the pinned staging buffers: pageable
    /// copies run at a fraction of the link's speed. Returns when `src` may be reused.
    pub(crate) fn upload_staged<T: Copy>(
        &mut self,
        dst: sys::CUdeviceptr,
        src: &[T],
    ) -> Result<(), GpuError> {
        self.upload_staged_inner(dst, src, None)
    }

    /// [`Self::upload_staged`] with work on each piece as soon as it has arrived: the copies
    /// run on a second stream, and `then(ctx, first, count)` is called for elements
    /// `first..first + count` once the compute stream waits for them, so the kernels it
    /// launches there run while the next pieces are still being copied. The copies start
    /// after the work already on the compute stream. Pieces are whole elements.
    pub(crate) fn upload_staged_then<T: Copy>(
        &mut self,
        dst: sys::CUdeviceptr,
        src: &[T],
        then: &mut dyn FnMut(&Self, usize, usize) -> Result<(), GpuError>,
    ) -> Result<(), GpuError> {
        self.upload_staged_inner(dst, src, Some(then))
    }

    fn upload_staged_inner<T: Copy>(
        &mut self,
        dst: sys::CUdeviceptr,
        src: &[T],
        mut then: Option<&mut dyn FnMut(&Self, usize, usize) -> Result<(), GpuError>>,
    ) -> Result<(), GpuError> {
        let bytes = std::mem::size_of_val(src);
        let elem = std::mem::size_of::<T>().max(1);
        if bytes < STAGE_MIN {
            self.upload(dst, src)?;
            if let Some(f) = then.as_mut() {
                f(self, 0, src.len())?;
            }
            return Ok(());
        }
        // SAFETY: T is Copy plain data (field elements, points); viewed as bytes for the copy.
        let src = unsafe { std::slice::from_raw_parts(src.as_ptr() as *const u8, bytes) };
        if self.staging.is_none() {
            self.staging = Some(Staging::new()?);
        }
        let st = self.staging.as_ref().expect("just set");
        let copy_stream = if then.is_some() {
            // dst may still be read by kernels queued earlier on the compute stream.
            check(
                unsafe { result::event::record(st.ordered, self.stream) },
                "cuEventRecord",
            )?;
            check(
                unsafe {
                    result::stream::wait_event(
                        self.copy_stream,
                        st.ordered,
                        sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT,
                    )
                },
                "cuStreamWaitEvent",
            )?;
            self.copy_stream
        } else {
            self.stream
        };
        // Pieces of whole elements, so that `then` sees whole scalars or points (32 MB is not a
        // multiple of a 96-byte point).
        let piece = STAGE_BYTES - STAGE_BYTES % elem;
        for (i, chunk) in src.chunks(piece).enumerate() {
            let k = i % 2;
            // The buffer is free once the DMA issued from it two chunks ago has finished.
            check(
                unsafe { result::event::synchronize(st.done[k]) },
                "cuEventSynchronize",
            )?;
            // SAFETY: bufs[k] holds STAGE_BYTES >= chunk.len() bytes, and no DMA reads it now.
            let stage = unsafe { std::slice::from_raw_parts_mut(st.bufs[k], chunk.len()) };
            par_copy(stage, chunk);
            let off = (i * piece) as u64;
            check(
                unsafe { result::memcpy_htod_async(dst + off, &*stage, copy_stream) },
                "cuMemcpyHtoDAsync",
            )?;
            check(
                unsafe { result::event::record(st.done[k], copy_stream) },
                "cuEventRecord",
            )?;
            if let Some(f) = then.as_mut() {
                check(
                    unsafe {
                        result::stream::wait_event(
                            self.stream,
                            st.done[k],
                            sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT,
                        )
                    },
                    "cuStreamWaitEvent",
                )?;
                f(self, i * piece / elem, chunk.len() / elem)?;
            }
        }
        // Both buffers must be idle before the next call (or Drop) touches them.
        for k in 0..2 {
            check(
                unsafe { result::event::synchronize(st.done[k]) },
                "cuEventSynchronize",
            )?;
        }
        Ok(())
    }

    /// Device → host copy of a large buffer through the pinned staging buffers; returns
    /// when `dst` holds the data (earlier work on the stream included).
    pub(crate) fn download_staged<T: Copy>(
        &mut self,
        dst: &mut [T],
        src: sys::CUdeviceptr,
    ) -> Result<(), GpuError> {
        let bytes = std::mem::size_of_val(dst);
        if bytes < STAGE_MIN {
            self.download(dst, src)?;
            return self.sync();
        }
        // SAFETY: as in upload_staged; every byte of dst is written below.
        let dst = unsafe { std::slice::from_raw_parts_mut(dst.as_mut_ptr() as *mut u8, bytes) };
        if self.staging.is_none() {
            self.staging = Some(Staging::new()?);
        }
        let st = self.staging.as_ref().expect("just set");
        let chunks: Vec<&mut [u8]> = dst.chunks_mut(STAGE_BYTES).collect();
        let mut pending: Option<(usize, &mut [u8])> = None;
        for (i, out) in chunks.into_iter().enumerate() {
            let k = i % 2;
            let len = out.len();
            // SAFETY: bufs[k] is idle: its previous chunk was copied out before this point.
            let stage = unsafe { std::slice::from_raw_parts_mut(st.bufs[k], len) };
            let off = (i * STAGE_BYTES) as u64;
            check(
                unsafe { result::memcpy_dtoh_async(stage, src + off, self.stream) },
                "cuMemcpyDtoHAsync",
            )?;
            check(
                unsafe { result::event::record(st.done[k], self.stream) },
                "cuEventRecord",
            )?;
            // While this chunk moves, copy the previous one out of its buffer.
            if let Some((j, prev)) = pending.take() {
                let kj = j % 2;
                check(
                    unsafe { result::event::synchronize(st.done[kj]) },
                    "cuEventSynchronize",
                )?;
                let stage = unsafe { std::slice::from_raw_parts(st.bufs[kj], prev.len()) };
                par_copy(prev, stage);
            }
            pending = Some((i, out));
        }
        if let Some((j, prev)) = pending.take() {
            let kj = j % 2;
            check(
                unsafe { result::event::synchronize(st.done[kj]) },
                "cuEventSynchronize",
            )?;
            let stage = unsafe { std::slice::from_raw_parts(st.bufs[kj], prev.len()) };
            par_copy(prev, stage);
        }
        Ok(())
    }

    /// `bytes` from `src` to `dst`, both on the device, ordered on the stream.
    pub(crate) fn copy_on_device(
        &self,
        dst: sys::CUdeviceptr,
        src: sys::CUdeviceptr,
        bytes: usize,
    ) -> Result<(), GpuError> {
        check(
            unsafe { result::memcpy_dtod_async(dst, src, bytes, self.stream) },
            "cuMemcpyDtoDAsync",
        )
    }

    pub(crate) fn download<T>(&self, dst: &mut [T], src: sys::CUdeviceptr) -> Result<(), GpuError> {
        check(
            unsafe { result::memcpy_dtoh_async(dst, src, self.stream) },
            "cuMemcpyDtoHAsync",
        )
    }

    pub(crate) fn memset0(&self, dst: sys::CUdeviceptr, bytes: usize) -> Result<(), GpuError> {
        check(
            unsafe { result::memset_d8_async(dst, 0, bytes, self.stream) },
            "cuMemsetD8Async",
        )
    }

    pub(crate) fn sync(&self) -> Result<(), GpuError> {
        check(
            unsafe { result::stream::synchronize(self.stream) },
            "cuStreamSynchronize",
        )
    }

    /// Launches `name` over `threads` threads in blocks of `block`.
    ///
    /// # Safety
    /// `args` must hold values whose types and order match the kernel's signature,
    /// and every device pointer among them must cover what the kernel touches.
    pub(crate) unsafe fn launch(
        &self,
        name: &'static str,
        threads: u64,
        block: u32,
        smem: u32,
        mut args: Args,
    ) -> Result<(), GpuError> {
        if threads == 0 {
            return Ok(());
        }
        let f = *self
            .functions
            .get(name)
            .expect("every launched kernel is in KERNELS");
        let grid = threads.div_ceil(block as u64);
        if grid > i32::MAX as u64 {
            return Err(GpuError::InvalidArgument(format!(
                "{name}: grid of {grid} blocks is too large"
            )));
        }
        let mut params = args.pointers();
        self.timeline.borrow_mut().bracket(self.stream, || {
            check(
                result::launch_kernel(
                    f,
                    (grid as u32, 1, 1),
                    (block, 1, 1),
                    smem,
                    self.stream,
                    &mut params,
                ),
                &format!("cuLaunchKernel({name})"),
            )
        })
    }

    /// Launches `name` with an explicit grid (blocks) and block size.
    pub(crate) unsafe fn launch_grid(
        &self,
        name: &'static str,
        grid: u32,
        block: u32,
        mut args: Args,
    ) -> Result<(), GpuError> {
        let f = *self
            .functions
            .get(name)
            .expect("every launched kernel is in KERNELS");
        let mut params = args.pointers();
        self.timeline.borrow_mut().bracket(self.stream, || {
            check(
                result::launch_kernel(f, (grid, 1, 1), (block, 1, 1), 0, self.stream, &mut params),
                &format!("cuLaunchKernel({name})"),
            )
        })
    }

    /// The time the device had kernels of this context running since the last call
    /// (device-side event times; see `timeline.rs`). Waits for the last launched kernel.
    pub fn take_kernel_time(&mut self) -> Result<std::time::Duration, GpuError> {
        self.bind()?;
        self.timeline.get_mut().take()
    }

    /// A timing event recorded now on the stream.
    pub(crate) fn mark(&self) -> Result<Event, GpuError> {
        let e = check(
            result::event::create(sys::CUevent_flags::CU_EVENT_DEFAULT),
            "cuEventCreate",
        )?;
        let ev = Event(e);
        check(
            unsafe { result::event::record(ev.0, self.stream) },
            "cuEventRecord",
        )?;
        Ok(ev)
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

/// Kernel arguments: each value is copied into its own 8-byte-aligned slot, and
/// cuLaunchKernel gets the slots' addresses (it copies the values at launch). The slots do
/// not move between `pointers()` and the launch: nothing is pushed after it.
#[derive(Default)]
pub(crate) struct Args {
    slots: Vec<[u64; 4]>,
}

impl Args {
    pub(crate) fn new() -> Self {
        Args::default()
    }

    /// Appends one argument (a device pointer, an integer, or a field element by value).
    pub(crate) fn arg<T: Copy>(mut self, v: T) -> Self {
        assert!(
            std::mem::size_of::<T>() <= 32,
            "kernel arguments are at most 32 bytes"
        );
        let mut slot = [0u64; 4];
        // SAFETY: the slot has 32 bytes and T is Copy with size <= 32.
        unsafe {
            std::ptr::copy_nonoverlapping(
                &v as *const T as *const u8,
                slot.as_mut_ptr() as *mut u8,
                std::mem::size_of::<T>(),
            );
        }
        self.slots.push(slot);
        self
    }

    pub(crate) fn pointers(&mut self) -> Vec<*mut c_void> {
        self.slots
            .iter_mut()
            .map(|b| b.as_mut_ptr() as *mut c_void)
            .collect()
    }
}
