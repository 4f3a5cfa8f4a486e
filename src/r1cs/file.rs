//! A recording on disk, beside its circuit's params, so that an engine that restarts does not
//! record again (a 32GiB PoRep partition's recording takes minutes).
//!
//! The file is tied to its params by their verifying key, stored whole in the header: a file
//! made with other params (a stale one) is refused, as is one whose checksum, lengths or
//! entries do not hold (truncated or corrupt); the caller then records again and rewrites it.
//! Written to a temporary name and renamed, so a crash never leaves half a file under the
//! real name.
//!
//! Layout (little-endian): `CUZKR1CS`, version (u32), the verifying key's bytes (u64 length
//! first), inputs, aux and rows (u64 each), the three density bitmaps (a_aux, b_input,
//! b_aux: bit length, then the words), the coefficient table (count, then 32-byte canonical
//! scalars), A, B and C (each: row offsets, columns, codes, every array its length first), and
//! a checksum of everything before it (u64).

use std::fs;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use blstrs::Scalar;
use ff::PrimeField;

use super::matrix::{Coefficients, SparseMatrix, FIRST_TABLE_CODE};
use super::recorded::{RecordedCircuit, RecordingId, INPUT_COLUMN};
use crate::error::{Error, ErrorKind, Result};
use crate::groth16::Density;

const MAGIC: &[u8; 8] = b"CUZKR1CS";
/// Bumped whenever the layout or the meaning of an entry changes: an older file is stale.
const VERSION: u32 = 1;

/// What [`load`] found.
#[derive(Debug)]
// Returned once per load: boxing the recording would buy nothing.
#[allow(clippy::large_enum_variant)]
pub enum Loaded {
    /// A recording of these params.
    Recording(RecordedCircuit),
    /// No file.
    Missing,
    /// A well-formed file of other params or another version.
    Stale(String),
    /// A file that is truncated or corrupt; the reason.
    Corrupt(String),
}

/// 64-bit FNV-1a over 8-byte words (the tail zero-padded): not a cryptographic hash, a
/// check against truncation and flipped bytes, fast enough for gigabytes.
#[derive(Clone, Copy)]
struct Checksum(u64);

impl Checksum {
    fn new() -> Self {
        Checksum(0xcbf2_9ce4_8422_2325)
    }

    fn update(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.word(u64::from_le_bytes(c.try_into().expect("8 bytes")));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut w = [0u8; 8];
            w[..rest.len()].copy_from_slice(rest);
            self.word(u64::from_le_bytes(w) ^ (rest.len() as u64) << 56);
        }
    }

    fn word(&mut self, w: u64) {
        self.0 = (self.0 ^ w).wrapping_mul(0x0000_0100_0000_01b3);
    }
}

/// A writer that checksums what it writes.
struct Out<W: Write> {
    w: W,
    sum: Checksum,
}

impl<W: Write> Out<W> {
    fn bytes(&mut self, b: &[u8]) -> std::io::Result<()> {
        // Each call's bytes are checksummed on their own, as `In::take` reads them back.
        self.sum.update(b);
        self.w.write_all(b)
    }

    fn u64(&mut self, v: u64) -> std::io::Result<()> {
        self.bytes(&v.to_le_bytes())
    }

    fn array<T: Copy>(&mut self, v: &[T], to_le: impl Fn(&T) -> Vec<u8>) -> std::io::Result<()> {
        self.u64(v.len() as u64)?;
        // In blocks, so that the file is not assembled in memory twice.
        for block in v.chunks(1 << 16) {
            let bytes: Vec<u8> = block.iter().flat_map(&to_le).collect();
            self.bytes(&bytes)?;
        }
        Ok(())
    }
}

