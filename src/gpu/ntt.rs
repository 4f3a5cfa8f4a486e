//! Fr NTT on the device: the launch sequence of `cuda/ntt.cuh`.

use std::time::Instant;

use blstrs::{G1Projective, Scalar};
use ff::{Field, PrimeField};

use super::driver::{DevPtr, DeviceG1Points, Event, GpuContext, Scratch};
use super::gather::DeviceScalars;
use super::msm::{Points, Scalars, G1};
use super::r1cs::DeviceR1cs;
use super::types::NttGeometry;
use super::{GpuError, MsmTimings, NttKind, NttTimings};

/// Largest supported transform: 2^27 elements (4 GiB of values, plus as much again in scratch).
pub const MAX_LOG_N: u32 = 27;

/// base^(2^k) for k < 32, the table the power kernels read.
fn pow2_table(base: Scalar) -> [Scalar; 32] {
    let mut t = [Scalar::ONE; 32];
    let mut b = base;
    for e in t.iter_mut() {
        *e = b;
        b = b.square();
    }
    t
}

impl GpuContext {
    /// In-place NTT of `values` (length a power of two, at most 2^27), natural order in and out.
    pub fn ntt(&mut self, values: &mut [Scalar], kind: NttKind) -> Result<(), GpuError> {
        self.ntt_timed(values, kind).map(|_| ())
    }

    /// [`Self::ntt`] with the time of each stage.
    pub fn ntt_timed(
        &mut self,
        values: &mut [Scalar],
        kind: NttKind,
    ) -> Result<NttTimings, GpuError> {
        let t0 = Instant::now();
        let n = values.len();
        if !n.is_power_of_two() || n > 1 << MAX_LOG_N {
            return Err(GpuError::InvalidArgument(format!(
                "ntt: length {n} is not a power of two in 1..=2^{MAX_LOG_N}"
            )));
        }
        if n == 1 {
            return Ok(NttTimings::default()); // every kind is the identity on one element
        }
        self.bind()?;
        let log_n = n.trailing_zeros();
        let inverse = matches!(kind, NttKind::Inverse | NttKind::InverseCoset);
        let d_a = self.scratch(Scratch::NttA, n)?;
        let d_b = self.scratch(Scratch::NttB, n)?;
        let d_pw = self.scratch(Scratch::NttPowers, 32)?;

        let e0 = self.mark()?;
        self.upload_staged(d_a, values)?;
        let e1 = self.mark()?;
        let tw = self.twiddle_table(log_n, inverse, d_pw)?;
        let e2 = self.mark()?;

        let g = Scalar::MULTIPLICATIVE_GENERATOR;
        let n_inv = Scalar::from(n as u64).invert().expect("n < r");
        if kind == NttKind::Coset {
            self.scale(d_a, n as u32, g, Scalar::ONE, d_pw, DevPtr::NULL)?;
        }
        self.transform(d_a, d_b, tw, log_n)?;
        match kind {
            NttKind::Inverse => {
                self.scale(d_b, n as u32, Scalar::ONE, n_inv, d_pw, DevPtr::NULL)?
            }
            NttKind::InverseCoset => {
                let g_inv = g.invert().expect("g != 0");
                self.scale(d_b, n as u32, g_inv, n_inv, d_pw, DevPtr::NULL)?
            }
            _ => {}
        }
        let e3 = self.mark()?;
        self.download_staged(values, d_b)?;
        let e4 = self.mark()?;
        self.sync()?;
        stage_timings([e0, e1, e2, e3, e4], 0.0, t0)
    }

    /// The radix-2 transform with twiddle table `tw`, from `src` (read only)
    /// into `dst`: bit-reversal gather and the first stages in one pass, then the rest in as
    /// few passes as the tile geometry allows (`NttGeometry`).
    fn transform(
        &self,
        src: DevPtr<Scalar>,
        dst: DevPtr<Scalar>,
        tw: DevPtr<Scalar>,
        log_n: u32,
    ) -> Result<(), GpuError> {
        let geometry = NttGeometry::for_device(self.ntt_tuning.tile_log, self.info());
        // SAFETY: src and dst hold n elements, tw n/2.
        unsafe {
            self.ntt_first_stages(geometry, src, dst, tw, log_n)?;
            let mut s0 = log_n.min(geometry.tile_log);
            while s0 < log_n {
                let k = geometry.mid_pass_stages(log_n, s0);
                self.ntt_mid_stages(geometry, dst, tw, log_n, s0, k)?;
                s0 += k;
            }
        }
        Ok(())
    }

