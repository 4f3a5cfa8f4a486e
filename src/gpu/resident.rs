//! SRS points kept on a device between proofs, least recently used evicted first.
//!
//! Uploading an SRS's point sections costs as much as a large MSM (about 45 ms for 2^24
//! points on an H200), and every partition of every job of one circuit uses the same ones.
//! So each device keeps the sections (G1, and B in G2) of the SRSs it proved with, within a byte budget, and
//! evicts the least recently used SRS when a new one does not fit. An SRS that alone exceeds
//! the budget is not kept: its MSMs upload the points each time, as without a cache.
//!
//! An SRS is recognised by where its sections live in host memory and by a fingerprint of
//! their lengths and first and last points; a different SRS at a reused address differs in
//! its points. The engine never changes an SRS's points in place (jobs share it behind an
//! `Arc`), which is what makes a sampled fingerprint enough.

use blstrs::{G1Affine, G2Affine};

use super::{DeviceG1Points, DeviceG2Points, GpuContext, GpuError};
use crate::groth16::srs::Srs;

/// The host identity of an SRS's point sections.
#[derive(Clone, Debug, PartialEq, Eq)]
struct SrsKey {
    id: crate::groth16::SrsId,
    /// H, L, A, B_g1, B_g2.
    addresses: [usize; 5],
    lengths: [usize; 5],
    /// First and last point of each G1 section, and δ in G1.
    samples: Vec<G1Affine>,
    /// First and last point of B_g2, and δ in G2.
    g2_samples: Vec<G2Affine>,
}

impl SrsKey {
    fn of(srs: &Srs) -> Self {
        let sections = [&srs.h, &srs.l, &srs.a, &srs.b_g1];
        let mut samples = vec![srs.vk.delta_g1];
        for s in sections {
            samples.extend(s.first().copied());
            samples.extend(s.last().copied());
        }
        let b_g2 = &srs.b_g2;
        let mut g2_samples = vec![srs.vk.delta_g2];
        g2_samples.extend(b_g2.first().copied());
        g2_samples.extend(b_g2.last().copied());
        let [h, l, a, b] = sections.map(|s| (s.as_ptr() as usize, s.len()));
        SrsKey {
            id: srs.id(),
            addresses: [h.0, l.0, a.0, b.0, b_g2.as_ptr() as usize],
            lengths: [h.1, l.1, a.1, b.1, b_g2.len()],
            samples,
            g2_samples,
        }
    }
}

/// One SRS's sections on the device.
pub(crate) struct ResidentSrs {
    pub(crate) h: DeviceG1Points,
    pub(crate) l: DeviceG1Points,
    pub(crate) a: DeviceG1Points,
    pub(crate) b_g1: DeviceG1Points,
    pub(crate) b_g2: DeviceG2Points,
}

struct Entry {
    key: SrsKey,
    srs: ResidentSrs,
    bytes: usize,
    last_used: u64,
}

/// The resident SRSs of one device.
pub(crate) struct ResidentCache {
    entries: Vec<Entry>,
    budget: usize,
    used: usize,
    tick: u64,
}

/// Device bytes of an SRS's sections.
fn section_bytes(srs: &Srs) -> usize {
    96 * (srs.h.len() + srs.l.len() + srs.a.len() + srs.b_g1.len()) + 192 * srs.b_g2.len()
}

impl ResidentCache {
    /// A cache that keeps at most `budget` bytes of points.
    pub(crate) fn new(budget: usize) -> Self {
        ResidentCache {
            entries: Vec::new(),
            budget,
            used: 0,
            tick: 0,
        }
    }

    /// Frees every resident SRS.
    pub(crate) fn clear(&mut self) {
        self.entries.clear();
        self.used = 0;
    }

    /// Bytes of points kept now.
    pub(crate) fn used(&self) -> usize {
        self.used
    }

    /// `srs`'s sections on the device, uploaded now if they were not there; `None` when the
    /// SRS alone exceeds the budget or the upload failed (the caller then uploads per MSM).
    pub(crate) fn get(&mut self, ctx: &mut GpuContext, srs: &Srs) -> Option<&ResidentSrs> {
        self.tick += 1;
        let key = SrsKey::of(srs);
        if let Some(i) = self.entries.iter().position(|e| e.key == key) {
            self.entries[i].last_used = self.tick;
            return Some(&self.entries[i].srs);
        }
        let bytes = section_bytes(srs);
        if bytes > self.budget {
            return None;
        }
        while self.used + bytes > self.budget {
            let lru = (0..self.entries.len()).min_by_key(|&i| self.entries[i].last_used)?;
            let evicted = self.entries.swap_remove(lru);
            self.used -= evicted.bytes;
        }
        let upload = |ctx: &mut GpuContext| -> Result<ResidentSrs, GpuError> {
            Ok(ResidentSrs {
                h: ctx.upload_g1_points(&srs.h)?,
                l: ctx.upload_g1_points(&srs.l)?,
                a: ctx.upload_g1_points(&srs.a)?,
                b_g1: ctx.upload_g1_points(&srs.b_g1)?,
                b_g2: ctx.upload_g2_points(&srs.b_g2)?,
            })
        };
        match upload(ctx) {
            Ok(resident) => {
                self.used += bytes;
                self.entries.push(Entry {
                    key,
                    srs: resident,
                    bytes,
                    last_used: self.tick,
                });
                self.entries.last().map(|e| &e.srs)
            }
            Err(e) => {
                // Out of device memory, most likely: free what is kept and go on uncached.
                tracing::warn!(target: "cuzk::gpu", error = %e, "SRS upload failed; proving without a resident copy");
                self.clear();
                None
            }
        }
    }
}
