//! SHA-256's witness without its gadget's linear combinations: the values bellperson's
//! `gadgets::sha256::sha256` allocates, in the order it allocates them, for a witness
//! generator (a constraint system that ignores `enforce`).
//!
//! Why: in a PoRep partition's witness run the gadget is over 90% of the time
//! (`notes/synthesis.md`), and nearly all of that is linear combinations built outside
//! `enforce`: each 32-bit addition sums ~130 bit terms, and `MultiEq` clones and rescales
//! the accumulated sum of up to seven additions before it enforces it. A witness needs none
//! of it. Here the additions are integer sums whose result bits are allocated directly, and
//! the bitwise steps call bellpepper's own `Boolean` operations (`xor`, `sha256_ch`,
//! `sha256_maj`), so which bits are allocated, constant or negated is the gadget's by
//! construction. The structure (message schedule, deferred additions, the final sums)
//! follows the gadget step for step; `tests` compare every allocated value and the output
//! against the gadget on inputs mixing constant, allocated and negated bits.
//!
//! Only for witness generators: nothing here enforces a constraint, so on a constraint
//! system that records or proves, the circuit would be under-constrained. [`sha256`]
//! refuses such a system.

use bellpepper_core::boolean::{AllocatedBit, Boolean};
use bellpepper_core::{ConstraintSystem, SynthesisError};
use blstrs::Scalar;

const ROUND_CONSTANTS: [u32; 64] = [
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
];

const IV: [u32; 8] = [
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
];

/// SHA-256 of `input` (big-endian bits, a whole number of bytes), as the gadget computes it:
/// the same aux values appended to `cs` in the same order, and the same 256 output bits
/// (big-endian, as the gadget returns them).
pub fn sha256<CS: ConstraintSystem<Scalar>>(
    cs: &mut CS,
    input: &[Boolean],
) -> Result<Vec<Boolean>, SynthesisError> {
    if !cs.is_witness_generator() {
        // A recording or proving system needs the gadget's constraints.
        return Err(SynthesisError::Unsatisfiable);
    }
    assert!(input.len() % 8 == 0, "SHA-256 input of whole bytes");
    let mut padded = input.to_vec();
    let bit_len = padded.len() as u64;
    padded.push(Boolean::constant(true));
    while (padded.len() + 64) % 512 != 0 {
        padded.push(Boolean::constant(false));
    }
    padded.extend(
        (0..64)
            .rev()
            .map(|i| Boolean::constant((bit_len >> i) & 1 == 1)),
    );
    let mut state: Vec<Word> = IV.iter().map(|&v| Word::constant(v)).collect();
    for block in padded.chunks(512) {
        state = compress(cs, block, &state)?;
    }
    Ok(state.into_iter().flat_map(Word::into_bits_be).collect())
}

/// A 32-bit word as the gadget's `UInt32` holds it: bits least significant first. The value
/// is always known (a witness run has every value). The bits are held inline: a compression
/// makes some 600 words, and a heap allocation each cost more than their bits' operations.
#[derive(Clone)]
struct Word {
    bits: [Boolean; 32],
    value: u32,
}

/// 32 bits from `f`, stopping at its first error.
fn try_bits(
    mut f: impl FnMut(usize) -> Result<Boolean, SynthesisError>,
) -> Result<[Boolean; 32], SynthesisError> {
    let mut bits: [Boolean; 32] = std::array::from_fn(|_| Boolean::Constant(false));
    for (i, b) in bits.iter_mut().enumerate() {
        *b = f(i)?;
    }
    Ok(bits)
}

impl Word {
    fn constant(value: u32) -> Self {
        Word {
            bits: std::array::from_fn(|i| Boolean::constant((value >> i) & 1 == 1)),
            value,
        }
    }

    fn from_bits_be(bits: &[Boolean]) -> Result<Self, SynthesisError> {
        debug_assert_eq!(bits.len(), 32);
        let mut value = 0u32;
        for b in bits {
            let bit = b.get_value().ok_or(SynthesisError::AssignmentMissing)?;
            value = (value << 1) | u32::from(bit);
        }
        Ok(Word {
            bits: std::array::from_fn(|i| bits[31 - i].clone()),
            value,
        })
    }

    fn into_bits_be(self) -> impl Iterator<Item = Boolean> {
        self.bits.into_iter().rev()
    }

    fn rotr(&self, by: usize) -> Self {
        Word {
            bits: std::array::from_fn(|i| self.bits[(i + by) % 32].clone()),
            value: self.value.rotate_right(by as u32),
        }
    }