    /// The quotient polynomial's coefficients of a Groth16 proof, as
    /// `cpu::ntt::h_coefficients` computes them: a, b, c are evaluations at ω^i (length
    /// n = 2^k, k >= 1); a and b go to the coset g·ω^i (iNTT, then coset NTT), a·b goes back
    /// to coefficients (inverse coset NTT), and c's coefficients (iNTT) come off there, all
    /// over Z's value on the coset: six transforms. Returns the
    /// n − 1 coefficients in `a[..n-1]` and sets `a[n-1]` to zero (callers truncate `a`).
    /// Everything between the uploads and the one download stays on the device. The result
    /// goes into `a` rather than a new vector: first-touching a fresh 2 GiB vector cost more
    /// than the whole transfer (929 ms at 2^26 on an H200 host).
    pub fn h_coefficients(
        &mut self,
        a: &mut [Scalar],
        b: &[Scalar],
        c: &[Scalar],
    ) -> Result<NttTimings, GpuError> {
        let t0 = Instant::now();
        let n = a.len();
        let (d_h, [e0, e1, e2, e3], overlapped) =
            self.quotient_on_device(HInput::Host(a, b, c), None)?;
        self.download_staged(&mut a[..n - 1], d_h)?;
        a[n - 1] = Scalar::ZERO;
        let e4 = self.mark()?;
        self.sync()?;
        stage_timings([e0, e1, e2, e3, e4], overlapped, t0)
    }

    /// [`Self::h_coefficients`] for the H MSM of a proof: the n − 1 coefficients stay on the
    /// device, copied into the MSM's scalar buffer (an MSM over `Scalars::Scratch(n - 1)`
    /// takes them from there), instead of going to the host and back (2 × n·32 bytes).
    /// `download_ms` is that device-to-device copy. `beside`: an upload that goes up under
    /// the transforms (see `quotient_on_device`).
    fn h_coefficients_for_msm(
        &mut self,
        evaluations: HInput<'_>,
        beside: Option<(DevPtr<Scalar>, &[Scalar])>,
    ) -> Result<NttTimings, GpuError> {
        let t0 = Instant::now();
        let n = evaluations.len();
        let (d_h, [e0, e1, e2, e3], overlapped) = self.quotient_on_device(evaluations, beside)?;
        let d_scalars = self.msm_scalar_scratch(n - 1)?;
        self.copy_on_device(d_scalars, d_h, n - 1)?;
        let e4 = self.mark()?;
        self.sync()?;
        stage_timings([e0, e1, e2, e3, e4], overlapped, t0)
    }

    /// H = Σ h_i·points[i] over the quotient's n − 1 coefficients h (a, b, c as in
    /// [`Self::h_coefficients`]) with the points resident: the coefficients go from the
    /// transform straight into the MSM, not through the host (2 × n·32 bytes less).
    pub fn h_msm_g1_resident(
        &mut self,
        a: &[Scalar],
        b: &[Scalar],
        c: &[Scalar],
        points: &DeviceG1Points,
    ) -> Result<(G1Projective, NttTimings, MsmTimings), GpuError> {
        let n = a.len();
        if n < 2 || points.len() < n - 1 {
            return Err(GpuError::InvalidArgument(format!(
                "h_msm_g1_resident: {} points for a domain of {n}",
                points.len()
            )));
        }
        let nt = self.h_coefficients_for_msm(HInput::Host(a, b, c), None)?;
        let (h, mt) =
            self.msm_inner::<G1>(Points::Device(points.device_ptr()), Scalars::Scratch(n - 1))?;
        Ok((h, nt, mt))
    }

