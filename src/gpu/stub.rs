//! The GPU API of a build without CUDA kernels: everything reports `NotCompiled`.

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};

use super::{DeviceInfo, GpuError, MemoryInfo, MsmTimings, NttKind, NttTimings};
use crate::groth16::density::Selection;

/// Always `Err(NotCompiled)`: this build has no kernels to run.
pub fn discover() -> Result<Vec<DeviceInfo>, GpuError> {
    Err(GpuError::NotCompiled)
}

/// Always `Err(NotCompiled)`.
pub fn memory_info(_ordinal: usize) -> Result<MemoryInfo, GpuError> {
    Err(GpuError::NotCompiled)
}

/// G1 points on a device; cannot exist in a build without kernels.
#[derive(Debug)]
pub struct DeviceG1Points {
    _private: (),
}

impl DeviceG1Points {
    /// Number of points.
    pub fn len(&self) -> usize {
        0
    }

    /// Whether there are no points.
    pub fn is_empty(&self) -> bool {
        true
    }

    /// Device memory held, in bytes.
    pub fn device_bytes(&self) -> usize {
        0
    }
}

/// G2 points on a device; cannot exist in a build without kernels.
#[derive(Debug)]
pub struct DeviceG2Points {
    _private: (),
}

impl DeviceG2Points {
    /// Number of points.
    pub fn len(&self) -> usize {
        0
    }

    /// Whether there are no points.
    pub fn is_empty(&self) -> bool {
        true
    }

    /// Device memory held, in bytes.
    pub fn device_bytes(&self) -> usize {
        0
    }
}

/// G1 window points on a device; cannot exist in a build without kernels.
#[derive(Debug)]
pub struct DeviceG1WindowPoints {
    _private: (),
}

impl DeviceG1WindowPoints {
    /// The number of scalars an MSM over them takes.
    pub fn len(&self) -> usize {
        0
    }

    /// Whether there are no points.
    pub fn is_empty(&self) -> bool {
        true
    }

    /// The window size they were built for.
    pub fn window_bits(&self) -> u32 {
        0
    }

    /// Device memory held, in bytes.
    pub fn device_bytes(&self) -> usize {
        0
    }
}

/// Scalars on a device; cannot exist in a build without kernels.
#[derive(Debug)]
pub struct DeviceScalars {
    _private: (),
}

impl DeviceScalars {
    /// Number of scalars.
    pub fn len(&self) -> usize {
        0
    }

    /// Whether there are no scalars.
    pub fn is_empty(&self) -> bool {
        true
    }

    /// Device memory held, in bytes.
    pub fn device_bytes(&self) -> usize {
        0
    }
}

/// Recorded R1CS matrices on a device; cannot exist in a build without kernels.
#[derive(Debug)]
pub struct DeviceR1cs {
    _private: (),
}

impl DeviceR1cs {
    /// Rows of each matrix.
    pub fn rows(&self) -> usize {
        0
    }

    /// Device memory held, in bytes.
    pub fn device_bytes(&self) -> usize {
        0
    }
}

/// A device context; cannot be created in a build without kernels.
#[derive(Debug)]
pub struct GpuContext {
    _private: (),
}

impl GpuContext {
    /// Always `Err(NotCompiled)`.
    pub fn new(_ordinal: usize) -> Result<Self, GpuError> {
        Err(GpuError::NotCompiled)
    }

    /// The device's description.
    pub fn info(&self) -> &DeviceInfo {
        unreachable!("a GpuContext cannot exist without kernels")
    }

    /// Σ scalars[i]·points[i].
    pub fn msm_g1(
        &mut self,
        _points: &[G1Affine],
        _scalars: &[Scalar],
    ) -> Result<G1Projective, GpuError> {
        Err(GpuError::NotCompiled)
    }

    /// [`Self::msm_g1`] with stage timings.
    pub fn msm_g1_timed(
        &mut self,
        _points: &[G1Affine],
        _scalars: &[Scalar],
    ) -> Result<(G1Projective, MsmTimings), GpuError> {
        Err(GpuError::NotCompiled)
    }

    /// Σ scalars[i]·points[i] over G2, with stage timings.
    pub fn msm_g2_timed(
        &mut self,
        _points: &[G2Affine],
        _scalars: &[Scalar],
    ) -> Result<(G2Projective, MsmTimings), GpuError> {
        Err(GpuError::NotCompiled)
    }

