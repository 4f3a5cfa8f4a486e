//! A recorded A, B or C matrix: compressed sparse rows whose coefficients are two-byte
//! codes into a table of the circuit's distinct coefficients.
//!
//! Measured on the 2KiB PoRep partition (notes/synthesis.md): of its 14.9M non-zeros, 69 %
//! are +1 or −1 and 25 % more are ±2^k (bit packing); the rest are Poseidon's constants,
//! and the whole circuit has 1,526 distinct coefficients (PoSt: 961). A two-byte code per
//! entry (0 is +1, 1 is −1, `2 + i` the table's entry i) makes an entry 6 bytes (column and
//! code) against 36 for a column and a scalar, and lets the mat-vec add or subtract without
//! a multiplication for the common case. One byte would not name 1,526 values.

use blstrs::Scalar;
use ff::Field;

use crate::error::{Error, Result};

/// A coefficient's code in a matrix.
pub type Code = u16;

/// The code of the coefficient +1.
pub const PLUS_ONE: Code = 0;
/// The code of the coefficient −1.
pub const MINUS_ONE: Code = 1;
/// The first code that indexes the [`Coefficients`] table.
pub const FIRST_TABLE_CODE: Code = 2;

/// The distinct coefficients other than ±1 that a circuit's matrices use, shared by A, B
/// and C; an entry's code `2 + i` stands for `table[i]`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Coefficients {
    table: Vec<Scalar>,
    index: std::collections::HashMap<[u8; 32], Code>,
}

impl Coefficients {
    /// The code of `k` (non-zero), adding it to the table when it is new. Fails past the
    /// 65,534 distinct coefficients a code can name.
    pub fn code(&mut self, k: &Scalar) -> Result<Code> {
        if *k == Scalar::ONE {
            return Ok(PLUS_ONE);
        }
        if *k == -Scalar::ONE {
            return Ok(MINUS_ONE);
        }
        let key = ff::PrimeField::to_repr(k);
        if let Some(&c) = self.index.get(&key) {
            return Ok(c);
        }
        let c = Code::try_from(self.table.len() + FIRST_TABLE_CODE as usize).map_err(|_| {
            Error::internal(format!(
                "the circuit has more than {} distinct coefficients, more than a {}-bit code names",
                Code::MAX - FIRST_TABLE_CODE + 1,
                Code::BITS
            ))
        })?;
        self.table.push(*k);
        self.index.insert(key, c);
        Ok(c)
    }

    /// The coefficient a code stands for.
    pub fn value(&self, code: Code) -> Scalar {
        match code {
            PLUS_ONE => Scalar::ONE,
            MINUS_ONE => -Scalar::ONE,
            c => self.table[(c - FIRST_TABLE_CODE) as usize],
        }
    }

    /// The table (codes 2 and up), for a mat-vec that looks codes up itself.
    pub fn table(&self) -> &[Scalar] {
        &self.table
    }

    /// Distinct coefficients other than ±1.
    pub fn len(&self) -> usize {
        self.table.len()
    }

    /// Whether every coefficient is ±1.
    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }

    /// Bytes the table takes (the lookup index is dropped with [`Coefficients::freeze`]).
    pub fn bytes(&self) -> usize {
        self.table.len() * std::mem::size_of::<Scalar>()
    }

    /// A frozen table read back (a recording file): `table[i]` is code `2 + i`.
    pub(crate) fn from_table(table: Vec<Scalar>) -> Self {
        Coefficients {
            table,
            index: Default::default(),
        }
    }

    /// Drops the lookup index once recording is done.
    pub fn freeze(&mut self) {
        self.index = Default::default();
    }
}

/// One matrix in compressed sparse rows: row `r`'s entries are
/// `cols[row_start[r]..row_start[r + 1]]` with codes at the same places. Columns number the
/// inputs first (ONE is column 0), then the aux variables.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SparseMatrix {
    row_start: Vec<u32>,
    cols: Vec<u32>,
    codes: Vec<Code>,
}

impl SparseMatrix {
    /// An empty matrix (no rows).
    pub fn new() -> Self {
        SparseMatrix {
            row_start: vec![0],
            cols: Vec::new(),
            codes: Vec::new(),
        }
    }

