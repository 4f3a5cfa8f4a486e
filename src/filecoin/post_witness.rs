//! WinningPoSt and WindowPoSt partitions whose witness skips the Poseidon gadgets.
//!
//! A PoSt partition's witness is its sectors' TreeR inclusion proofs: per challenge a path
//! of Poseidon hashes (at 32GiB ten levels, all of arity 8, for each of a WindowPoSt
//! partition's 2349 sectors × 10 challenges), which the gadget builds as linear
//! combinations a witness does not need. [`PostPartition`] is storage-proofs-post's
//! `FallbackPoStCircuit` where a system records or proves; on a witness generator it walks
//! the same circuit (`FallbackPoStCircuit::synthesize`, `Sector::synthesize`, pinned at
//! storage-proofs-post 19.1 by Cargo.lock) with the hashes through [`crate::r1cs::poseidon`]
//! and the paths through [`super::poseidon_path`]. Its sectors go in parallel, each part in
//! a system of its own appended in order (as the circuit does on an extensible system, but in
//! rounds, so the parts never hold the whole witness a second time), so the values are the
//! circuit's, in its order. `tests/r1cs_recorded.rs` checks the walk
//! against the circuit run through the gadgets, value for value, on every 2KiB PoSt circuit.

use std::any::TypeId;

use bellpepper_core::num::AllocatedNum;
use bellpepper_core::{Circuit, ConstraintSystem, SynthesisError};
use blstrs::Scalar as Fr;
use ff::Field;
use filecoin_hashers::poseidon::PoseidonHasher;
use filecoin_hashers::{HashFunction, Hasher, POSEIDON_CONSTANTS_2};
use filecoin_proofs::types::MerkleTreeTrait;
use rayon::prelude::*;
use storage_proofs_core::gadgets::constraint;
use storage_proofs_post::fallback::{self, FallbackPoStCircuit};

use super::poseidon_path::{inclusion, PathOptions};
use crate::error::{Error, Result};
use crate::r1cs::poseidon::poseidon_hash;

type Domain<Tree> = <<Tree as MerkleTreeTrait>::Hasher as Hasher>::Domain;

/// One PoSt partition: the circuit, and the values its walk takes.
pub(super) struct PostPartition<Tree: 'static + MerkleTreeTrait> {
    /// For systems that record or prove; without it (random values) every system walks.
    circuit: Option<FallbackPoStCircuit<Tree>>,
    sectors: Vec<SectorValues>,
}

/// A `Sector`'s values.
struct SectorValues {
    comm_r: Fr,
    comm_c: Fr,
    comm_r_last: Fr,
    /// Each challenge's leaf and its path in TreeR.
    challenges: Vec<(Fr, PathOptions)>,
}

impl<Tree: 'static + MerkleTreeTrait> PostPartition<Tree> {
    /// `circuit` is `FallbackPoStCompound::circuit` of partition `k`'s vanilla `proof` and
    /// `public`; the values are read the way it reads them (the partition's public sectors,
    /// the last repeated where the partition has fewer than its vanilla proofs).
    pub(super) fn new(
        circuit: FallbackPoStCircuit<Tree>,
        public: &fallback::PublicInputs<Domain<Tree>>,
        proof: &fallback::Proof<Tree::Proof>,
        sectors_per_partition: usize,
        k: usize,
    ) -> Result<Self> {
        let sectors = public
            .sectors
            .chunks(sectors_per_partition.max(1))
            .nth(k)
            .ok_or_else(|| Error::invalid_input(format!("no public sectors for partition {k}")))?;
        let values = proof
            .sectors
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let public = &sectors[i.min(sectors.len() - 1)];
                SectorValues {
                    comm_r: public.comm_r.into(),
                    comm_c: p.comm_c.into(),
                    comm_r_last: p.comm_r_last.into(),
                    challenges: p
                        .leafs()
                        .into_iter()
                        .map(Into::into)
                        .zip(p.as_options())
                        .collect(),
                }
            })
            .collect();
        Ok(PostPartition {
            circuit: Some(circuit),
            sectors: values,
        })
    }

    #[cfg(feature = "test-fixtures")]
    /// A partition of `sectors` sectors of `challenges` challenges each over trees of `nodes`
    /// leaves, random values from `rng`: the circuit's work, not a provable statement.
    pub(super) fn random(
        sectors: usize,
        challenges: usize,
        nodes: usize,
        rng: &mut dyn rand_core::RngCore,
    ) -> Self {
        use super::random::{random_fr, random_path};
        let sectors = (0..sectors)
            .map(|_| SectorValues {
                comm_r: random_fr(rng),
                comm_c: random_fr(rng),
                comm_r_last: random_fr(rng),
                challenges: (0..challenges)
                    .map(|_| (random_fr(rng), random_path::<Tree>(nodes, rng)))
                    .collect(),
            })
            .collect();
        PostPartition {
            circuit: None,
            sectors,
        }
    }
}

