//! Density gathers on the device: MSMs whose scalars are picked out of a vector that is
//! already on the device (a witness's aux values) by a density bitmap.
//!
//! The A and B_g1 sections hold a point only for the variables their density bitmap selects,
//! so their scalar vectors are the selected aux values packed, after the (few) selected
//! public inputs. Gathering them on the host meant a pass over all aux values and an upload
//! of each packed vector; here the aux values go to the device once per start phase and each
//! MSM uploads only the bitmap (n/64 words and their prefix popcounts, computed on the host)
//! and its front part, and `cuzk_gather_dense` (`cuda/gather.cuh`) packs the selected values
//! straight into the MSM's scalar buffer. The MSM converts that buffer in place, which is why
//! L (every aux value) takes a device copy too rather than the uploaded vector itself.

use std::time::Instant;

use blstrs::{G1Projective, G2Projective, Scalar};
use cudarc::driver::{result, sys};
use group::Group;

use super::driver::{
    DevBuf, DevPtr, DeviceG1Points, DeviceG2Points, DevicePoints, GpuContext, Scratch,
};
use super::msm::{DeviceCurve, Points, Scalars, G1, G2};
use super::{GpuError, MsmTimings};
use crate::groth16::density::Selection;

/// Scalars kept on one device while several MSMs read them (a witness's aux values during a
/// start phase), made by [`GpuContext::upload_scalars`] and read by
/// [`GpuContext::msm_g1_resident_device_scalars`], which never change them. Drop it before
/// the `GpuContext` it came from.
pub struct DeviceScalars {
    // Field order: `buf` is freed (in its own Drop) after this struct's Drop made `ctx` current.
    buf: DevBuf,
    len: usize,
    ctx: sys::CUcontext,
}

// SAFETY: a device allocation and the context handle it belongs to; freeing binds the context.
unsafe impl Send for DeviceScalars {}
unsafe impl Sync for DeviceScalars {}

impl DeviceScalars {
    /// Takes `buf`, which holds `len` scalars on the device of `ctx`.
    pub(crate) fn new(buf: DevBuf, len: usize, ctx: sys::CUcontext) -> Self {
        DeviceScalars { buf, len, ctx }
    }

    /// Number of scalars.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no scalars.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Device memory held, in bytes.
    pub fn device_bytes(&self) -> usize {
        self.buf.bytes
    }

    pub(crate) fn device_ptr(&self) -> DevPtr<Scalar> {
        self.buf.ptr()
    }

    pub(crate) fn context(&self) -> sys::CUcontext {
        self.ctx
    }
}

impl std::fmt::Debug for DeviceScalars {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceScalars")
            .field("len", &self.len)
            .finish_non_exhaustive()
    }
}

impl Drop for DeviceScalars {
    fn drop(&mut self) {
        // cuMemFree needs a current context; the buffer is freed right after this.
        let _ = unsafe { result::ctx::set_current(self.ctx) };
    }
}

/// Each word's exclusive prefix popcount: the rank of its first set bit among all set bits.
fn prefix_popcounts(words: &[u64]) -> Vec<u32> {
    let mut sum = 0u32;
    words
        .iter()
        .map(|w| {
            let before = sum;
            sum += w.count_ones();
            before
        })
        .collect()
}

impl GpuContext {
    /// Copies `scalars` (Montgomery form, as blstrs stores them) to the device, where they
    /// stay unchanged for [`Self::msm_g1_resident_device_scalars`].
    pub fn upload_scalars(&mut self, scalars: &[Scalar]) -> Result<DeviceScalars, GpuError> {
        self.bind()?;
        let buf = self.alloc(std::mem::size_of_val(scalars))?;
        self.upload_staged(buf.ptr(), scalars)?;
        self.sync()?;
        Ok(DeviceScalars::new(buf, scalars.len(), self.cu_ctx()))
    }

    /// Σ sᵢ·points[i] over the scalars `front` followed by the elements of `scalars` that
    /// `selection` picks, in order: `cpu::msm::gather(&[(front, All), (aux, selection)])`
    /// with `aux` the host copy of `scalars`. The selection is applied on the device and
    /// `scalars` is left as it was, so one upload serves several MSMs. `points` must hold
    /// exactly one point per selected scalar.
    ///
    /// In the timings, `upload_ms` is the time to put the scalars in place (the front and the
    /// bitmap uploads and the gather kernel); the points are not uploaded.
    pub fn msm_g1_resident_device_scalars(
        &mut self,
        points: &DeviceG1Points,
        front: &[Scalar],
        scalars: &DeviceScalars,
        selection: Selection<'_>,
    ) -> Result<(G1Projective, MsmTimings), GpuError> {
        self.msm_resident_device_scalars::<G1>(points, front, scalars, selection)
    }

