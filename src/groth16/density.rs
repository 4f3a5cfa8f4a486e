//! Density bitmaps: which variables an SRS section holds a point for.
//!
//! bellperson's parameter generator drops the points at infinity from the `a`, `b_g1` and
//! `b_g2` sections, so those sections hold a point only for the variables that appear (with a
//! non-zero coefficient) in some A or B linear combination. The prover must pair the
//! assignment's scalars with exactly those points; the bitmap says which ones.

use crate::error::{Error, Result};

/// A fixed-length bitmap, bit `i` in word `i / 64` at position `i % 64` (least significant
/// first); bits past `len` are always zero.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Density {
    words: Vec<u64>,
    len: usize,
    ones: usize,
}

impl Density {
    /// An all-zero bitmap of `len` bits.
    pub fn new(len: usize) -> Self {
        Density {
            words: vec![0; len.div_ceil(64)],
            len,
            ones: 0,
        }
    }

    /// An all-one bitmap of `len` bits.
    pub fn full(len: usize) -> Self {
        let mut d = Density::new(len);
        for i in 0..len {
            d.set(i);
        }
        d
    }

    /// A bitmap from its 64-bit words. Fails when `words` is not exactly `ceil(len / 64)` long
    /// or a bit past `len` is set (a host that got the length wrong).
    pub fn from_words(words: Vec<u64>, len: usize) -> Result<Self> {
        if words.len() != len.div_ceil(64) {
            return Err(Error::invalid_assignment(format!(
                "a bitmap of {len} bits needs {} 64-bit words, got {}",
                len.div_ceil(64),
                words.len()
            )));
        }
        if len % 64 != 0 {
            if let Some(last) = words.last() {
                if last >> (len % 64) != 0 {
                    return Err(Error::invalid_assignment(format!(
                        "a bitmap of {len} bits has bits set past its end"
                    )));
                }
            }
        }
        let ones = words.iter().map(|w| w.count_ones() as usize).sum();
        Ok(Density { words, len, ones })
    }

    /// Appends one zero bit.
    pub fn push(&mut self, bit: bool) {
        if self.len % 64 == 0 {
            self.words.push(0);
        }
        self.len += 1;
        if bit {
            self.set(self.len - 1);
        }
    }

    /// Sets bit `i` (no-op when already set). Panics past the end: a caller bug, not host input.
    pub fn set(&mut self, i: usize) {
        assert!(i < self.len, "density bit {i} out of range {}", self.len);
        let (w, b) = (i / 64, i % 64);
        if self.words[w] >> b & 1 == 0 {
            self.words[w] |= 1 << b;
            self.ones += 1;
        }
    }

    /// Bit `i`.
    pub fn get(&self, i: usize) -> bool {
        i < self.len && self.words[i / 64] >> (i % 64) & 1 == 1
    }

    /// Number of bits.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when the bitmap has no bits.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Number of set bits: how many SRS points the section holds for these variables.
    pub fn count_ones(&self) -> usize {
        self.ones
    }

    /// The 64-bit words (bits past `len` are zero).
    pub fn words(&self) -> &[u64] {
        &self.words
    }

    /// The indices of the set bits, ascending.
    pub fn iter_ones(&self) -> impl Iterator<Item = usize> + '_ {
        self.words.iter().enumerate().flat_map(|(w, &word)| {
            let mut word = word;
            std::iter::from_fn(move || {
                if word == 0 {
                    return None;
                }
                let b = word.trailing_zeros() as usize;
                word &= word - 1;
                Some(w * 64 + b)
            })
        })
    }

    /// Appends `other` after this bitmap.
    pub fn extend(&mut self, other: &Density) {
        for i in 0..other.len {
            self.push(other.get(i));
        }
    }
}

/// Which scalars of a variable vector an MSM uses.
#[derive(Clone, Copy, Debug)]
pub enum Selection<'a> {
    /// All of them.
    All,
    /// Those whose bit is set.
    Dense(&'a Density),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn push_set_count_and_iterate() {
        let mut d = Density::new(0);
        for i in 0..130 {
            d.push(i % 3 == 0);
        }
        assert_eq!(d.len(), 130);
        assert_eq!(d.count_ones(), 44);
        assert!(d.get(129) && !d.get(128) && !d.get(1000));
        let ones: Vec<usize> = d.iter_ones().collect();
        assert_eq!(ones, (0..130).filter(|i| i % 3 == 0).collect::<Vec<_>>());
        d.set(1);
        d.set(1);
        assert_eq!(d.count_ones(), 45);
    }

    #[test]
    fn from_words_rejects_wrong_sizes_and_stray_bits() {
        assert!(Density::from_words(vec![0, 0], 64).is_err());
        assert!(Density::from_words(vec![], 1).is_err());
        assert!(Density::from_words(vec![1 << 5], 5).is_err());
        let d = Density::from_words(vec![0b10110], 5).unwrap();
        assert_eq!(d.count_ones(), 3);
        assert_eq!(Density::full(70).count_ones(), 70);
    }
}
