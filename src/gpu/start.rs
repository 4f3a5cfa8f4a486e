//! The start phase on a CUDA device: the H polynomial through the device NTTs and the four
//! G1 MSMs (H, L, A, B_g1) through the device Pippenger.
//!
//! This first integration keeps the host in charge of the data flow: each transform and each
//! MSM uploads its input and downloads its result, the pointwise A·B − C and the density
//! gathers run on the host, and the SRS points are uploaded with every MSM. It is correct
//! and uses the device for all the heavy arithmetic; keeping the vectors and the SRS resident
//! on the device is the next step (notes/gpu.md).

use std::sync::Mutex;
use std::time::Instant;

use blstrs::Scalar;
use ff::Field;
use rayon::prelude::*;

use super::{GpuContext, NttKind};
use crate::cpu::msm::{gather, Selection};
use crate::cpu::ntt::Domain;
use crate::error::{Error, Result};
use crate::groth16::assignment::{Evaluations, Witness};
use crate::groth16::prover::{PartialProof, StartPhase, StartTimings};
use crate::groth16::srs::Srs;

/// The start phase on one CUDA device.
pub struct GpuStart {
    // The engine's device mutex already serializes start phases per device; this lock only
    // gives `&self` access to the context's `&mut` API and is never contended.
    ctx: Mutex<GpuContext>,
}

impl std::fmt::Debug for GpuStart {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuStart").finish_non_exhaustive()
    }
}

impl GpuStart {
    /// A start phase on device `ordinal`; fails when there is no such device or no kernels.
    pub fn new(ordinal: usize) -> Result<Self> {
        Ok(GpuStart {
            ctx: Mutex::new(GpuContext::new(ordinal)?),
        })
    }
}

impl StartPhase for GpuStart {
    fn name(&self) -> &'static str {
        "cuda"
    }

    fn start(
        &self,
        srs: &Srs,
        evaluations: Evaluations,
        w: &Witness,
    ) -> Result<(PartialProof, StartTimings)> {
        let mut ctx = self
            .ctx
            .lock()
            .map_err(|_| Error::internal("a previous start phase on this device panicked"))?;
        let t0 = Instant::now();
        let Evaluations {
            mut a,
            mut b,
            mut c,
        } = evaluations;
        let n = a.len().next_power_of_two();
        for v in [&mut a, &mut b, &mut c] {
            v.resize(n, Scalar::ZERO);
            ctx.ntt(v, NttKind::Inverse)?;
            ctx.ntt(v, NttKind::Coset)?;
        }
        a.par_iter_mut()
            .zip(b.par_iter())
            .zip(c.par_iter())
            .with_min_len(1 << 12)
            .for_each(|((a, b), c)| *a = *a * b - c);
        drop((b, c));
        ctx.ntt(&mut a, NttKind::InverseCoset)?;
        let z_inv = Domain::cached(n.trailing_zeros())?.z_inv_on_coset();
        a.truncate(n - 1);
        a.par_iter_mut()
            .with_min_len(1 << 12)
            .for_each(|x| *x *= z_inv);
        let ntt = t0.elapsed();

        let t1 = Instant::now();
        let h = ctx.msm_g1(&srs.h, &a)?;
        drop(a);
        let l = ctx.msm_g1(&srs.l, &w.aux)?;
        let a_scalars = gather(&[
            (&w.input, Selection::All),
            (&w.aux, Selection::Dense(&w.a_aux_density)),
        ]);
        let a = ctx.msm_g1(&srs.a, &a_scalars)?;
        drop(a_scalars);
        let b_scalars = gather(&[
            (&w.input, Selection::Dense(&w.b_input_density)),
            (&w.aux, Selection::Dense(&w.b_aux_density)),
        ]);
        let b_g1 = ctx.msm_g1(&srs.b_g1, &b_scalars)?;
        Ok((
            PartialProof { h, l, a, b_g1 },
            StartTimings {
                ntt,
                msm: t1.elapsed(),
            },
        ))
    }
}
