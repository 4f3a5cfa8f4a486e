//! What a host submits: one [`JobRequest`], whose input is either partitions already
//! synthesized or circuits for the engine's synthesis stage to synthesize.

use std::sync::Arc;
use std::time::Duration;

use bellpepper_core::Circuit;
use blstrs::Scalar;

use super::queue::Priority;
use super::{AdmissionPolicy, RandomnessChoice};
use crate::error::Result;
use crate::groth16::{synthesize, Assignment, CircuitShape, Evaluations, Srs, Witness};
use crate::r1cs::{self, R1csCache, RecordedCircuit, ShapeKey, WitnessProfile, WitnessValues};

/// What a job proves. It decides the job's default priority class and the label its
/// figures carry in the stats; a new Filecoin proof kind is one arm here.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u32)]
pub enum JobKind {
    /// A PoRep C2 (interactive or the circuit proofs of NI-PoRep).
    PoRep = 0,
    /// A SnapDeals (empty sector update) proof.
    SnapDeals = 1,
    /// A WindowPoSt partition or window.
    WindowPost = 2,
    /// A WinningPoSt.
    WinningPost = 3,
    /// Any other circuit.
    Other = 4,
}

/// Number of [`JobKind`]s, the length of the stats' per-kind arrays.
pub const JOB_KINDS: usize = 5;

impl JobKind {
    /// Every kind, in stats order.
    pub const ALL: [JobKind; JOB_KINDS] = [
        JobKind::PoRep,
        JobKind::SnapDeals,
        JobKind::WindowPost,
        JobKind::WinningPost,
        JobKind::Other,
    ];

    /// The index of this kind in the stats' per-kind arrays.
    pub fn index(self) -> usize {
        self as usize
    }

    /// The label its figures carry (Prometheus `kind`, Go and C docs).
    pub fn label(self) -> &'static str {
        match self {
            JobKind::PoRep => "porep",
            JobKind::SnapDeals => "snap_deals",
            JobKind::WindowPost => "window_post",
            JobKind::WinningPost => "winning_post",
            JobKind::Other => "other",
        }
    }

    /// The class its partitions are queued in unless the request says otherwise.
    pub fn priority(self) -> Priority {
        match self {
            JobKind::WinningPost => Priority::WinningPost,
            JobKind::WindowPost => Priority::WindowPost,
            JobKind::PoRep | JobKind::SnapDeals => Priority::PorepSnap,
            JobKind::Other => Priority::Other,
        }
    }
}

/// A partition's circuit, built on the synthesis thread and synthesized there.
trait BuildCircuit: Send {
    fn synthesize(self: Box<Self>) -> Result<Assignment>;
    fn synthesize_recorded(
        self: Box<Self>,
        cache: &R1csCache,
        key: &ShapeKey,
        vk: Option<&dyn Fn() -> Vec<u8>>,
    ) -> Result<Assignment>;
    fn record(self: Box<Self>) -> Result<(RecordedCircuit, WitnessValues)>;
    fn witness(self: Box<Self>) -> Result<WitnessValues>;
    fn witness_through_gadgets(self: Box<Self>) -> Result<WitnessValues>;
    fn witness_profile(self: Box<Self>, depth: usize) -> Result<(WitnessValues, WitnessProfile)>;
    fn witness_recorded(
        self: Box<Self>,
        cache: &R1csCache,
        key: &ShapeKey,
        vk: Option<&dyn Fn() -> Vec<u8>>,
    ) -> Result<(Arc<RecordedCircuit>, Witness)>;
    #[cfg(feature = "bellperson-oracle")]
    fn bellperson_proof(
        self: Box<Self>,
        params: &bellperson::groth16::Parameters<blstrs::Bls12>,
        r: Scalar,
        s: Scalar,
    ) -> Result<[u8; crate::groth16::PROOF_BYTES]>;
}

struct Builder<F>(F);