    fn shr(&self, by: usize) -> Self {
        Word {
            bits: std::array::from_fn(|i| {
                self.bits
                    .get(i + by)
                    .cloned()
                    .unwrap_or(Boolean::constant(false))
            }),
            value: self.value >> by,
        }
    }

    fn is_constant(&self) -> bool {
        self.bits.iter().all(Boolean::is_constant)
    }

    fn xor<CS: ConstraintSystem<Scalar>>(
        &self,
        cs: &mut CS,
        other: &Word,
    ) -> Result<Word, SynthesisError> {
        let bits = try_bits(|i| Boolean::xor(&mut *cs, &self.bits[i], &other.bits[i]))?;
        Ok(Word {
            bits,
            value: self.value ^ other.value,
        })
    }

    /// `ch` (`(a and b) xor (not a and c)`) bit by bit, as the gadget's `sha256_ch`.
    fn ch<CS: ConstraintSystem<Scalar>>(
        cs: &mut CS,
        a: &Word,
        b: &Word,
        c: &Word,
    ) -> Result<Word, SynthesisError> {
        let value = (a.value & b.value) ^ (!a.value & c.value);
        Word::bitwise3(cs, [a, b, c], value, |cs, x, y, z| {
            Boolean::sha256_ch(cs, x, y, z)
        })
    }

    /// `maj` (the majority of a, b, c) bit by bit, as the gadget's `sha256_maj`.
    fn maj<CS: ConstraintSystem<Scalar>>(
        cs: &mut CS,
        a: &Word,
        b: &Word,
        c: &Word,
    ) -> Result<Word, SynthesisError> {
        let value = (a.value & b.value) ^ (a.value & c.value) ^ (b.value & c.value);
        Word::bitwise3(cs, [a, b, c], value, |cs, x, y, z| {
            Boolean::sha256_maj(cs, x, y, z)
        })
    }

    /// Applies bellpepper's three-input `Boolean` operation `op` at each bit position.
    fn bitwise3<CS: ConstraintSystem<Scalar>>(
        cs: &mut CS,
        [a, b, c]: [&Word; 3],
        value: u32,
        op: impl Fn(&mut CS, &Boolean, &Boolean, &Boolean) -> Result<Boolean, SynthesisError>,
    ) -> Result<Word, SynthesisError> {
        let bits = try_bits(|i| op(&mut *cs, &a.bits[i], &b.bits[i], &c.bits[i]))?;
        Ok(Word { bits, value })
    }

    /// The sum modulo 2^32. Like the gadget: a constant when every operand bit is constant;
    /// otherwise every bit of the full sum is allocated, as many as the largest possible sum
    /// of this many operands has (carries included), and the low 32 are the result.
    fn add_many<CS: ConstraintSystem<Scalar>>(
        cs: &mut CS,
        operands: &[Word],
    ) -> Result<Word, SynthesisError> {
        debug_assert!((2..=10).contains(&operands.len()));
        let sum: u64 = operands.iter().map(|w| u64::from(w.value)).sum();
        if operands.iter().all(Word::is_constant) {
            return Ok(Word::constant(sum as u32));
        }
        let max = operands.len() as u64 * u64::from(u32::MAX);
        let width = 64 - max.leading_zeros() as usize;
        let bits = try_bits(|i| {
            AllocatedBit::alloc(&mut *cs, Some((sum >> i) & 1 == 1)).map(Boolean::from)
        })?;
        // The carries above the low 32 bits are allocated too, then dropped.
        for i in 32..width {
            AllocatedBit::alloc(&mut *cs, Some((sum >> i) & 1 == 1))?;
        }
        Ok(Word {
            bits,
            value: sum as u32,
        })
    }
}

/// A working variable whose addition the gadget defers to the round that reads it (so one
/// allocation covers temp1 + temp2, or temp1 + d).
// Kept by value in the gadget's rounds: boxing a word would allocate on the hot path.
#[allow(clippy::large_enum_variant)]
enum Pending {
    Sum(Vec<Word>),
    Word(Word),
}

impl Pending {
    fn resolve<CS: ConstraintSystem<Scalar>>(
        self,
        cs: &mut CS,
        more: &[Word],
    ) -> Result<Word, SynthesisError> {
        match self {
            Pending::Word(w) => Ok(w),
            Pending::Sum(mut v) => {
                v.extend_from_slice(more);
                Word::add_many(cs, &v)
            }
        }
    }
}

