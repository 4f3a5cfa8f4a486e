//! Number-theoretic transforms over Fr on the CPU (rayon), and the H-polynomial pipeline.
//!
//! Radix-2, decimation in time after a bit-reversal permutation, natural order in and out.
//! Stages whose butterflies fit in a cache-sized block run block by block (each block on
//! one thread, every small stage done before the block leaves the cache); the larger stages
//! split each butterfly group into segments across threads. Twiddles come from one table of
//! ω^j per domain, so a butterfly costs one multiplication.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use blstrs::Scalar;
use ff::{Field, PrimeField};
use rayon::prelude::*;

use crate::error::{Error, Result};

/// Elements per cache block: 2^12 scalars is 128 KiB, an L2's share.
const BLOCK_LOG: u32 = 12;
/// Fewest elements one parallel task handles in the element-wise passes.
const MIN_CHUNK: usize = 1 << 12;

/// A radix-2 evaluation domain of size `2^log_n`, with its twiddle tables.
#[derive(Debug)]
pub struct Domain {
    log_n: u32,
    n: usize,
    n_inv: Scalar,
    /// ω^j for j in 0..n/2 (ω of order n).
    twiddles: Vec<Scalar>,
    /// ω^-j for j in 0..n/2.
    inv_twiddles: Vec<Scalar>,
}

impl Domain {
    /// The domain of size `2^log_n` (1 ≤ log_n ≤ 32).
    pub fn new(log_n: u32) -> Result<Self> {
        if log_n > Scalar::S {
            return Err(Error::invalid_argument(format!(
                "NTT size 2^{log_n} exceeds the field's largest 2^{}",
                Scalar::S
            )));
        }
        let n = 1usize << log_n;
        let omega = Scalar::ROOT_OF_UNITY.pow_vartime([1u64 << (Scalar::S - log_n)]);
        let omega_inv = omega.invert().expect("a root of unity is invertible");
        Ok(Domain {
            log_n,
            n,
            n_inv: Scalar::from(n as u64).invert().expect("n < r"),
            twiddles: powers(omega, n / 2),
            inv_twiddles: powers(omega_inv, n / 2),
        })
    }

    /// A shared domain of size `2^log_n`, built once per process (provers of one circuit
    /// shape reuse its tables).
    pub fn cached(log_n: u32) -> Result<Arc<Domain>> {
        static CACHE: OnceLock<Mutex<HashMap<u32, Arc<Domain>>>> = OnceLock::new();
        let cache = CACHE.get_or_init(Default::default);
        if let Some(d) = cache.lock().unwrap_or_else(|e| e.into_inner()).get(&log_n) {
            return Ok(d.clone());
        }
        // Built outside the lock: a large table takes a while and other sizes must not wait.
        let d = Arc::new(Domain::new(log_n)?);
        let mut cache = cache.lock().unwrap_or_else(|e| e.into_inner());
        Ok(cache.entry(log_n).or_insert(d).clone())
    }

    /// log2 of the size.
    pub fn log_size(&self) -> u32 {
        self.log_n
    }

    /// The size.
    pub fn size(&self) -> usize {
        self.n
    }

    fn check_len(&self, a: &[Scalar]) {
        assert_eq!(
            a.len(),
            self.n,
            "NTT input length must equal the domain size"
        );
    }

    /// Coefficients → evaluations at ω^i.
    pub fn ntt(&self, a: &mut [Scalar]) {
        self.check_len(a);
        transform(a, self.log_n, &self.twiddles);
    }

    /// Evaluations at ω^i → coefficients.
    pub fn intt(&self, a: &mut [Scalar]) {
        self.check_len(a);
        transform(a, self.log_n, &self.inv_twiddles);
        scale_by_powers(a, self.n_inv, Scalar::ONE);
    }

    /// Coefficients → evaluations at g·ω^i, g the field's multiplicative generator.
    pub fn coset_ntt(&self, a: &mut [Scalar]) {
        self.check_len(a);
        scale_by_powers(a, Scalar::ONE, Scalar::MULTIPLICATIVE_GENERATOR);
        transform(a, self.log_n, &self.twiddles);
    }

