//! The Groth16 prover, split where the GPU's work ends.
//!
//! [`StartPhase::start`] is the device's share: the H polynomial through the NTTs and the G1
//! MSMs for H, L, A and B_g1. [`finish`] is the host's: the B_g2 MSM and the assembly of A,
//! B, C with the randomizers r and s. The engine runs `start` under the device mutex and
//! `finish` on a finalizer thread, so one partition's B_g2 overlaps the next one's GPU work.

use std::time::{Duration, Instant};

use blstrs::{G1Projective, G2Projective, Scalar};
use ff::Field;
use group::{prime::PrimeCurveAffine, Curve};

use super::assignment::{Assignment, Evaluations, Witness};
use super::deferred::DeferredEvaluations;
use super::proof::Proof;
use super::srs::Srs;
pub use super::stages::StartTimings;
use crate::cpu::msm::{msm, G2};
use crate::error::{Error, ErrorKind, Result};

/// What the start phase hands to `finish`: the four G1 MSM results.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PartialProof {
    /// Σ hᵢ·Hᵢ.
    pub h: G1Projective,
    /// Σ auxᵢ·Lᵢ.
    pub l: G1Projective,
    /// Σ over inputs and A-dense aux of value·Aᵢ.
    pub a: G1Projective,
    /// Σ over B-dense inputs and aux of value·B_g1ᵢ.
    pub b_g1: G1Projective,
    /// The same sum over B_g2, when the start phase computed it (a GPU does, with the G1
    /// MSMs); `None` leaves it to [`finish`], on the host, overlapping the next start phase.
    pub b_g2: Option<G2Projective>,
}

/// The kind of processor a start phase runs on, as the stats report it. The numbers are
/// the C ABI's `cuzk_backend` codes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum BackendKind {
    /// The host's CPUs.
    #[default]
    Cpu = 0,
    /// A CUDA GPU.
    Cuda = 1,
}

/// Where a start phase runs: the kind of processor and, for a GPU, its driver ordinal.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Backend {
    /// The host's CPUs.
    #[default]
    Cpu,
    /// The CUDA device with this driver ordinal.
    Cuda {
        /// The device's driver ordinal.
        ordinal: u32,
    },
}

impl Backend {
    /// The kind, without the ordinal.
    pub fn kind(self) -> BackendKind {
        match self {
            Backend::Cpu => BackendKind::Cpu,
            Backend::Cuda { .. } => BackendKind::Cuda,
        }
    }

    /// The GPU's driver ordinal; `None` on the CPU.
    pub fn gpu_ordinal(self) -> Option<u32> {
        match self {
            Backend::Cpu => None,
            Backend::Cuda { ordinal } => Some(ordinal),
        }
    }
}

/// What a backend moved to its device ahead of one start phase ([`StartPhase::stage`]), for
/// that start phase alone. Opaque: only the backend that made it reads it; dropping it frees
/// what it holds.
pub struct Staged(Box<dyn std::any::Any + Send>);

impl Staged {
    /// Wraps a backend's staged inputs.
    pub fn new<T: std::any::Any + Send>(inputs: T) -> Self {
        Staged(Box::new(inputs))
    }

    /// The backend's inputs, if they are of type `T` (they are not when another backend
    /// made them: that start phase then runs unstaged).
    pub fn into_inner<T: std::any::Any>(self) -> Option<T> {
        self.0.downcast().ok().map(|b| *b)
    }
}

impl std::fmt::Debug for Staged {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Staged")
    }
}

/// The device share of a proof. Implemented by the CPU backend and, where present, the GPU.
pub trait StartPhase: Send + Sync {
    /// The backend's name, as the stats and `cuzk_version()` report it.
    fn name(&self) -> &'static str;

    /// Where this start phase runs, for the stats. The default is the CPU: a backend that
    /// drives a device says which.
    fn backend(&self) -> Backend {
        Backend::Cpu
    }

    /// Computes H and the G1 MSMs. `evaluations` is consumed (its memory is freed as soon as
    /// H is known). The caller has validated the assignment against `srs`.
    fn start(
        &self,
        srs: &Srs,
        evaluations: Evaluations,
        witness: &Witness,
    ) -> Result<(PartialProof, StartTimings)>;

    /// As [`StartPhase::start`], with a, b and c computed from the witness by `deferred`'s
    /// recorded matrices. The default computes them on the host and proves as `start` does;
    /// a GPU computes them on the device instead.
    fn start_deferred(
        &self,
        srs: &Srs,
        deferred: &dyn DeferredEvaluations,
        witness: &Witness,
    ) -> Result<(PartialProof, StartTimings)> {
        let t0 = std::time::Instant::now();
        let evaluations = deferred.evaluate(witness)?;
        let matvec = t0.elapsed();
        let (partial, timings) = self.start(srs, evaluations, witness)?;
        Ok((partial, StartTimings { matvec, ..timings }))
    }

    /// Whether [`StartPhase::start_deferred`] makes a, b and c where the host never holds
    /// them (a GPU: on the device, from resident matrices). The engine then reserves only a
    /// deferred partition's witness in its host budget. The default, the host computing
    /// them, says no.
    fn evaluates_deferred_off_host(&self) -> bool {
        false
    }

