//! What every kind's file produces: the circuits of one proof, and which params prove them.

use super::registered::ParamsFor;
use crate::engine::{JobInput, JobKind, PartitionCircuit};
use crate::error::Result;

/// One Filecoin proof's partitions, ready for the synthesis stage.
#[derive(Debug)]
pub struct CircuitSet {
    /// What the proof is.
    pub kind: JobKind,
    /// The circuit's params.
    pub params: ParamsFor,
    /// One circuit per partition, in partition order; each is built and synthesized on a
    /// synthesis thread. Each carries the circuit id as its shape key: every partition of
    /// every proof of one circuit id has the same R1CS, recorded once per engine.
    pub partitions: Vec<PartitionCircuit>,
}

impl CircuitSet {
    /// The partitions of a proof of `params`' circuit, keyed by its circuit id.
    pub(crate) fn new(
        kind: JobKind,
        params: ParamsFor,
        partitions: Vec<PartitionCircuit>,
    ) -> Result<Self> {
        let key = params.shape_key()?;
        Ok(CircuitSet {
            kind,
            params,
            partitions: partitions
                .into_iter()
                .map(|p| p.with_shape_key(key.clone()))
                .collect(),
        })
    }

    pub(crate) fn input(self) -> JobInput {
        JobInput::Synthesize(self.partitions)
    }
}