    /// Copies G2 points to the device once.
    pub fn upload_g2_points(&mut self, _points: &[G2Affine]) -> Result<DeviceG2Points, GpuError> {
        Err(GpuError::NotCompiled)
    }

    /// G2 MSM over points already on the device.
    pub fn msm_g2_resident(
        &mut self,
        _points: &DeviceG2Points,
        _start: usize,
        _scalars: &[Scalar],
    ) -> Result<(G2Projective, MsmTimings), GpuError> {
        Err(GpuError::NotCompiled)
    }

    /// Copies points to the device once.
    pub fn upload_g1_points(&mut self, _points: &[G1Affine]) -> Result<DeviceG1Points, GpuError> {
        Err(GpuError::NotCompiled)
    }

    /// MSM over points already on the device.
    pub fn msm_g1_resident(
        &mut self,
        _points: &DeviceG1Points,
        _start: usize,
        _scalars: &[Scalar],
    ) -> Result<(G1Projective, MsmTimings), GpuError> {
        Err(GpuError::NotCompiled)
    }

    /// Expands points on the device into window points.
    pub fn g1_window_points(
        &mut self,
        _points: &DeviceG1Points,
        _start: usize,
        _len: usize,
        _c: u32,
    ) -> Result<DeviceG1WindowPoints, GpuError> {
        Err(GpuError::NotCompiled)
    }

    /// MSM over window points.
    pub fn msm_g1_windowed(
        &mut self,
        _points: &DeviceG1WindowPoints,
        _scalars: &[Scalar],
    ) -> Result<(G1Projective, MsmTimings), GpuError> {
        Err(GpuError::NotCompiled)
    }

    /// Copies scalars to the device once.
    pub fn upload_scalars(&mut self, _scalars: &[Scalar]) -> Result<DeviceScalars, GpuError> {
        Err(GpuError::NotCompiled)
    }

    /// MSM over points on the device with scalars selected on the device.
    pub fn msm_g1_resident_device_scalars(
        &mut self,
        _points: &DeviceG1Points,
        _front: &[Scalar],
        _scalars: &DeviceScalars,
        _selection: Selection<'_>,
    ) -> Result<(G1Projective, MsmTimings), GpuError> {
        Err(GpuError::NotCompiled)
    }

    /// The G2 version: B_g2 from scalars selected on the device.
    pub fn msm_g2_resident_device_scalars(
        &mut self,
        _points: &DeviceG2Points,
        _front: &[Scalar],
        _scalars: &DeviceScalars,
        _selection: Selection<'_>,
    ) -> Result<(G2Projective, MsmTimings), GpuError> {
        Err(GpuError::NotCompiled)
    }

    /// In-place NTT.
    pub fn ntt(&mut self, _values: &mut [Scalar], _kind: NttKind) -> Result<(), GpuError> {
        Err(GpuError::NotCompiled)
    }

    /// [`Self::ntt`] with stage timings.
    pub fn ntt_timed(
        &mut self,
        _values: &mut [Scalar],
        _kind: NttKind,
    ) -> Result<NttTimings, GpuError> {
        Err(GpuError::NotCompiled)
    }

    /// The quotient polynomial's coefficients from a, b, c evaluations.
    pub fn h_coefficients(
        &mut self,
        _a: &mut [Scalar],
        _b: &[Scalar],
        _c: &[Scalar],
    ) -> Result<NttTimings, GpuError> {
        Err(GpuError::NotCompiled)
    }

    /// The H MSM over the quotient's coefficients, kept on the device.
    pub fn h_msm_g1_resident(
        &mut self,
        _a: &[Scalar],
        _b: &[Scalar],
        _c: &[Scalar],
        _points: &DeviceG1Points,
    ) -> Result<(G1Projective, NttTimings, MsmTimings), GpuError> {
        Err(GpuError::NotCompiled)
    }

    /// The H MSM, with aux values uploaded under its transforms.
    pub fn h_msm_g1_resident_uploading(
        &mut self,
        _abc: [&[Scalar]; 3],
        _points: &DeviceG1Points,
        _aux: &[Scalar],
    ) -> Result<(G1Projective, NttTimings, MsmTimings, DeviceScalars), GpuError> {
        Err(GpuError::NotCompiled)
    }