impl<Tree: 'static + MerkleTreeTrait> Circuit<Fr> for PostPartition<Tree> {
    fn synthesize<CS: ConstraintSystem<Fr>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        match self.circuit {
            Some(circuit) if !cs.is_witness_generator() => circuit.synthesize(cs),
            _ => walk::<Tree, _>(&self.sectors, cs),
        }
    }
}

/// Sectors a parallel part takes: a 32GiB sector's values are ~1.7 MB and ~12 ms of one
/// core, so a round of parts (one per thread) holds little apart from the whole witness and
/// costs far more than its fork and join.
const SECTORS_PER_PART: usize = 8;

/// `FallbackPoStCircuit::synthesize`: its sectors in order; on an extensible witness
/// generator in parallel parts appended in order (its values are the sequential run's).
fn walk<Tree: 'static + MerkleTreeTrait, CS: ConstraintSystem<Fr>>(
    sectors: &[SectorValues],
    cs: &mut CS,
) -> Result<(), SynthesisError> {
    // In parts only where a part's own system (`CS::new`) takes the paths this one takes: a
    // run through the gadgets (the check of the walk) must not reach a fast path.
    let parts_alike =
        CS::is_extensible() && CS::new().is_witness_generator() == cs.is_witness_generator();
    if !parts_alike || sectors.len() < 2 {
        let cs = &mut cs.namespace(|| "outer namespace");
        for s in sectors {
            sector::<Tree, _>(s, &mut cs.namespace(|| "sector"))?;
        }
        return Ok(());
    }
    // In rounds of one part per thread, each appended before the next round starts: the
    // parts then hold a round's values apart from the whole, not the whole witness twice.
    let threads = rayon::current_num_threads().max(1);
    for round in sectors.chunks(threads * SECTORS_PER_PART) {
        let per_part = round.len().div_ceil(threads);
        let parts = round
            .par_chunks(per_part)
            .map(|group| {
                let mut part = CS::new();
                part.alloc_input(|| "ONE", || Ok(Fr::ONE))?;
                for s in group {
                    sector::<Tree, _>(s, &mut part)?;
                }
                Ok(part)
            })
            .collect::<Result<Vec<_>, SynthesisError>>()?;
        for part in &parts {
            cs.extend(part);
        }
    }
    Ok(())
}

/// `Sector::synthesize`: comm_r = H(comm_c, comm_r_last), then each challenge's leaf in
/// TreeR (root comm_r_last).
fn sector<Tree: 'static + MerkleTreeTrait, CS: ConstraintSystem<Fr>>(
    s: &SectorValues,
    cs: &mut CS,
) -> Result<(), SynthesisError> {
    let comm_r_last = AllocatedNum::alloc(cs.namespace(|| "comm_r_last"), || Ok(s.comm_r_last))?;
    let comm_c = AllocatedNum::alloc(cs.namespace(|| "comm_c"), || Ok(s.comm_c))?;
    let comm_r = AllocatedNum::alloc(cs.namespace(|| "comm_r"), || Ok(s.comm_r))?;
    comm_r.inputize(cs.namespace(|| "comm_r_input"))?;
    let hash = if TypeId::of::<Tree::Hasher>() == TypeId::of::<PoseidonHasher>() {
        // filecoin-hashers' `PoseidonFunction::hash2_circuit`.
        poseidon_hash(
            cs.namespace(|| "H_comm_c_comm_r_last"),
            vec![comm_c, comm_r_last.clone()],
            &*POSEIDON_CONSTANTS_2,
        )?
    } else {
        <Tree::Hasher as Hasher>::Function::hash2_circuit(
            cs.namespace(|| "H_comm_c_comm_r_last"),
            &comm_c,
            &comm_r_last,
        )?
    };
    constraint::equal(
        cs,
        || "enforce_comm_c_comm_r_last_hash_comm_r",
        &comm_r,
        &hash,
    );
    for (leaf, path) in &s.challenges {
        let mut cs = cs.namespace(|| "challenge_inclusion");
        // `PoRCircuit` allocates the leaf ("value") before its path.
        let leaf = AllocatedNum::alloc(cs.namespace(|| "value"), || Ok(*leaf))?;
        inclusion::<Tree, _>(&mut cs, path.clone(), &comm_r_last, &leaf)?;
    }
    Ok(())
}
