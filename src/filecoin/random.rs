//! Random values in a Filecoin circuit's shape (test-fixtures only): the synthesis bench's
//! stand-ins for partitions of sector sizes no test seals (32GiB). A circuit's R1CS, and so
//! its synthesis work, depends on its sector size and not on its values;
//! `tests/r1cs_recorded.rs` checks at 2KiB that each kind's random-valued partition records
//! the real circuit's R1CS. Such a partition is no provable statement.
//!
//! Each kind's file builds its own partition from these (`porep_random_partition`,
//! `snap_random_partition`, `post_random_partition`).

use blstrs::Scalar as Fr;
use filecoin_proofs::types::MerkleTreeTrait;
use rand_core::RngCore;

use super::porep_witness::PathOptions;

pub(super) fn random_fr(rng: &mut dyn RngCore) -> Fr {
    <Fr as ff::Field>::random(rng)
}

/// The seeded generator every random partition draws from.
pub(super) fn seeded(seed: u64) -> rand_chacha::ChaCha8Rng {
    rand_core::SeedableRng::seed_from_u64(seed)
}

/// A path in a tree of `Tree`'s shape over `nodes` leaves: `arity - 1` siblings and an index
/// per level, the base levels then the sub and top tree's.
pub(super) fn random_path<Tree: 'static + MerkleTreeTrait>(
    nodes: usize,
    rng: &mut dyn RngCore,
) -> PathOptions {
    use storage_proofs_core::merkle::base_path_length;
    use typenum::Unsigned;
    let levels = base_path_length::<Tree::Arity, Tree::SubTreeArity, Tree::TopTreeArity>(nodes);
    let mut arities = vec![Tree::Arity::to_usize(); levels];
    arities.extend(
        [
            Tree::SubTreeArity::to_usize(),
            Tree::TopTreeArity::to_usize(),
        ]
        .into_iter()
        .filter(|&a| a > 0),
    );
    arities
        .into_iter()
        .map(|a| {
            let index = rng.next_u32() as usize % a;
            (
                (0..a - 1).map(|_| Some(random_fr(rng))).collect(),
                Some(index),
            )
        })
        .collect()
}