    /// Evaluations at g·ω^i → coefficients.
    pub fn icoset_ntt(&self, a: &mut [Scalar]) {
        self.icoset_ntt_scaled(a, Scalar::ONE);
    }

    /// `icoset_ntt` with every output multiplied by `factor` (fused into the same pass).
    pub fn icoset_ntt_scaled(&self, a: &mut [Scalar], factor: Scalar) {
        self.check_len(a);
        transform(a, self.log_n, &self.inv_twiddles);
        let g_inv = Scalar::MULTIPLICATIVE_GENERATOR.invert().expect("g ≠ 0");
        scale_by_powers(a, self.n_inv * factor, g_inv);
    }

    /// Evaluations at ω^i → evaluations at g·ω^i: `coset_ntt(intt(a))` with the 1/n and
    /// the g^i scaling fused into one pass.
    pub fn intt_then_coset_ntt(&self, a: &mut [Scalar]) {
        self.check_len(a);
        transform(a, self.log_n, &self.inv_twiddles);
        scale_by_powers(a, self.n_inv, Scalar::MULTIPLICATIVE_GENERATOR);
        transform(a, self.log_n, &self.twiddles);
    }

    /// 1 / Z(g·ω^i) = 1 / (g^n − 1): the vanishing polynomial is constant on the coset.
    pub fn z_inv_on_coset(&self) -> Scalar {
        (Scalar::MULTIPLICATIVE_GENERATOR.pow_vartime([self.n as u64]) - Scalar::ONE)
            .invert()
            .expect("g is not an n-th root of unity")
    }
}

/// x^0 … x^(len−1), built in parallel segments.
fn powers(x: Scalar, len: usize) -> Vec<Scalar> {
    let mut out = vec![Scalar::ZERO; len];
    out.par_chunks_mut(MIN_CHUNK)
        .enumerate()
        .for_each(|(c, chunk)| {
            let mut p = x.pow_vartime([(c * MIN_CHUNK) as u64]);
            for v in chunk {
                *v = p;
                p *= x;
            }
        });
    out
}

/// a[i] *= c · x^i.
fn scale_by_powers(a: &mut [Scalar], c: Scalar, x: Scalar) {
    a.par_chunks_mut(MIN_CHUNK)
        .enumerate()
        .for_each(|(k, chunk)| {
            let mut p = c * x.pow_vartime([(k * MIN_CHUNK) as u64]);
            for v in chunk {
                *v *= p;
                p *= x;
            }
        });
}

/// a[i] = (a[i] · x^i − minus[i]) · c.
fn scale_by_powers_minus(a: &mut [Scalar], minus: &[Scalar], c: Scalar, x: Scalar) {
    a.par_chunks_mut(MIN_CHUNK)
        .zip(minus.par_chunks(MIN_CHUNK))
        .enumerate()
        .for_each(|(k, (chunk, minus))| {
            let mut p = x.pow_vartime([(k * MIN_CHUNK) as u64]);
            for (v, m) in chunk.iter_mut().zip(minus) {
                *v = (*v * p - m) * c;
                p *= x;
            }
        });
}

fn bit_reverse(a: &mut [Scalar], log_n: u32) {
    if log_n == 0 {
        return;
    }
    struct Shared(*mut Scalar);
    // SAFETY: each pair (i, rev(i)) with i < rev(i) is swapped by exactly one task (the one
    // owning i); no element is touched by two tasks.
    unsafe impl Sync for Shared {}
    let base = Shared(a.as_mut_ptr());
    let shift = usize::BITS - log_n;
    let base = &base;
    (0..a.len())
        .into_par_iter()
        .with_min_len(MIN_CHUNK)
        .for_each(move |i| {
            let j = i.reverse_bits() >> shift;
            if i < j {
                unsafe { std::ptr::swap(base.0.add(i), base.0.add(j)) };
            }
        });
}

#[inline(always)]
fn butterfly(lo: &mut Scalar, hi: &mut Scalar, w: &Scalar) {
    let t = *hi * w;
    *hi = *lo - t;
    *lo += t;
}

