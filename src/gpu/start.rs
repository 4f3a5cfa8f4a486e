//! The start phase on a CUDA device: the H polynomial through the device NTTs and the four
//! G1 MSMs (H, L, A, B_g1) through the device Pippenger.
//!
//! H runs wholly on the device (one upload of a, b and c, one download of H). Each MSM uploads
//! its scalars and, for now, its SRS points too; the density gathers run on the host. Keeping
//! each SRS resident on the device (LRU across SRSs) is the next step (notes/gpu.md).

use std::sync::Mutex;
use std::time::Instant;

use blstrs::Scalar;
use ff::Field;

use super::GpuContext;
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
        }
        let h = if n < 2 {
            // A one-element domain has no H coefficient; the device transform needs n ≥ 2.
            crate::cpu::ntt::h_coefficients(&*Domain::cached(0)?, a, b, c)
        } else {
            ctx.h_coefficients(&mut a, &b, &c)?;
            drop((b, c));
            a.truncate(n - 1);
            a
        };
        let ntt = t0.elapsed();

        let t1 = Instant::now();
        let h = ctx.msm_g1(&srs.h, &h)?;
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
