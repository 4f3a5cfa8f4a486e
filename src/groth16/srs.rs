//! The proving key (SRS) of one circuit shape, read from Filecoin's `.params` files.
//!
//! Layout, exactly as bellperson's `Parameters::write` produces it: the verifying key, then
//! the sections `h`, `l`, `a`, `b_g1` (G1) and `b_g2` (G2), each a big-endian u32 count
//! followed by that many uncompressed points. Files are memory-mapped and decoded in
//! parallel into blst's in-memory form, which the CPU and GPU backends use directly.

use std::fs::File;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use blstrs::{G1Affine, G2Affine};

use super::encoding::{write_section_to, ParamsReader, PointCheck};
use super::verifying_key::VerifyingKey;
use crate::error::{Error, ErrorKind, Result};

/// A stable identity for one SRS in memory, unique for the process's life: what the GPU's
/// resident copies and the engine's params registry key on (an address can be reused after
/// an SRS is freed; an id never is).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SrsId(u64);

impl SrsId {
    fn next() -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        SrsId(NEXT.fetch_add(1, Relaxed))
    }

    /// The id as a number (never 0).
    pub fn get(self) -> u64 {
        self.0
    }
}

/// A Groth16 proving key: the verifying key and the five query sections.
#[derive(Debug)]
pub struct Srs {
    id: SrsId,
    /// The verifying key.
    pub vk: VerifyingKey,
    /// `h`: one point per coefficient of the quotient polynomial (domain size − 1).
    pub h: Vec<G1Affine>,
    /// `l`: one point per aux variable.
    pub l: Vec<G1Affine>,
    /// `a`: one point per input, then one per aux variable used in some A.
    pub a: Vec<G1Affine>,
    /// `b_g1`: one point per input, then per aux variable, used in some B.
    pub b_g1: Vec<G1Affine>,
    /// `b_g2`: as `b_g1`, in G2.
    pub b_g2: Vec<G2Affine>,
}

impl Clone for Srs {
    /// A copy is a new SRS with its own id: its sections may then be changed independently.
    fn clone(&self) -> Self {
        Srs {
            id: SrsId::next(),
            vk: self.vk.clone(),
            h: self.h.clone(),
            l: self.l.clone(),
            a: self.a.clone(),
            b_g1: self.b_g1.clone(),
            b_g2: self.b_g2.clone(),
        }
    }
}

impl PartialEq for Srs {
    /// Equal contents (the ids are not compared).
    fn eq(&self, o: &Self) -> bool {
        self.vk == o.vk
            && self.h == o.h
            && self.l == o.l
            && self.a == o.a
            && self.b_g1 == o.b_g1
            && self.b_g2 == o.b_g2
    }
}

impl Eq for Srs {}

impl Srs {
    /// An SRS from its parts.
    pub fn from_parts(
        vk: VerifyingKey,
        h: Vec<G1Affine>,
        l: Vec<G1Affine>,
        a: Vec<G1Affine>,
        b_g1: Vec<G1Affine>,
        b_g2: Vec<G2Affine>,
    ) -> Self {
        Srs {
            id: SrsId::next(),
            vk,
            h,
            l,
            a,
            b_g1,
            b_g2,
        }
    }

    /// This SRS's identity in the process.
    pub fn id(&self) -> SrsId {
        self.id
    }

    /// Reads a `.params` file through a memory map.
    pub fn load(path: impl AsRef<Path>, check: PointCheck) -> Result<Self> {
        let path = path.as_ref();
        let io_err = |e: std::io::Error| {
            Error::new(
                ErrorKind::Io,
                format!("cannot read params file {}: {e}", path.display()),
            )
        };
        let file = File::open(path).map_err(io_err)?;
        let len = file.metadata().map_err(io_err)?.len();
        if len == 0 {
            return Err(Error::invalid_params(format!(
                "params file {} is empty",
                path.display()
            )));
        }
        // SAFETY: the map is read-only and dropped before this function returns; a file
        // truncated underneath us by another process is the one hazard mmap cannot rule out,
        // and params files are written once and never modified in place.
        let map = unsafe { memmap2::Mmap::map(&file) }.map_err(io_err)?;
        Self::from_bytes(&map, check).map_err(|e| e.context(path.display()))
    }

    /// Decodes params from bytes in memory.
    pub fn from_bytes(bytes: &[u8], check: PointCheck) -> Result<Self> {
        let mut r = ParamsReader::new(bytes, check);
        let srs = Srs::from_parts(
            VerifyingKey::read(&mut r)?,
            r.section("h")?,
            r.section("l")?,
            r.section("a")?,
            r.section("b_g1")?,
            r.section("b_g2")?,
        );
        r.finish()?;
        if srs.b_g1.len() != srs.b_g2.len() {
            return Err(Error::invalid_params(format!(
                "params sections `b_g1` ({} points) and `b_g2` ({} points) differ in length",
                srs.b_g1.len(),
                srs.b_g2.len()
            )));
        }
        if srs.vk.ic.is_empty() {
            return Err(Error::invalid_params(
                "params section `vk.ic` is empty: a circuit has at least the input ONE",
            ));
        }
        Ok(srs)
    }

    /// Encodes in bellperson's `Parameters::write` layout.
    pub fn to_bytes(&self) -> Vec<u8> {
        let g1 = self.h.len() + self.l.len() + self.a.len() + self.b_g1.len();
        let mut out =
            Vec::with_capacity(1200 + 96 * (g1 + self.vk.ic.len()) + 192 * self.b_g2.len());
        self.write_to(&mut out)
            .expect("writing into a Vec does not fail");
        out
    }

    /// Writes [`Srs::to_bytes`]'s bytes to `out` without holding them all (a params file of
    /// a large circuit).
    pub fn write_to<W: std::io::Write>(&self, out: &mut W) -> std::io::Result<()> {
        let mut vk = Vec::new();
        self.vk.write_into(&mut vk);
        out.write_all(&vk)?;
        write_section_to(out, &self.h)?;
        write_section_to(out, &self.l)?;
        write_section_to(out, &self.a)?;
        write_section_to(out, &self.b_g1)?;
        write_section_to(out, &self.b_g2)
    }

    /// Number of inputs (the constant ONE included) the circuit has.
    pub fn num_inputs(&self) -> usize {
        self.vk.ic.len()
    }

    /// Number of aux variables the circuit has.
    pub fn num_aux(&self) -> usize {
        self.l.len()
    }

    /// The evaluation domain size (a power of two): one more than `h`'s length.
    pub fn domain_size(&self) -> usize {
        self.h.len() + 1
    }

    /// Bytes the decoded key occupies in memory.
    pub fn memory_bytes(&self) -> usize {
        let g1 = std::mem::size_of::<G1Affine>();
        g1 * (self.h.len() + self.l.len() + self.a.len() + self.b_g1.len() + self.vk.ic.len())
            + std::mem::size_of::<G2Affine>() * self.b_g2.len()
    }
}