    /// [`Self::h_msm_g1_resident`] that also puts `aux` (a witness's aux values) on the
    /// device for the MSMs after it, as [`Self::upload_scalars`] would, but under the
    /// quotient's transforms instead of with the device idle.
    pub fn h_msm_g1_resident_uploading(
        &mut self,
        [a, b, c]: [&[Scalar]; 3],
        points: &DeviceG1Points,
        aux: &[Scalar],
    ) -> Result<(G1Projective, NttTimings, MsmTimings, DeviceScalars), GpuError> {
        let n = a.len();
        if n < 2 || points.len() < n - 1 {
            return Err(GpuError::InvalidArgument(format!(
                "h_msm_g1_resident: {} points for a domain of {n}",
                points.len()
            )));
        }
        self.bind()?;
        let buf = self.alloc(std::mem::size_of_val(aux))?;
        if self.poison_scratch {
            self.poison(&[(buf.ptr::<u8>().addr(), buf.bytes)])?;
        }
        let nt = self.h_coefficients_for_msm(HInput::Host(a, b, c), Some((buf.ptr(), aux)))?;
        let aux = DeviceScalars::new(buf, aux.len(), self.cu_ctx());
        let (h, mt) =
            self.msm_inner::<G1>(Points::Device(points.device_ptr()), Scalars::Scratch(n - 1))?;
        Ok((h, nt, mt, aux))
    }

    /// [`Self::h_msm_g1_resident`] from a, b and c already on the device (`abc`, `n`
    /// elements each, zero-padded: staged ahead of the start phase), transformed there in
    /// place.
    pub(crate) fn h_msm_g1_resident_device(
        &mut self,
        abc: [DevPtr<Scalar>; 3],
        n: usize,
        points: &DeviceG1Points,
    ) -> Result<(G1Projective, NttTimings, MsmTimings), GpuError> {
        if n < 2 || points.len() < n - 1 {
            return Err(GpuError::InvalidArgument(format!(
                "h_msm_g1_resident_device: {} points for a domain of {n}",
                points.len()
            )));
        }
        self.bind()?;
        let nt = self.h_coefficients_for_msm(HInput::Device(abc, n), None)?;
        let (h, mt) =
            self.msm_inner::<G1>(Points::Device(points.device_ptr()), Scalars::Scratch(n - 1))?;
        Ok((h, nt, mt))
    }

    /// [`Self::h_msm_g1_resident`] on the recorded path: a, b and c are computed on the
    /// device from the witness (`r1cs`'s matrices, the inputs from the host, the aux values
    /// already there), zero-padded to the domain of `n`, and never exist on the host. The
    /// mat-vec's time is the third value (event time); `upload_ms` of the NTT timings is
    /// zero, nothing being uploaded for the H step.
    pub(crate) fn h_msm_g1_resident_recorded(
        &mut self,
        r1cs: &DeviceR1cs,
        input: &[Scalar],
        aux: &DeviceScalars,
        n: usize,
        points: &DeviceG1Points,
    ) -> Result<(G1Projective, NttTimings, f32, MsmTimings), GpuError> {
        if n < 2 || points.len() < n - 1 {
            return Err(GpuError::InvalidArgument(format!(
                "h_msm_g1_resident_recorded: {} points for a domain of {n}",
                points.len()
            )));
        }
        self.bind()?;
        let e0 = self.mark()?;
        let abc = self.r1cs_evaluations_into_ntt(r1cs, input, aux, n)?;
        let e1 = self.mark()?;
        let nt = self.h_coefficients_for_msm(HInput::Device(abc, n), None)?;
        // h_coefficients_for_msm synchronized the stream: both events have completed.
        let matvec_ms = e0.ms_to(&e1)?;
        let (h, mt) =
            self.msm_inner::<G1>(Points::Device(points.device_ptr()), Scalars::Scratch(n - 1))?;
        Ok((h, nt, matvec_ms, mt))
    }