    /// Frees cached device buffers (twiddles, MSM scratch).
    pub fn release_scratch(&mut self) {}

    /// The H MSM from a, b and c computed on the device.
    pub(crate) fn h_msm_g1_resident_recorded(
        &mut self,
        _r1cs: &DeviceR1cs,
        _input: &[Scalar],
        _aux: &DeviceScalars,
        _n: usize,
        _points: &DeviceG1Points,
    ) -> Result<(G1Projective, NttTimings, f32, MsmTimings), GpuError> {
        Err(GpuError::NotCompiled)
    }

    /// Uploads a circuit shape's A, B and C.
    pub fn upload_r1cs(
        &mut self,
        _matrices: [super::CsrMatrix<'_>; 3],
        _table: &[Scalar],
        _inputs: usize,
        _aux: usize,
    ) -> Result<DeviceR1cs, GpuError> {
        Err(GpuError::NotCompiled)
    }

    /// a, b and c of a witness, computed on the device.
    pub fn r1cs_evaluate(
        &mut self,
        _r1cs: &DeviceR1cs,
        _input: &[Scalar],
        _aux: &[Scalar],
    ) -> Result<[Vec<Scalar>; 3], GpuError> {
        Err(GpuError::NotCompiled)
    }

    /// Replaces the MSM overrides.
    pub fn set_msm_tuning(&mut self, _tuning: super::MsmTuning) {}

    /// Nothing to tune.
    pub fn set_ntt_tuning(&mut self, _tuning: super::NttTuning) {}

    /// Overlapped or in-order H-step uploads (nothing to set without kernels).
    pub fn set_overlap_uploads(&mut self, _on: bool) {}

    /// The scratch-poisoning diagnostic (nothing to poison without kernels).
    #[doc(hidden)]
    pub fn set_poison_scratch(&mut self, _on: bool) {}

    /// Always `Err(NotCompiled)`: no device memory to fill.
    #[doc(hidden)]
    pub fn fill_free_memory(&self, _byte: u8) -> Result<(usize, usize), GpuError> {
        Err(GpuError::NotCompiled)
    }

    /// Always `Err(NotCompiled)`.
    pub(crate) fn stager(&self) -> Result<Stager, GpuError> {
        Err(GpuError::NotCompiled)
    }

    /// Always `Err(NotCompiled)`.
    pub(crate) fn h_msm_g1_resident_staged(
        &mut self,
        _e: &StagedEvaluations,
        _points: &DeviceG1Points,
    ) -> Result<(G1Projective, NttTimings, MsmTimings), GpuError> {
        Err(GpuError::NotCompiled)
    }

    /// The device's kernel-active time and span since the last call.
    pub fn take_kernel_time(&mut self) -> Result<crate::gpu::KernelTime, GpuError> {
        Err(GpuError::NotCompiled)
    }

    /// Device bytes this context's buffers hold.
    pub fn memory_in_use(&self) -> usize {
        0
    }

    /// The most device bytes this context's buffers held at once.
    pub fn memory_peak(&self) -> usize {
        0
    }

    /// The most device bytes this context may allocate.
    pub fn memory_limit(&self) -> usize {
        0
    }

    /// Sets the most device bytes this context may allocate.
    pub fn set_memory_limit(&mut self, _bytes: usize) {}

    /// Refuses the next `n` allocations (a test hook).
    #[doc(hidden)]
    pub fn refuse_allocations(&self, _n: usize) {}

    pub(crate) fn take_out_of_memory(&self) -> bool {
        false
    }
}

/// Inputs staged ahead of a start phase; cannot exist in a build without kernels.
pub(crate) struct StagedInputs {
    pub(crate) aux: DeviceScalars,
    pub(crate) evaluations: Option<StagedEvaluations>,
}

/// Staged a, b and c; cannot exist in a build without kernels.
pub(crate) struct StagedEvaluations {
    pub(crate) n: usize,
}

/// A device's staging side; cannot exist in a build without kernels.
pub(crate) struct Stager {
    _private: (),
}

impl Stager {
    /// Always `Err(NotCompiled)`.
    pub(crate) fn stage(
        &mut self,
        _aux: &[Scalar],
        _evaluations: Option<([&[Scalar]; 3], usize)>,
    ) -> Result<Option<StagedInputs>, GpuError> {
        Err(GpuError::NotCompiled)
    }
}
