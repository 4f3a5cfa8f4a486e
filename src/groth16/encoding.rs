//! Point encodings shared by the params reader, the verifying key and the proof.
//!
//! bellperson writes SRS points uncompressed (x‖y, big-endian, flags in the top bits) and
//! proofs compressed. Decoding goes through blst, which checks the encoding and that the
//! point is on the curve; `PointCheck::Checked` adds the subgroup check.

use blstrs::{G1Affine, G2Affine};
use group::prime::PrimeCurveAffine;
use rayon::prelude::*;

use crate::error::{Error, Result};

/// Bytes of an uncompressed G1 point.
pub const G1_UNCOMPRESSED: usize = 96;
/// Bytes of an uncompressed G2 point.
pub const G2_UNCOMPRESSED: usize = 192;

/// How much to check of each point read from params.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PointCheck {
    /// On the curve, in the prime-order subgroup, not the identity. Slow (a scalar
    /// multiplication per point) but safe for params from an untrusted source.
    Checked,
    /// Well-formed encoding, on the curve, not the identity; no subgroup check. For params
    /// whose digest the host has already verified (what Filecoin nodes do).
    Unchecked,
}

/// A curve point type the params reader can decode.
pub(crate) trait UncompressedPoint: Sized + Send + Sync + Copy {
    const SIZE: usize;
    const NAME: &'static str;
    fn decode(bytes: &[u8], check: PointCheck) -> Option<Self>;
    fn encode(&self, out: &mut Vec<u8>);
    fn is_identity(&self) -> bool;
}

impl UncompressedPoint for G1Affine {
    const SIZE: usize = G1_UNCOMPRESSED;
    const NAME: &'static str = "G1";
    fn decode(bytes: &[u8], check: PointCheck) -> Option<Self> {
        let bytes: &[u8; G1_UNCOMPRESSED] = bytes.try_into().ok()?;
        match check {
            PointCheck::Checked => G1Affine::from_uncompressed(bytes).into(),
            PointCheck::Unchecked => G1Affine::from_uncompressed_unchecked(bytes).into(),
        }
    }
    fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_uncompressed());
    }
    fn is_identity(&self) -> bool {
        bool::from(PrimeCurveAffine::is_identity(self))
    }
}

impl UncompressedPoint for G2Affine {
    const SIZE: usize = G2_UNCOMPRESSED;
    const NAME: &'static str = "G2";
    fn decode(bytes: &[u8], check: PointCheck) -> Option<Self> {
        let bytes: &[u8; G2_UNCOMPRESSED] = bytes.try_into().ok()?;
        match check {
            PointCheck::Checked => G2Affine::from_uncompressed(bytes).into(),
            PointCheck::Unchecked => G2Affine::from_uncompressed_unchecked(bytes).into(),
        }
    }
    fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_uncompressed());
    }
    fn is_identity(&self) -> bool {
        bool::from(PrimeCurveAffine::is_identity(self))
    }
}

/// A cursor over a params buffer that reads bellperson's sections and names the section and
/// index of anything wrong.
pub(crate) struct ParamsReader<'a> {
    bytes: &'a [u8],
    pos: usize,
    check: PointCheck,
}

impl<'a> ParamsReader<'a> {
    pub(crate) fn new(bytes: &'a [u8], check: PointCheck) -> Self {
        ParamsReader {
            bytes,
            pos: 0,
            check,
        }
    }

    fn take(&mut self, n: usize, section: &str, what: &str) -> Result<&'a [u8]> {
        let left = self.bytes.len() - self.pos;
        if n > left {
            return Err(Error::invalid_params(format!(
                "params truncated in section `{section}`: {what} needs {n} bytes at offset {}, only {left} left",
                self.pos
            )));
        }
        let out = &self.bytes[self.pos..self.pos + n];
        self.pos += n;
        Ok(out)
    }

    /// A big-endian u32 count.
    pub(crate) fn count(&mut self, section: &str) -> Result<usize> {
        let b = self.take(4, section, "the point count")?;
        Ok(u32::from_be_bytes(b.try_into().expect("4 bytes")) as usize)
    }

    /// One point; `allow_identity` only for the verifying key's fixed points.
    pub(crate) fn point<P: UncompressedPoint>(
        &mut self,
        section: &str,
        allow_identity: bool,
    ) -> Result<P> {
        let b = self.take(P::SIZE, section, "a point")?;
        decode_point(b, self.check, section, 0, allow_identity)
    }

    /// A section: a count, then that many points, decoded in parallel. The identity is
    /// rejected (bellperson rejects it too: these sections never hold one).
    pub(crate) fn section<P: UncompressedPoint>(&mut self, section: &str) -> Result<Vec<P>> {
        let n = self.count(section)?;
        let left = self.bytes.len() - self.pos;
        let need = n.saturating_mul(P::SIZE);
        if need > left {
            return Err(Error::invalid_params(format!(
                "params truncated in section `{section}`: its count says {n} {} points ({need} bytes) but only {left} bytes are left",
                P::NAME
            )));
        }
        let body = self.take(need, section, "the points")?;
        let check = self.check;
        body.par_chunks_exact(P::SIZE)
            .enumerate()
            .map(|(i, b)| decode_point(b, check, section, i, false))
            .collect()
    }

    /// Fails unless every byte was read.
    pub(crate) fn finish(self) -> Result<()> {
        let left = self.bytes.len() - self.pos;
        if left != 0 {
            return Err(Error::invalid_params(format!(
                "params have {left} trailing bytes after the last section `b_g2`"
            )));
        }
        Ok(())
    }
}

fn decode_point<P: UncompressedPoint>(
    bytes: &[u8],
    check: PointCheck,
    section: &str,
    index: usize,
    allow_identity: bool,
) -> Result<P> {
    let p = P::decode(bytes, check).ok_or_else(|| {
        let why = match check {
            PointCheck::Checked => "not a valid point on the curve in the prime-order subgroup",
            PointCheck::Unchecked => "not a valid point on the curve",
        };
        Error::invalid_params(format!(
            "params section `{section}`, point {index}: {} {why}",
            P::NAME
        ))
    })?;
    if !allow_identity && p.is_identity() {
        return Err(Error::invalid_params(format!(
            "params section `{section}`, point {index}: unexpected point at infinity"
        )));
    }
    Ok(p)
}

/// Appends a section: its big-endian count, then its points.
pub(crate) fn write_section<P: UncompressedPoint>(out: &mut Vec<u8>, points: &[P]) {
    out.extend_from_slice(&(points.len() as u32).to_be_bytes());
    for p in points {
        p.encode(out);
    }
}

/// [`write_section`] into a writer, encoding a megabyte-sized run of points at a time on all
/// cores: a 2^26-point SRS is tens of gigabytes, more than a host wants to hold twice.
pub(crate) fn write_section_to<P: UncompressedPoint, W: std::io::Write>(
    out: &mut W,
    points: &[P],
) -> std::io::Result<()> {
    out.write_all(&(points.len() as u32).to_be_bytes())?;
    for run in points.chunks(1 << 20) {
        let parts: Vec<Vec<u8>> = run
            .par_chunks(1 << 12)
            .map(|c| {
                let mut b = Vec::with_capacity(c.len() * P::SIZE);
                c.iter().for_each(|p| p.encode(&mut b));
                b
            })
            .collect();
        for b in parts {
            out.write_all(&b)?;
        }
    }
    Ok(())
}