/// One compression of a 512-bit block into `state`, in the gadget's order: the message
/// schedule, the 64 rounds, then the eight sums into the state.
fn compress<CS: ConstraintSystem<Scalar>>(
    cs: &mut CS,
    block: &[Boolean],
    state: &[Word],
) -> Result<Vec<Word>, SynthesisError> {
    debug_assert_eq!(block.len(), 512);
    let mut w = block
        .chunks(32)
        .map(Word::from_bits_be)
        .collect::<Result<Vec<_>, _>>()?;
    for i in 16..64 {
        let s0 = w[i - 15].rotr(7).xor(cs, &w[i - 15].rotr(18))?;
        let s0 = s0.xor(cs, &w[i - 15].shr(3))?;
        let s1 = w[i - 2].rotr(17).xor(cs, &w[i - 2].rotr(19))?;
        let s1 = s1.xor(cs, &w[i - 2].shr(10))?;
        let next = Word::add_many(cs, &[w[i - 16].clone(), s0, w[i - 7].clone(), s1])?;
        w.push(next);
    }

    let mut a = Pending::Word(state[0].clone());
    let mut b = state[1].clone();
    let mut c = state[2].clone();
    let mut d = state[3].clone();
    let mut e = Pending::Word(state[4].clone());
    let mut f = state[5].clone();
    let mut g = state[6].clone();
    let mut h = state[7].clone();
    for (i, w_i) in w.iter().enumerate() {
        let new_e = e.resolve(cs, &[])?;
        let s1 = new_e.rotr(6).xor(cs, &new_e.rotr(11))?;
        let s1 = s1.xor(cs, &new_e.rotr(25))?;
        let ch = Word::ch(cs, &new_e, &f, &g)?;
        let temp1 = [h, s1, ch, Word::constant(ROUND_CONSTANTS[i]), w_i.clone()];

        let new_a = a.resolve(cs, &[])?;
        let s0 = new_a.rotr(2).xor(cs, &new_a.rotr(13))?;
        let s0 = s0.xor(cs, &new_a.rotr(22))?;
        let maj = Word::maj(cs, &new_a, &b, &c)?;

        h = g;
        g = f;
        f = new_e;
        e = Pending::Sum(temp1.iter().cloned().chain([d]).collect());
        d = c;
        c = b;
        b = new_a;
        a = Pending::Sum(temp1.into_iter().chain([s0, maj]).collect());
    }

    Ok(vec![
        a.resolve(cs, &[state[0].clone()])?,
        Word::add_many(cs, &[state[1].clone(), b])?,
        Word::add_many(cs, &[state[2].clone(), c])?,
        Word::add_many(cs, &[state[3].clone(), d])?,
        e.resolve(cs, &[state[4].clone()])?,
        Word::add_many(cs, &[state[5].clone(), f])?,
        Word::add_many(cs, &[state[6].clone(), g])?,
        Word::add_many(cs, &[state[7].clone(), h])?,
    ])
}

/// bellperson's `multipack::pack_bits` for a witness generator: one aux, the first
/// `Scalar::CAPACITY` bits (least significant first) packed.
pub fn pack_bits<CS: ConstraintSystem<Scalar>>(
    cs: &mut CS,
    bits: &[Boolean],
) -> Result<bellpepper_core::num::AllocatedNum<Scalar>, SynthesisError> {
    use ff::PrimeField;
    let value = pack(&bits[..bits.len().min(Scalar::CAPACITY as usize)])?;
    bellpepper_core::num::AllocatedNum::alloc(cs, || Ok(value))
}

/// bellperson's `multipack::pack_into_inputs` for a witness generator: one input per
/// `Scalar::CAPACITY` bits.
pub fn pack_into_inputs<CS: ConstraintSystem<Scalar>>(
    cs: &mut CS,
    bits: &[Boolean],
) -> Result<(), SynthesisError> {
    use ff::PrimeField;
    for chunk in bits.chunks(Scalar::CAPACITY as usize) {
        let value = pack(chunk)?;
        cs.alloc_input(|| "packed bits", || Ok(value))?;
    }
    Ok(())
}

