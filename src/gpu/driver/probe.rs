//! Finding the driver and the devices.
//!
//! cudarc's dynamic loading panics when `libcuda` is missing or lacks a symbol of the CUDA
//! version it was built for (13.0). So [`probe`] first opens the library itself and asks
//! `cuDriverGetVersion`, and only then lets cudarc load it (inside `catch_unwind` as a last
//! guard); a machine without a driver, or with a driver older than 13.0, gets an error value.

use std::ffi::{c_void, CString};
use std::sync::OnceLock;

use cudarc::driver::result;
use cudarc::driver::sys;

use crate::gpu::{DeviceInfo, GpuError, MemoryInfo};

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

pub(super) fn device_info(ordinal: usize) -> Result<DeviceInfo, GpuError> {
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
        shared_memory_per_multiprocessor: attr(
            CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR,
        )? as u32,
        shared_memory_per_block_optin: attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)?
            as u32,
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