    /// The G2 version of [`Self::msm_g1_resident_device_scalars`] (B_g2 from the aux values
    /// already on the device).
    pub fn msm_g2_resident_device_scalars(
        &mut self,
        points: &DeviceG2Points,
        front: &[Scalar],
        scalars: &DeviceScalars,
        selection: Selection<'_>,
    ) -> Result<(G2Projective, MsmTimings), GpuError> {
        self.msm_resident_device_scalars::<G2>(points, front, scalars, selection)
    }

    fn msm_resident_device_scalars<C: DeviceCurve>(
        &mut self,
        points: &DevicePoints<C::Affine>,
        front: &[Scalar],
        scalars: &DeviceScalars,
        selection: Selection<'_>,
    ) -> Result<(C::Projective, MsmTimings), GpuError> {
        let t0 = Instant::now();
        if points.context() != self.cu_ctx() || scalars.ctx != self.cu_ctx() {
            return Err(GpuError::InvalidArgument(format!(
                "{}_resident_device_scalars: points or scalars live on another device",
                C::NAME
            )));
        }
        let selected = match selection {
            Selection::All => scalars.len,
            Selection::Dense(d) if d.len() == scalars.len => d.count_ones(),
            Selection::Dense(d) => {
                return Err(GpuError::InvalidArgument(format!(
                    "{}_resident_device_scalars: a density of {} bits for {} scalars",
                    C::NAME,
                    d.len(),
                    scalars.len
                )))
            }
        };
        let count = front.len() + selected;
        if count != points.len() {
            return Err(GpuError::InvalidArgument(format!(
                "{}_resident_device_scalars: {count} scalars ({} in front, {selected} \
                 selected) but {} points",
                C::NAME,
                front.len(),
                points.len()
            )));
        }
        if count >= 1 << 31 || scalars.len >= 1 << 31 {
            return Err(GpuError::InvalidArgument(format!(
                "{}_resident_device_scalars: {count} of {} scalars is over 2^31 - 1",
                C::NAME,
                scalars.len
            )));
        }
        if count == 0 {
            return Ok((C::Projective::identity(), MsmTimings::default()));
        }
        self.bind()?;
        let d_out = self.msm_scalar_scratch(count)?;
        let e0 = self.mark()?;
        if !front.is_empty() {
            self.upload(d_out, front)?;
        }
        // A null bitmap makes the kernel copy every element.
        let (d_words, d_prefix) = match selection {
            Selection::Dense(d) if scalars.len > 0 => {
                let words = d.words();
                let prefix = prefix_popcounts(words);
                let d_words = self.scratch(Scratch::GatherWords, words.len())?;
                let d_prefix = self.scratch(Scratch::GatherPrefix, prefix.len())?;
                self.upload_staged(d_words, words)?;
                self.upload_staged(d_prefix, &prefix)?;
                (d_words, d_prefix)
            }
            _ => (DevPtr::NULL, DevPtr::NULL),
        };
        // SAFETY: the kernel reads scalars.len elements of the scalars, the bitmap words and
        // prefixes covering them (d.len() == scalars.len), and writes `selected` elements
        // after the front, inside the count-element scratch buffer.
        unsafe {
            self.gather_dense(
                scalars.device_ptr(),
                d_words,
                d_prefix,
                scalars.len as u32,
                d_out.add(front.len()),
            )?;
        }
        let e1 = self.mark()?;
        let (p, mut timings) =
            self.msm_inner::<C>(Points::Device(points.device_ptr()), Scalars::Scratch(count))?;
        // The MSM synchronized the stream, so both events have completed.
        timings.upload_ms = e0.ms_to(&e1)?;
        timings.total_ms = t0.elapsed().as_secs_f32() * 1e3;
        Ok((p, timings))
    }
}

#[cfg(test)]
mod tests {
    use super::prefix_popcounts;

    #[test]
    fn prefix_popcounts_are_exclusive() {
        assert_eq!(
            prefix_popcounts(&[0b1011, 0, u64::MAX, 1]),
            vec![0, 3, 3, 67]
        );
        assert!(prefix_popcounts(&[]).is_empty());
    }
}