/// Σ bit_i · 2^i.
fn pack(bits: &[Boolean]) -> Result<Scalar, SynthesisError> {
    use ff::Field;
    let (mut acc, mut coeff) = (Scalar::ZERO, Scalar::ONE);
    for b in bits {
        if b.get_value().ok_or(SynthesisError::AssignmentMissing)? {
            acc += coeff;
        }
        coeff = coeff.double();
    }
    Ok(acc)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::r1cs::WitnessCs;
    use bellpepper_core::num::AllocatedNum;
    use ff::Field;
    use rand_core::{RngCore, SeedableRng};

    fn input_bits(cs: &mut WitnessCs, rng: &mut impl RngCore, bytes: usize) -> Vec<Boolean> {
        // Every kind of bit the gadget distinguishes: constants of both values, allocated
        // bits, and negations of allocated bits.
        (0..bytes * 8)
            .map(|_| {
                let r = rng.next_u32();
                let v = r & 1 == 1;
                match (r >> 1) % 4 {
                    0 => Boolean::constant(v),
                    1 => Boolean::from(AllocatedBit::alloc(&mut *cs, Some(v)).unwrap()),
                    _ => Boolean::from(AllocatedBit::alloc(&mut *cs, Some(v)).unwrap()).not(),
                }
            })
            .collect()
    }

    #[test]
    fn equals_the_gadget_value_for_value() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        // Lengths across one, two and several blocks, padding edges included (55/56 bytes).
        for bytes in [0, 1, 32, 55, 56, 64, 100, 1248] {
            let seed = rng.next_u64();
            let run = |ours: bool| {
                let mut cs = WitnessCs::new();
                cs.alloc_input(|| "one", || Ok(Scalar::ONE)).unwrap();
                let mut r = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
                let input = input_bits(&mut cs, &mut r, bytes);
                let out = if ours {
                    sha256(&mut cs, &input).unwrap()
                } else {
                    bellperson::gadgets::sha256::sha256(&mut cs, &input).unwrap()
                };
                let out: Vec<Option<bool>> = out.iter().map(Boolean::get_value).collect();
                (cs.aux_slice().to_vec(), out)
            };
            let (ours, out) = run(true);
            let (theirs, want) = run(false);
            assert_eq!(out, want, "{bytes} bytes: digest bits");
            assert_eq!(ours.len(), theirs.len(), "{bytes} bytes: aux count");
            if let Some(i) = (0..ours.len()).find(|&i| ours[i] != theirs[i]) {
                panic!("{bytes} bytes: aux {i} differs");
            }
        }
    }

    #[test]
    fn the_digest_is_sha256() {
        use sha2::Digest;
        let msg = b"cuzk: the witness without the gadget";
        let bits: Vec<Boolean> = msg
            .iter()
            .flat_map(|&byte| {
                (0..8)
                    .rev()
                    .map(move |i| Boolean::constant((byte >> i) & 1 == 1))
            })
            .collect();
        let mut cs = WitnessCs::new();
        // All-constant input: every addition folds to a constant, nothing is allocated.
        let out = sha256(&mut cs, &bits).unwrap();
        assert!(cs.aux_slice().is_empty());
        let digest: Vec<u8> = out
            .chunks(8)
            .map(|b| {
                b.iter()
                    .fold(0u8, |acc, x| (acc << 1) | u8::from(x.get_value().unwrap()))
            })
            .collect();
        assert_eq!(digest, sha2::Sha256::digest(msg).to_vec());
    }

    #[test]
    fn packing_equals_bellperson() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
        for n in [1usize, 254, 255, 300, 600] {
            let seed = rng.next_u64();
            let run = |ours: bool| {
                let mut cs = WitnessCs::new();
                cs.alloc_input(|| "one", || Ok(Scalar::ONE)).unwrap();
                let mut r = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
                let bits = input_bits(&mut cs, &mut r, n.div_ceil(8));
                let bits = &bits[..n];
                let num: AllocatedNum<Scalar> = if ours {
                    pack_into_inputs(&mut cs, bits).unwrap();
                    pack_bits(&mut cs, bits).unwrap()
                } else {
                    bellperson::gadgets::multipack::pack_into_inputs(&mut cs, bits).unwrap();
                    bellperson::gadgets::multipack::pack_bits(&mut cs, bits).unwrap()
                };
                (
                    cs.inputs_slice().to_vec(),
                    cs.aux_slice().to_vec(),
                    num.get_value(),
                )
            };
            assert_eq!(run(true), run(false), "{n} bits");
        }
    }

    #[test]
    fn a_recording_system_is_refused() {
        let mut cs = bellpepper_core::test_cs::TestConstraintSystem::<Scalar>::new();
        let input = vec![Boolean::constant(false); 8];
        assert!(sha256(&mut cs, &input).is_err());
    }
}