/// Writes `r`, a recording made with the params whose verifying key is `vk`, to `path`.
pub fn save(r: &RecordedCircuit, vk: &[u8], path: &Path) -> Result<()> {
    let tmp = temp_path(path);
    let io = |e: std::io::Error| {
        Error::new(
            ErrorKind::Io,
            format!("writing the recording {}: {e}", tmp.display()),
        )
    };
    let file = fs::File::create(&tmp).map_err(io)?;
    let mut o = Out {
        w: BufWriter::with_capacity(1 << 20, file),
        sum: Checksum::new(),
    };
    let write = |o: &mut Out<BufWriter<fs::File>>| -> std::io::Result<()> {
        o.bytes(MAGIC)?;
        o.bytes(&VERSION.to_le_bytes())?;
        o.u64(vk.len() as u64)?;
        o.bytes(vk)?;
        o.u64(r.inputs as u64)?;
        o.u64(r.aux as u64)?;
        o.u64(r.a.rows() as u64)?;
        for d in [&r.a_aux_density, &r.b_input_density, &r.b_aux_density] {
            o.u64(d.len() as u64)?;
            o.array(d.words(), |w| w.to_le_bytes().to_vec())?;
        }
        o.array(r.coefficients.table(), |k| k.to_repr().as_ref().to_vec())?;
        for m in [&r.a, &r.b, &r.c] {
            o.array(m.row_start(), |v| v.to_le_bytes().to_vec())?;
            o.array(m.cols(), |v| v.to_le_bytes().to_vec())?;
            o.array(m.codes(), |v| v.to_le_bytes().to_vec())?;
        }
        let sum = o.sum.0;
        o.w.write_all(&sum.to_le_bytes())?;
        o.w.flush()?;
        o.w.get_ref().sync_all()
    };
    let written = write(&mut o).map_err(io);
    drop(o);
    if let Err(e) = written {
        let _ = fs::remove_file(&tmp);
        return Err(e);
    }
    fs::rename(&tmp, path).map_err(|e| {
        let _ = fs::remove_file(&tmp);
        Error::new(
            ErrorKind::Io,
            format!("renaming the recording to {}: {e}", path.display()),
        )
    })
}

fn temp_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".tmp-{}", std::process::id()));
    path.with_file_name(name)
}

/// A reader over the file's bytes that checksums what it takes.
struct In<'a> {
    rest: &'a [u8],
    sum: Checksum,
}

/// Why a file is refused, before it is classified.
enum Refused {
    Stale(String),
    Corrupt(String),
}

fn corrupt(what: impl Into<String>) -> Refused {
    Refused::Corrupt(what.into())
}

impl<'a> In<'a> {
    fn take(&mut self, n: usize, what: &str) -> std::result::Result<&'a [u8], Refused> {
        if self.rest.len() < n {
            return Err(corrupt(format!("truncated in {what}")));
        }
        let (b, rest) = self.rest.split_at(n);
        self.rest = rest;
        self.sum.update(b);
        Ok(b)
    }

    fn u64(&mut self, what: &str) -> std::result::Result<u64, Refused> {
        Ok(u64::from_le_bytes(
            self.take(8, what)?.try_into().expect("8 bytes"),
        ))
    }

    fn len(&mut self, what: &str, elem: usize) -> std::result::Result<usize, Refused> {
        let n = self.u64(what)?;
        if n.saturating_mul(elem as u64) > self.rest.len() as u64 {
            return Err(corrupt(format!("truncated in {what}")));
        }
        Ok(n as usize)
    }

    /// An array written by `Out::array`, in the same blocks (the checksum covers each block).
    fn array<T>(
        &mut self,
        what: &str,
        elem: usize,
        from_le: impl Fn(&[u8]) -> T,
    ) -> std::result::Result<Vec<T>, Refused> {
        let n = self.len(what, elem)?;
        let mut v = Vec::with_capacity(n);
        let mut left = n;
        while left > 0 {
            let k = left.min(1 << 16);
            let bytes = self.take(k * elem, what)?;
            v.extend(bytes.chunks_exact(elem).map(&from_le));
            left -= k;
        }
        Ok(v)
    }
}

/// Reads the recording at `path` if it is one of the params whose verifying key is `vk`.
pub fn load(vk: &[u8], path: &Path) -> Result<Loaded> {
    let bytes = match fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Loaded::Missing),
        Err(e) => {
            return Err(Error::new(
                ErrorKind::Io,
                format!("reading the recording {}: {e}", path.display()),
            ))
        }
    };
    Ok(match parse(&bytes, vk) {
        Ok(r) => Loaded::Recording(r),
        Err(Refused::Stale(why)) => Loaded::Stale(why),
        Err(Refused::Corrupt(why)) => Loaded::Corrupt(why),
    })
}