    /// Moves what a start phase of `witness` (and of `evaluations`, when it has host ones)
    /// will read to the device ahead of it. The engine calls it before it takes the device's
    /// mutex, while the device may be running another partition's kernels, so that the
    /// mutex covers the kernels and not the copies. `Ok(None)` stages nothing: the default
    /// (the CPU has nothing to move), or a device without room or not yet warm for `srs`.
    fn stage(
        &self,
        _srs: &Srs,
        _evaluations: Option<&Evaluations>,
        _witness: &Witness,
    ) -> Result<Option<Staged>> {
        Ok(None)
    }

    /// [`StartPhase::start`] with what [`StartPhase::stage`] staged for it. The default
    /// ignores `staged`.
    fn start_staged(
        &self,
        srs: &Srs,
        evaluations: Evaluations,
        witness: &Witness,
        staged: Staged,
    ) -> Result<(PartialProof, StartTimings)> {
        drop(staged);
        self.start(srs, evaluations, witness)
    }

    /// [`StartPhase::start_deferred`] with what [`StartPhase::stage`] staged for it. The
    /// default ignores `staged`.
    fn start_deferred_staged(
        &self,
        srs: &Srs,
        deferred: &dyn DeferredEvaluations,
        witness: &Witness,
        staged: Staged,
    ) -> Result<(PartialProof, StartTimings)> {
        drop(staged);
        self.start_deferred(srs, deferred, witness)
    }

    /// Makes `srs` ready on this device before its first proof (a host's start-up preload):
    /// a GPU uploads its points into its resident cache, when they fit. The CPU has nothing
    /// to do.
    fn preload(&self, _srs: &Srs) -> Result<()> {
        Ok(())
    }
}

/// The randomizers r and s of one proof.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Randomness {
    /// r.
    pub r: Scalar,
    /// s.
    pub s: Scalar,
}

impl Randomness {
    /// Fresh r and s from the operating system's RNG.
    pub fn random() -> Self {
        let mut rng = rand_core::OsRng;
        Randomness {
            r: Scalar::random(&mut rng),
            s: Scalar::random(&mut rng),
        }
    }
}

/// The B_g2 MSM: Σ over B-dense inputs and aux of value·B_g2ᵢ.
pub fn b_g2_msm(srs: &Srs, witness: &Witness) -> G2Projective {
    msm::<G2>(&srs.b_g2, &witness.b_query())
}

/// The host share: the B_g2 MSM, then the assembly
/// A = α + a + r·δ, B = β + b₂ + s·δ, C = h + l + s·a + r·b₁ + s·α + r·β + rs·δ
/// (a, b₁, b₂, h, l the MSM results). Any correct assembly gives the same points, so the
/// bytes match bellperson's for the same r and s.
pub fn finish(
    srs: &Srs,
    witness: &Witness,
    partial: &PartialProof,
    rs: Randomness,
) -> Result<Proof> {
    finish_timed(srs, witness, partial, rs).map(|(proof, _)| proof)
}

/// [`finish`], with the time its B_g2 MSM took.
pub fn finish_timed(
    srs: &Srs,
    witness: &Witness,
    partial: &PartialProof,
    rs: Randomness,
) -> Result<(Proof, Duration)> {
    let vk = &srs.vk;
    if bool::from(vk.delta_g1.is_identity() | vk.delta_g2.is_identity()) {
        return Err(Error::new(
            ErrorKind::InvalidParams,
            "params have δ at infinity: no zero-knowledge proof is possible with them",
        ));
    }
    let Randomness { r, s } = rs;
    let t = Instant::now();
    let b_g2 = partial.b_g2.unwrap_or_else(|| b_g2_msm(srs, witness));
    let b_g2_time = t.elapsed();

    let g_a = vk.delta_g1 * r + vk.alpha_g1 + partial.a;
    let g_b = vk.delta_g2 * s + vk.beta_g2 + b_g2;
    let g_c = vk.delta_g1 * (r * s)
        + vk.alpha_g1 * s
        + vk.beta_g1 * r
        + partial.a * s
        + partial.b_g1 * r
        + partial.h
        + partial.l;
    let proof = Proof {
        a: g_a.to_affine(),
        b: g_b.to_affine(),
        c: g_c.to_affine(),
    };
    Ok((proof, b_g2_time))
}

/// Validates, starts and finishes one proof on `backend`.
pub fn prove(
    backend: &dyn StartPhase,
    srs: &Srs,
    assignment: Assignment,
    rs: Randomness,
) -> Result<Proof> {
    assignment.validate(srs)?;
    let Assignment {
        evaluations,
        witness,
    } = assignment;
    let (partial, _) = backend.start(srs, evaluations, &witness)?;
    finish(srs, &witness, &partial, rs)
}

/// Proves a batch of same-shaped partitions under one SRS, one (r, s) each.
pub fn prove_batch(
    backend: &dyn StartPhase,
    srs: &Srs,
    assignments: Vec<Assignment>,
    rs: &[Randomness],
) -> Result<Vec<Proof>> {
    if assignments.len() != rs.len() {
        return Err(Error::invalid_argument(format!(
            "{} partitions but {} (r, s) pairs",
            assignments.len(),
            rs.len()
        )));
    }
    for (i, a) in assignments.iter().enumerate() {
        a.validate(srs)
            .map_err(|e| e.context(format!("partition {i}")))?;
    }
    assignments
        .into_iter()
        .zip(rs)
        .map(|(a, rs)| prove(backend, srs, a, *rs))
        .collect()
}