/// In-place DIT transform with the twiddle table `tw` (ω^j or ω^-j, j < n/2).
fn transform(a: &mut [Scalar], log_n: u32, tw: &[Scalar]) {
    bit_reverse(a, log_n);
    let n = a.len();
    let block = 1usize << BLOCK_LOG.min(log_n);
    // Stages with groups of at most `block` elements: finish them block by block.
    a.par_chunks_mut(block).for_each(|blk| {
        let mut m = 1;
        while m < block {
            let stride = n / (2 * m);
            for group in blk.chunks_mut(2 * m) {
                let (lo, hi) = group.split_at_mut(m);
                for (j, (l, h)) in lo.iter_mut().zip(hi.iter_mut()).enumerate() {
                    butterfly(l, h, &tw[j * stride]);
                }
            }
            m *= 2;
        }
    });
    // Larger stages: every group split into segments that run in parallel.
    let mut m = block;
    while m < n {
        let stride = n / (2 * m);
        let seg = MIN_CHUNK.min(m);
        a.par_chunks_mut(2 * m).for_each(|group| {
            let (lo, hi) = group.split_at_mut(m);
            lo.par_chunks_mut(seg)
                .zip(hi.par_chunks_mut(seg))
                .enumerate()
                .for_each(|(s, (l, h))| {
                    for (j, (l, h)) in l.iter_mut().zip(h.iter_mut()).enumerate() {
                        butterfly(l, h, &tw[(s * seg + j) * stride]);
                    }
                });
        });
        m *= 2;
    }
}