    /// Room for `rows` more rows of `entries` entries in all.
    pub fn reserve(&mut self, rows: usize, entries: usize) {
        self.row_start.reserve(rows);
        self.cols.reserve(entries);
        self.codes.reserve(entries);
    }

    /// Appends an entry to the row being built.
    pub fn push_entry(&mut self, col: u32, code: Code) {
        self.cols.push(col);
        self.codes.push(code);
    }

    /// Ends the row being built. Fails once the matrix holds more entries than a `u32` row
    /// pointer reaches (4.3G; a 32GiB PoRep partition's A has 309M).
    pub fn end_row(&mut self) -> Result<()> {
        let end = u32::try_from(self.cols.len()).map_err(|_| {
            Error::internal("a recorded matrix has more than 2^32 non-zero entries")
        })?;
        self.row_start.push(end);
        Ok(())
    }

    /// Rows.
    pub fn rows(&self) -> usize {
        self.row_start.len() - 1
    }

    /// Non-zero entries.
    pub fn nnz(&self) -> usize {
        self.cols.len()
    }

    /// Row `r`'s columns and codes.
    pub fn row(&self, r: usize) -> (&[u32], &[Code]) {
        let (s, e) = (self.row_start[r] as usize, self.row_start[r + 1] as usize);
        (&self.cols[s..e], &self.codes[s..e])
    }

    /// Rows + 1 offsets into [`SparseMatrix::cols`] and [`SparseMatrix::codes`], the first 0.
    pub fn row_start(&self) -> &[u32] {
        &self.row_start
    }

    /// Every entry's column (an input when bit 31 is set, else an aux variable).
    pub fn cols(&self) -> &[u32] {
        &self.cols
    }

    /// Every entry's coefficient code.
    pub fn codes(&self) -> &[Code] {
        &self.codes
    }

    /// Bytes the matrix takes.
    pub fn bytes(&self) -> usize {
        self.row_start.len() * 4 + self.cols.len() * 4 + self.codes.len() * 2
    }

    /// A matrix read back (a recording file), checked: offsets from 0 to the entry count,
    /// never decreasing, and as many codes as columns. Columns and codes are checked against
    /// the circuit's counts by the caller.
    pub(crate) fn from_parts(
        row_start: Vec<u32>,
        cols: Vec<u32>,
        codes: Vec<Code>,
    ) -> Result<Self> {
        let ok = row_start.first() == Some(&0)
            && row_start.last().map(|&e| e as usize) == Some(cols.len())
            && cols.len() == codes.len()
            && row_start.windows(2).all(|w| w[0] <= w[1]);
        if !ok {
            return Err(Error::internal(
                "a recorded matrix's offsets do not span its entries",
            ));
        }
        Ok(SparseMatrix {
            row_start,
            cols,
            codes,
        })
    }

    /// Releases the spare capacity left from recording.
    pub fn shrink_to_fit(&mut self) {
        self.row_start.shrink_to_fit();
        self.cols.shrink_to_fit();
        self.codes.shrink_to_fit();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_name_plus_minus_one_and_the_table() {
        let mut k = Coefficients::default();
        let two = Scalar::from(2u64);
        assert_eq!(k.code(&Scalar::ONE).unwrap(), PLUS_ONE);
        assert_eq!(k.code(&-Scalar::ONE).unwrap(), MINUS_ONE);
        let c = k.code(&two).unwrap();
        assert_eq!(k.code(&two).unwrap(), c);
        assert_eq!(k.len(), 1);
        assert_eq!(k.value(c), two);
        assert_eq!(k.value(MINUS_ONE), -Scalar::ONE);
    }

    #[test]
    fn rows_hold_their_entries() {
        let mut m = SparseMatrix::new();
        m.push_entry(3, PLUS_ONE);
        m.push_entry(5, 7);
        m.end_row().unwrap();
        m.end_row().unwrap();
        m.push_entry(0, MINUS_ONE);
        m.end_row().unwrap();
        assert_eq!((m.rows(), m.nnz()), (3, 3));
        assert_eq!(m.row(0), (&[3, 5][..], &[PLUS_ONE, 7][..]));
        assert!(m.row(1).0.is_empty());
        assert_eq!(m.row(2), (&[0][..], &[MINUS_ONE][..]));
    }
}
