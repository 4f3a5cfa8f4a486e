//! The start phase on the CPU.

use std::time::{Duration, Instant};

use super::msm::{msm, Selection, G1};
use super::ntt::{h_coefficients, Domain};
use crate::error::Result;
use crate::groth16::assignment::{Evaluations, Witness};
use crate::groth16::prover::{PartialProof, StartPhase, StartTimings};
use crate::groth16::srs::Srs;

/// `f()` and the time it took.
fn timed<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let t = Instant::now();
    (f(), t.elapsed())
}

/// The CPU start phase: NTTs and G1 MSMs on rayon and blst's thread pool.
#[derive(Clone, Copy, Debug, Default)]
pub struct CpuStart;

impl StartPhase for CpuStart {
    fn name(&self) -> &'static str {
        "cpu"
    }

    fn start(
        &self,
        srs: &Srs,
        evaluations: Evaluations,
        w: &Witness,
    ) -> Result<(PartialProof, StartTimings)> {
        let t0 = Instant::now();
        let Evaluations {
            mut a,
            mut b,
            mut c,
        } = evaluations;
        let domain = Domain::cached(a.len().next_power_of_two().trailing_zeros())?;
        for v in [&mut a, &mut b, &mut c] {
            v.resize(domain.size(), Default::default());
        }
        let h = h_coefficients(&domain, a, b, c);
        let ntt = t0.elapsed();

        // The MSMs read the density selections in place: no gather, no transfer.
        let t1 = Instant::now();
        let (h, msm_h) = timed(|| msm::<G1>(&srs.h, &[(&h, Selection::All)]));
        let (l, msm_l) = timed(|| msm::<G1>(&srs.l, &[(&w.aux, Selection::All)]));
        let (a, msm_a) = timed(|| msm::<G1>(&srs.a, &w.a_query()));
        let (b_g1, msm_b_g1) = timed(|| msm::<G1>(&srs.b_g1, &w.b_query()));
        Ok((
            PartialProof {
                h,
                l,
                a,
                b_g1,
                b_g2: None,
            },
            StartTimings {
                ntt,
                msm: t1.elapsed(),
                msm_h,
                msm_l,
                msm_a,
                msm_b_g1,
                ..StartTimings::default()
            },
        ))
    }
}