    /// The quotient step up to its result on the device: returns where the n coefficients
    /// are (the last one zero) and the events after the first upload, the twiddles and the
    /// kernels.
    ///
    /// Host evaluations go up one at a time, each while the device transforms the one before
    /// it (the copies run on the copy stream and the host waits for each, so what it queues
    /// after one sees its data): the device waits only for a. At 2^24 the three are 1.5 GB,
    /// as long on the link as their transforms on the device. `beside` (destination, values)
    /// goes up last, under c's transforms and the quotient, with nothing queued that reads
    /// it; the MSMs after the quotient do.
    fn quotient_on_device(
        &mut self,
        evaluations: HInput<'_>,
        beside: Option<(DevPtr<Scalar>, &[Scalar])>,
    ) -> Result<(DevPtr<Scalar>, [Event; 4], f32), GpuError> {
        let n = evaluations.len();
        let ok = |n: usize| n >= 2 && n.is_power_of_two() && n <= 1 << MAX_LOG_N;
        match evaluations {
            HInput::Host(a, b, c) if b.len() != n || c.len() != n || !ok(n) => {
                return Err(GpuError::InvalidArgument(format!(
                    "h_coefficients: lengths {}, {}, {} must be one power of two in 2..=2^{MAX_LOG_N}",
                    a.len(),
                    b.len(),
                    c.len()
                )));
            }
            HInput::Device(_, n) if !ok(n) => {
                return Err(GpuError::InvalidArgument(format!(
                    "h_coefficients: a domain of {n} is not a power of two in 2..=2^{MAX_LOG_N}"
                )));
            }
            _ => {}
        }
        self.bind()?;
        let log_n = n.trailing_zeros();
        // The transforms run in place over a, b and c: where they already are on the device
        // (the recorded mat-vec's output, staged inputs), else in the H step's buffers.
        let d = match evaluations {
            HInput::Device(abc, _) => abc,
            HInput::Host(..) => [
                self.scratch(Scratch::NttA, n)?,
                self.scratch(Scratch::NttB, n)?,
                self.scratch(Scratch::NttC, n)?,
            ],
        };
        let d_t = self.scratch(Scratch::NttT, n)?;
        let d_pw = self.scratch(Scratch::NttPowers, 32)?;
        let host = match evaluations {
            HInput::Host(a, b, c) => Some([a, b, c]),
            HInput::Device(..) => None,
        };
        // Uploads beside the kernels wait for what the stream held before this step (its
        // buffers may have been read there), not for the step's own transforms.
        let overlap = self.overlap_uploads;
        let e0 = self.mark()?;
        if let Some(host) = host {
            match overlap {
                true => self.upload_staged_beside(d[0], host[0], &e0)?,
                false => {
                    for (&v, values) in d.iter().zip(host) {
                        self.upload_staged(v, values)?;
                    }
                }
            }
        }
        let e1 = self.mark()?;
        let tw_inv = self.twiddle_table(log_n, true, d_pw)?;
        let tw_fwd = self.twiddle_table(log_n, false, d_pw)?;
        let e2 = self.mark()?;

        let g = Scalar::MULTIPLICATIVE_GENERATOR;
        let g_inv = g.invert().expect("g != 0");
        let n_inv = Scalar::from(n as u64).invert().expect("n < r");
        // 1 / Z(g·ω^i) = 1 / (g^n − 1), the same constant on the whole coset.
        let z_inv = (g.pow_vartime([n as u64]) - Scalar::ONE)
            .invert()
            .expect("g is not an n-th root of unity");
        // Host time of the uploads that ran under the kernels.
        let mut overlapped = std::time::Duration::ZERO;
        for (k, &v) in d.iter().enumerate() {
            if let (Some(host), 1.., true) = (host, k, overlap) {
                let tu = Instant::now();
                self.upload_staged_beside(v, host[k], &e0)?;
                overlapped += tu.elapsed();
            }
            self.transform(v, d_t, tw_inv, log_n)?;
            if k < 2 {
                self.scale(d_t, n as u32, g, n_inv, d_pw, DevPtr::NULL)?; // 1/n of the iNTT, g^i of the coset
                self.transform(d_t, v, tw_fwd, log_n)?;
            }
        }
        // c's coefficients (times n) are in d_t. iNTT_coset is linear and undoes c's coset
        // NTT, so iNTT_coset(a·b − c) = iNTT_coset(a·b) − iNTT(c): c needs no coset
        // evaluations, one transform fewer than the textbook quotient's seven (the same
        // coefficients for any a, b, c).
        // SAFETY: two n-element buffers.
        unsafe { self.ntt_pointwise_mul(d[0], d[1], n as u32)? };
        self.transform(d[0], d[2], tw_inv, log_n)?;
        self.scale(d[2], n as u32, g_inv, n_inv * z_inv, d_pw, d_t)?;
        let e3 = self.mark()?;
        if let Some((dst, values)) = beside {
            match overlap {
                true => {
                    let tu = Instant::now();
                    self.upload_staged_beside(dst, values, &e0)?;
                    overlapped += tu.elapsed();
                }
                false => self.upload_staged(dst, values)?,
            }
        }
        Ok((d[2], [e0, e1, e2, e3], overlapped.as_secs_f32() * 1e3))
    }