impl<C, F> BuildCircuit for Builder<F>
where
    C: Circuit<Scalar> + Send + 'static,
    F: FnOnce() -> Result<C> + Send,
{
    fn synthesize(self: Box<Self>) -> Result<Assignment> {
        synthesize((self.0)()?)
    }

    fn synthesize_recorded(
        self: Box<Self>,
        cache: &R1csCache,
        key: &ShapeKey,
        vk: Option<&dyn Fn() -> Vec<u8>>,
    ) -> Result<Assignment> {
        cache.synthesize_with(key, (self.0)()?, vk)
    }

    fn record(self: Box<Self>) -> Result<(RecordedCircuit, WitnessValues)> {
        r1cs::record((self.0)()?)
    }

    fn witness(self: Box<Self>) -> Result<WitnessValues> {
        r1cs::witness((self.0)()?)
    }

    fn witness_through_gadgets(self: Box<Self>) -> Result<WitnessValues> {
        r1cs::witness_through_gadgets((self.0)()?)
    }

    fn witness_profile(self: Box<Self>, depth: usize) -> Result<(WitnessValues, WitnessProfile)> {
        r1cs::witness_profile((self.0)()?, depth)
    }

    fn witness_recorded(
        self: Box<Self>,
        cache: &R1csCache,
        key: &ShapeKey,
        vk: Option<&dyn Fn() -> Vec<u8>>,
    ) -> Result<(Arc<RecordedCircuit>, Witness)> {
        cache.witness(key, (self.0)()?, vk)
    }

    #[cfg(feature = "bellperson-oracle")]
    fn bellperson_proof(
        self: Box<Self>,
        params: &bellperson::groth16::Parameters<blstrs::Bls12>,
        r: Scalar,
        s: Scalar,
    ) -> Result<[u8; crate::groth16::PROOF_BYTES]> {
        let proof =
            bellperson::groth16::create_proof::<blstrs::Bls12, _, _>((self.0)()?, params, r, s)
                .map_err(|e| crate::error::Error::internal(format!("bellperson: {e}")))?;
        let mut out = [0u8; crate::groth16::PROOF_BYTES];
        proof
            .write(&mut out[..])
            .map_err(|e| crate::error::Error::internal(format!("bellperson proof: {e}")))?;
        Ok(out)
    }
}

/// One partition for the synthesis stage: a circuit that is built and synthesized on one of
/// the engine's synthesis threads when its turn comes (so that building the circuit, too,
/// happens in the pool, not in the submitter).
///
/// A circuit with a [`ShapeKey`] is synthesized from its recorded R1CS (recorded by the
/// first circuit of that key the engine synthesizes): only its witness and a mat-vec.
pub struct PartitionCircuit {
    build: Box<dyn BuildCircuit>,
    shape_key: Option<ShapeKey>,
}

impl std::fmt::Debug for PartitionCircuit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PartitionCircuit")
            .field("shape_key", &self.shape_key)
            .finish_non_exhaustive()
    }
}

impl PartitionCircuit {
    /// Any bellpepper circuit, synthesized with [`synthesize`].
    pub fn new<C: Circuit<Scalar> + Send + 'static>(circuit: C) -> Self {
        Self::build(move || Ok(circuit))
    }

    /// The circuit `f` builds, on the synthesis thread.
    pub fn build<C: Circuit<Scalar> + Send + 'static>(
        f: impl FnOnce() -> Result<C> + Send + 'static,
    ) -> Self {
        PartitionCircuit {
            build: Box::new(Builder(f)),
            shape_key: None,
        }
    }

    /// The same circuit, declared to be of shape `key`: every circuit given this key must
    /// have the same R1CS (only its values may differ).
    pub fn with_shape_key(self, key: ShapeKey) -> Self {
        PartitionCircuit {
            shape_key: Some(key),
            ..self
        }
    }

    /// The circuit's shape key, if it has one.
    pub fn shape_key(&self) -> Option<&ShapeKey> {
        self.shape_key.as_ref()
    }

    /// Builds and synthesizes the circuit here, with [`synthesize`] (its shape key unused).
    pub fn synthesize(self) -> Result<Assignment> {
        self.build.synthesize()
    }

    /// Builds and synthesizes the circuit here: through `cache` when it has a shape key
    /// (recording it on the key's first use), with [`synthesize`] otherwise. The same
    /// assignment either way.
    pub fn synthesize_recorded(self, cache: &R1csCache) -> Result<Assignment> {
        self.synthesize_recorded_for(cache, None)
    }

    /// [`PartitionCircuit::synthesize_recorded`] for a circuit that proves with `srs`: a
    /// cache that keeps its recordings in files ties them to `srs`'s verifying key.
    pub fn synthesize_recorded_for(
        self,
        cache: &R1csCache,
        srs: Option<&Srs>,
    ) -> Result<Assignment> {
        let vk = srs.map(|s| move || s.vk.to_bytes());
        let vk = vk.as_ref().map(|f| f as &dyn Fn() -> Vec<u8>);
        match self.shape_key {
            Some(key) => self.build.synthesize_recorded(cache, &key, vk),
            None => self.build.synthesize(),
        }
    }

    /// Builds the circuit and synthesizes it for a start phase that computes a, b and c
    /// itself: with a shape key, only its witness, and the key's recording (the
    /// [`DeferredEvaluations`](crate::groth16::DeferredEvaluations) the start phase takes);
    /// without one, as [`PartitionCircuit::synthesize_recorded`] does.
    pub fn synthesize_deferred(
        self,
        cache: &R1csCache,
        srs: Option<&Srs>,
    ) -> Result<(Assignment, Option<Arc<RecordedCircuit>>)> {
        let vk = srs.map(|s| move || s.vk.to_bytes());
        let vk = vk.as_ref().map(|f| f as &dyn Fn() -> Vec<u8>);
        match self.shape_key {
            Some(key) => {
                let (recorded, witness) = self.build.witness_recorded(cache, &key, vk)?;
                let assignment = Assignment {
                    evaluations: Evaluations::default(),
                    witness,
                };
                Ok((assignment, Some(recorded)))
            }
            None => Ok((self.build.synthesize()?, None)),
        }
    }

    /// Builds the circuit and records its R1CS ([`r1cs::record`]).
    pub fn record(self) -> Result<(RecordedCircuit, WitnessValues)> {
        self.build.record()
    }

    /// Builds the circuit and computes its witness only ([`r1cs::witness`]).
    pub fn witness(self) -> Result<WitnessValues> {
        self.build.witness()
    }

    /// As [`PartitionCircuit::witness`], every value computed by the circuit's own gadgets
    /// ([`r1cs::witness_through_gadgets`]): what a fast witness path is checked against.
    pub fn witness_through_gadgets(self) -> Result<WitnessValues> {
        self.build.witness_through_gadgets()
    }

    /// As [`PartitionCircuit::witness`], with where its time went, by namespace up to
    /// `depth` levels ([`r1cs::witness_profile`]).
    pub fn witness_profile(self, depth: usize) -> Result<(WitnessValues, WitnessProfile)> {
        self.build.witness_profile(depth)
    }

    /// Builds the circuit and proves it with bellperson's `create_proof` (the oracle tests'
    /// reference for the same r and s).
    #[cfg(feature = "bellperson-oracle")]
    pub fn bellperson_proof(
        self,
        params: &bellperson::groth16::Parameters<blstrs::Bls12>,
        r: Scalar,
        s: Scalar,
    ) -> Result<[u8; crate::groth16::PROOF_BYTES]> {
        self.build.bellperson_proof(params, r, s)
    }
}