/// The coefficients of H = (A·B − C) / Z from the evaluations of A, B and C over a domain of
/// `a.len()` (a power of two); returns `n − 1` coefficients, as the `h` section expects.
/// Consumes `b` and `c` as soon as they are folded in.
///
/// Six transforms, not the textbook's seven: the inverse coset NTT is linear and undoes a
/// coset NTT, so iNTT_coset((a·b − c)/Z) = (iNTT_coset(a·b) − iNTT(c))/Z on the coset (Z is
/// constant there): C needs its coefficients only, not its coset evaluations. The same
/// coefficients for any a, b and c.
pub fn h_coefficients(
    domain: &Domain,
    mut a: Vec<Scalar>,
    mut b: Vec<Scalar>,
    mut c: Vec<Scalar>,
) -> Vec<Scalar> {
    let ((), ((), ())) = rayon::join(
        || domain.intt_then_coset_ntt(&mut a),
        || {
            rayon::join(
                || domain.intt_then_coset_ntt(&mut b),
                // n times c's coefficients: the last pass below scales both terms at once.
                || {
                    domain.check_len(&c);
                    transform(&mut c, domain.log_n, &domain.inv_twiddles)
                },
            )
        },
    );
    a.par_iter_mut()
        .zip(b.par_iter())
        .with_min_len(MIN_CHUNK)
        .for_each(|(a, b)| *a *= b);
    drop(b);
    transform(&mut a, domain.log_n, &domain.inv_twiddles);
    let g_inv = Scalar::MULTIPLICATIVE_GENERATOR.invert().expect("g ≠ 0");
    scale_by_powers_minus(&mut a, &c, domain.n_inv * domain.z_inv_on_coset(), g_inv);
    drop(c);
    a.truncate(domain.size() - 1);
    a
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    fn random(n: usize, seed: u64) -> Vec<Scalar> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        (0..n).map(|_| Scalar::random(&mut rng)).collect()
    }

    fn naive_eval(coeffs: &[Scalar], x: Scalar) -> Scalar {
        coeffs.iter().rev().fold(Scalar::ZERO, |acc, c| acc * x + c)
    }

    #[test]
    fn ntt_matches_naive_evaluation() {
        for log_n in [0u32, 1, 2, 3, 5, 8] {
            let d = Domain::new(log_n).unwrap();
            let coeffs = random(d.size(), log_n as u64);
            let mut v = coeffs.clone();
            d.ntt(&mut v);
            let omega = Scalar::ROOT_OF_UNITY.pow_vartime([1u64 << (Scalar::S - log_n)]);
            for (i, got) in v.iter().enumerate() {
                assert_eq!(*got, naive_eval(&coeffs, omega.pow_vartime([i as u64])));
            }
            let mut w = coeffs.clone();
            d.coset_ntt(&mut w);
            let g = Scalar::MULTIPLICATIVE_GENERATOR;
            for (i, got) in w.iter().enumerate() {
                assert_eq!(*got, naive_eval(&coeffs, g * omega.pow_vartime([i as u64])));
            }
        }
    }

    #[test]
    fn round_trips_across_the_block_boundary() {
        for log_n in [11u32, 12, 13, 15] {
            let d = Domain::new(log_n).unwrap();
            let coeffs = random(d.size(), 100 + log_n as u64);
            let mut v = coeffs.clone();
            d.ntt(&mut v);
            d.intt(&mut v);
            assert_eq!(v, coeffs);
            d.coset_ntt(&mut v);
            d.icoset_ntt(&mut v);
            assert_eq!(v, coeffs);
            let mut x = coeffs.clone();
            d.intt_then_coset_ntt(&mut x);
            let mut y = coeffs.clone();
            d.intt(&mut y);
            d.coset_ntt(&mut y);
            assert_eq!(x, y);
        }
    }

    #[test]
    fn large_ntt_agrees_with_a_point_evaluation() {
        let d = Domain::new(14).unwrap();
        let coeffs = random(d.size(), 7);
        let mut v = coeffs.clone();
        d.ntt(&mut v);
        let omega = Scalar::ROOT_OF_UNITY.pow_vartime([1u64 << (Scalar::S - 14)]);
        for i in [0usize, 1, 4097, d.size() - 1] {
            assert_eq!(v[i], naive_eval(&coeffs, omega.pow_vartime([i as u64])));
        }
    }

    #[test]
    fn h_is_the_quotient() {
        // Build A, B, C evaluations with A·B − C divisible by Z and check H·Z = A·B − C at a
        // random point.
        let log_n = 6;
        let d = Domain::new(log_n).unwrap();
        let n = d.size();
        let a = random(n, 1);
        let b = random(n, 2);
        let c: Vec<Scalar> = a.iter().zip(&b).map(|(a, b)| a * b).collect();
        let h = h_coefficients(&d, a.clone(), b.clone(), c.clone());
        assert_eq!(h.len(), n - 1);
        let (mut pa, mut pb, mut pc) = (a, b, c);
        d.intt(&mut pa);
        d.intt(&mut pb);
        d.intt(&mut pc);
        let x = Scalar::from(0x1234_5678u64);
        let lhs = naive_eval(&pa, x) * naive_eval(&pb, x) - naive_eval(&pc, x);
        let z = x.pow_vartime([n as u64]) - Scalar::ONE;
        assert_eq!(lhs, naive_eval(&h, x) * z);
    }

    #[test]
    fn h_in_six_transforms_equals_the_textbook_seven_for_any_inputs() {
        // a·b − c not divisible by Z: the identity the six-transform form rests on
        // (iNTT_coset(NTT_coset(iNTT(c))) = iNTT(c)) holds for any c, so the coefficients
        // must be the textbook form's, the one bellperson computes.
        for log_n in [0u32, 1, 2, 5, 10] {
            let d = Domain::new(log_n).unwrap();
            let n = d.size();
            let (a, b, c) = (random(n, 11), random(n, 12), random(n, 13));
            let (mut ta, mut tb, mut tc) = (a.clone(), b.clone(), c.clone());
            for v in [&mut ta, &mut tb, &mut tc] {
                d.intt_then_coset_ntt(v);
            }
            for ((a, b), c) in ta.iter_mut().zip(&tb).zip(&tc) {
                *a = *a * b - c;
            }
            d.icoset_ntt_scaled(&mut ta, d.z_inv_on_coset());
            ta.truncate(n - 1);
            assert_eq!(h_coefficients(&d, a, b, c), ta, "2^{log_n}");
        }
    }
}