    /// v[i] *= factor · base^i on the device, or with a non-null `minus` (n elements)
    /// v[i] = (v[i] · base^i − minus[i]) · factor. `d_pw` is a 32-entry scratch table; the
    /// upload is ordered on the stream before the kernel that reads it.
    fn scale(
        &self,
        v: DevPtr<Scalar>,
        n: u32,
        base: Scalar,
        factor: Scalar,
        d_pw: DevPtr<Scalar>,
        minus: DevPtr<Scalar>,
    ) -> Result<(), GpuError> {
        self.upload(d_pw, &pow2_table(base))?;
        // SAFETY: v holds n elements, d_pw 32, minus (when not null) n.
        unsafe { self.ntt_scale(v, d_pw, factor, minus, n) }
    }

    /// ω^j (or ω^-j) for j < n/2, cached per size and direction.
    fn twiddle_table(
        &mut self,
        log_n: u32,
        inverse: bool,
        d_pw: DevPtr<Scalar>,
    ) -> Result<DevPtr<Scalar>, GpuError> {
        if let Some(b) = self.twiddles.get(&(log_n, inverse)) {
            return Ok(b.ptr());
        }
        let omega = Scalar::ROOT_OF_UNITY.pow_vartime([1u64 << (Scalar::S - log_n)]);
        let base = if inverse {
            omega.invert().expect("ω != 0")
        } else {
            omega
        };
        let half = 1usize << (log_n - 1);
        let buf = self.alloc(half * 32)?;
        self.upload(d_pw, &pow2_table(base))?;
        // SAFETY: buf holds half elements, d_pw 32.
        unsafe { self.ntt_powers(buf.ptr(), d_pw, half as u32)? };
        let p = buf.ptr();
        self.twiddles.insert((log_n, inverse), buf);
        Ok(p)
    }
}

/// Where the H step's evaluations a, b and c are.
#[derive(Clone, Copy)]
enum HInput<'a> {
    /// On the host: uploaded first.
    Host(&'a [Scalar], &'a [Scalar], &'a [Scalar]),
    /// Already on the device, this many each (transformed in place).
    Device([DevPtr<Scalar>; 3], usize),
}

impl HInput<'_> {
    fn len(&self) -> usize {
        match *self {
            HInput::Host(a, _, _) => a.len(),
            HInput::Device(_, n) => n,
        }
    }
}

/// The stages between five events (upload, twiddles, kernels, download) of a call that
/// started at `t0` and has synchronized, with the host time of the uploads that ran under
/// its kernels.
fn stage_timings(
    e: [Event; 5],
    overlapped_upload_ms: f32,
    t0: Instant,
) -> Result<NttTimings, GpuError> {
    Ok(NttTimings {
        upload_ms: e[0].ms_to(&e[1])?,
        overlapped_upload_ms,
        twiddles_ms: e[1].ms_to(&e[2])?,
        kernels_ms: e[2].ms_to(&e[3])?,
        download_ms: e[3].ms_to(&e[4])?,
        total_ms: t0.elapsed().as_secs_f32() * 1e3,
    })
}