/// A job's partitions.
#[derive(Debug)]
pub enum JobInput {
    /// Partitions the host has synthesized: reserved in the budget at admission and queued
    /// for the devices at once.
    Ready(Vec<Assignment>),
    /// Circuits for the engine's synthesis stage. Each partition reserves its memory (from
    /// the shape the SRS gives) just before its synthesis starts.
    Synthesize(Vec<PartitionCircuit>),
}

impl JobInput {
    /// Partitions in the job.
    pub fn len(&self) -> usize {
        match self {
            JobInput::Ready(v) => v.len(),
            JobInput::Synthesize(v) => v.len(),
        }
    }

    /// Whether the job has no partition.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Everything [`Engine::submit`](super::Engine::submit) needs for one job.
#[derive(Debug)]
pub struct JobRequest {
    /// The params every partition is proved with.
    pub srs: Arc<Srs>,
    /// The partitions.
    pub input: JobInput,
    /// The (r, s) of each proof.
    pub randomness: RandomnessChoice,
    /// What the job proves (stats label; default priority).
    pub kind: JobKind,
    /// The queue class; `None` for the kind's.
    pub priority: Option<Priority>,
    /// This job's admission policy; `None` for the engine's.
    pub admission: Option<AdmissionPolicy>,
    /// Verify each proof against the verifying key and the partition's own public inputs
    /// before returning it (on by default, as filecoin-proofs does for seal): a proof that
    /// fails is never returned, its job fails instead.
    pub verify: bool,
    /// Time spent loading the params for this job, reported in its timings.
    pub params_load: Duration,
}

impl JobRequest {
    /// A request with OS randomness, the kind's priority, the engine's admission policy and
    /// verification on.
    pub fn new(srs: Arc<Srs>, input: JobInput, kind: JobKind) -> Self {
        JobRequest {
            srs,
            input,
            randomness: RandomnessChoice::Random,
            kind,
            priority: None,
            admission: None,
            verify: true,
            params_load: Duration::ZERO,
        }
    }
}

/// The shape of the partitions an SRS proves, for reserving memory before synthesis: the
/// domain bounds the constraints (the NTTs extend a, b, c to it anyway).
pub(crate) fn srs_shape(srs: &Srs) -> CircuitShape {
    CircuitShape {
        constraints: srs.domain_size(),
        inputs: srs.num_inputs(),
        aux: srs.num_aux(),
    }
}
