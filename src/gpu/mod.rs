//! GPU backend: device discovery, the embedded kernels, G1 MSM and Fr NTT on CUDA devices.
//!
//! The kernels (`cuda/`) are compiled by `build.rs` into one fatbin that is embedded in the
//! library and loaded per device when a [`GpuContext`] is created. The CUDA driver is
//! loaded at run time (cudarc, dynamic loading): the library links no CUDA library, and on a
//! machine without a driver or GPU [`devices`] is empty and [`GpuContext::new`] fails with a
//! [`GpuError`]; nothing panics or aborts.
//!
//! When the crate is built without the `cuda` feature, or `build.rs` found no nvcc, this
//! module keeps the same API and every entry point reports [`GpuError::NotCompiled`].
//!
//! Data layout: inputs and outputs are blstrs types, used as stored (Montgomery form, blst
//! limb order), so host buffers go to the device without conversion. MSM scalars are
//! converted from Montgomery form on the device.

mod error;
mod memory;
mod release;
mod resident;
mod start;
mod types;

pub use crate::groth16::CsrMatrix;
pub use error::GpuError;
pub use memory::MemoryInfo;
pub use start::GpuStart;
pub use types::{
    DeviceInfo, KernelTime, MsmTimings, MsmTuning, NttKind, NttTimings, NttTuning, MAX_WINDOW_BITS,
    WINDOW_POINTS_BITS,
};

#[cfg(cuzk_cuda_kernels)]
mod driver;
#[cfg(cuzk_cuda_kernels)]
mod gather;
#[cfg(cuzk_cuda_kernels)]
mod kernels;
#[cfg(cuzk_cuda_kernels)]
mod msm;
#[cfg(cuzk_cuda_kernels)]
mod ntt;
#[cfg(cuzk_cuda_kernels)]
mod r1cs;
#[cfg(cuzk_cuda_kernels)]
mod stage;
#[cfg(cuzk_cuda_kernels)]
mod timeline;

#[cfg(cuzk_cuda_kernels)]
pub use driver::{discover, memory_info, DeviceG1Points, DeviceG2Points, DevicePoints, GpuContext};
#[cfg(cuzk_cuda_kernels)]
pub use gather::DeviceScalars;
#[cfg(cuzk_cuda_kernels)]
pub use msm::DeviceG1WindowPoints;
#[cfg(cuzk_cuda_kernels)]
pub use r1cs::DeviceR1cs;
#[cfg(cuzk_cuda_kernels)]
use stage::{StagedInputs, Stager};

#[cfg(not(cuzk_cuda_kernels))]
mod stub;
#[cfg(not(cuzk_cuda_kernels))]
pub use stub::{
    discover, memory_info, DeviceG1Points, DeviceG1WindowPoints, DeviceG2Points, DeviceR1cs,
    DeviceScalars, GpuContext,
};
#[cfg(not(cuzk_cuda_kernels))]
use stub::{StagedInputs, Stager};

/// The usable CUDA devices; empty when there is no driver, no GPU, or no compiled kernels.
/// [`discover`] says why a list is empty.
pub fn devices() -> Vec<DeviceInfo> {
    discover().unwrap_or_default()
}

/// Whether this build carries GPU kernels at all.
pub const KERNELS_COMPILED: bool = cfg!(cuzk_cuda_kernels);
