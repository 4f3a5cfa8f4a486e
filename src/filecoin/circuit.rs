//! What every kind's file produces: the circuits of one proof, and which params prove them.

use super::registered::ParamsFor;
use crate::engine::{JobInput, JobKind, PartitionCircuit};

/// One Filecoin proof's partitions, ready for the synthesis stage.
#[derive(Debug)]
pub struct CircuitSet {
    /// What the proof is.
    pub kind: JobKind,
    /// The circuit's params.
    pub params: ParamsFor,
    /// One circuit per partition, in partition order; each is built and synthesized on a
    /// synthesis thread.
    pub partitions: Vec<PartitionCircuit>,
}

impl CircuitSet {
    pub(crate) fn input(self) -> JobInput {
        JobInput::Synthesize(self.partitions)
    }
}