fn parse(bytes: &[u8], vk: &[u8]) -> std::result::Result<RecordedCircuit, Refused> {
    let mut i = In {
        rest: bytes,
        sum: Checksum::new(),
    };
    if i.take(8, "the magic")? != MAGIC {
        return Err(corrupt("not a cuzk recording (no CUZKR1CS magic)"));
    }
    let version = u32::from_le_bytes(i.take(4, "the version")?.try_into().expect("4 bytes"));
    if version != VERSION {
        return Err(Refused::Stale(format!(
            "version {version}, this build reads {VERSION}"
        )));
    }
    let vk_len = i.len("the verifying key", 1)?;
    let file_vk = i.take(vk_len, "the verifying key")?;
    // The checksum is checked before anything is believed, the key included.
    let body_end = bytes
        .len()
        .checked_sub(8)
        .ok_or_else(|| corrupt("truncated"))?;
    let want = u64::from_le_bytes(bytes[body_end..].try_into().expect("8 bytes"));
    let header = bytes.len() - i.rest.len();
    if header > body_end {
        return Err(corrupt("truncated after the verifying key"));
    }
    let mut whole = In {
        rest: &bytes[header..body_end],
        sum: i.sum,
    };
    let stale_key = file_vk != vk;
    let (inputs, aux, rows) = (
        whole.u64("the counts")? as usize,
        whole.u64("the counts")? as usize,
        whole.u64("the counts")? as usize,
    );
    let mut densities = Vec::with_capacity(3);
    for what in ["a_aux density", "b_input density", "b_aux density"] {
        let bits = whole.u64(what)? as usize;
        let words = whole.array(what, 8, |b| u64::from_le_bytes(b.try_into().expect("8")))?;
        densities.push((bits, words));
    }
    let table: Vec<Option<Scalar>> = whole.array("the coefficient table", 32, |b| {
        let mut repr = <Scalar as PrimeField>::Repr::default();
        repr.as_mut().copy_from_slice(b);
        Option::from(Scalar::from_repr(repr))
    })?;
    let mut mats = Vec::with_capacity(3);
    for what in ["A", "B", "C"] {
        let row_start = whole.array(what, 4, |b| u32::from_le_bytes(b.try_into().expect("4")))?;
        let cols = whole.array(what, 4, |b| u32::from_le_bytes(b.try_into().expect("4")))?;
        let codes = whole.array(what, 2, |b| u16::from_le_bytes(b.try_into().expect("2")))?;
        mats.push((what, row_start, cols, codes));
    }
    if !whole.rest.is_empty() {
        return Err(corrupt(format!(
            "{} bytes after the matrices",
            whole.rest.len()
        )));
    }
    if whole.sum.0 != want {
        return Err(corrupt("checksum mismatch"));
    }
    if stale_key {
        return Err(Refused::Stale(
            "made with other params (the verifying key differs)".into(),
        ));
    }

    let table: Vec<Scalar> = table
        .into_iter()
        .collect::<Option<_>>()
        .ok_or_else(|| corrupt("a coefficient is not a field element"))?;
    let mut d = densities
        .into_iter()
        .zip([aux, inputs, aux])
        .map(|((bits, words), n)| {
            if bits != n {
                return Err(corrupt(format!(
                    "a density of {bits} bits for {n} variables"
                )));
            }
            Density::from_words(words, bits).map_err(|e| corrupt(e.to_string()))
        });
    let (a_aux_density, b_input_density, b_aux_density) = (
        d.next().expect("three")?,
        d.next().expect("three")?,
        d.next().expect("three")?,
    );
    let codes_named = FIRST_TABLE_CODE as usize + table.len();
    let mut matrices = Vec::with_capacity(3);
    for (what, row_start, cols, codes) in mats {
        if row_start.len() != rows + 1 {
            return Err(corrupt(format!(
                "{what} has {} row offsets for {rows} rows",
                row_start.len()
            )));
        }
        let col_ok = |c: &u32| {
            if c & INPUT_COLUMN != 0 {
                ((c & !INPUT_COLUMN) as usize) < inputs
            } else {
                (*c as usize) < aux
            }
        };
        if !cols.iter().all(col_ok) || !codes.iter().all(|&c| (c as usize) < codes_named) {
            return Err(corrupt(format!("{what} has an entry out of range")));
        }
        matrices.push(
            SparseMatrix::from_parts(row_start, cols, codes)
                .map_err(|e| corrupt(format!("{what}: {e}")))?,
        );
    }
    let mut m = matrices.into_iter();
    Ok(RecordedCircuit {
        id: RecordingId::next(),
        a: m.next().expect("three"),
        b: m.next().expect("three"),
        c: m.next().expect("three"),
        coefficients: Coefficients::from_table(table),
        inputs,
        aux,
        a_aux_density,
        b_input_density,
        b_aux_density,
    })
}
