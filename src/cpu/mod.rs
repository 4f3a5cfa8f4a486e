//! The CPU backend: NTTs over Fr and G1/G2 MSMs, multi-threaded. It proves where no GPU is
//! present, always does the B_g2 MSM, and is the oracle the GPU backend is tested against.

pub mod msm;
pub mod ntt;
mod start;

pub use start::CpuStart;
