//! Launching a kernel: which one ([`Kernel`]), over what ([`Grid`]), with what ([`Args`]),
//! bracketed by the context's kernel timeline. Only `gpu/kernels.rs`, which knows each
//! kernel's signature, calls [`GpuContext::launch`].

use std::ffi::{c_void, CStr};

use cudarc::driver::result;

use super::probe::check;
use super::GpuContext;
use crate::gpu::GpuError;

/// Every kernel in the fatbin (`cuda/*.cu`); each context looks them all up once.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Kernel {
    MsmWindowPoints,
    MsmScalarsHist,
    MsmScanChunkSums,
    MsmScanChunkOffsets,
    MsmScanApply,
    MsmScatter,
    MsmAffineCounts,
    MsmAffineRound,
    MsmAccumulate,
    MsmMergePieces,
    MsmBucketReduce,
    MsmTreeReduce,
    MsmAccumulateG2,
    MsmMergePiecesG2,
    MsmBucketReduceG2,
    MsmTreeReduceG2,
    NttPowers,
    NttScale,
    NttFirstStagesR8,
    NttFirstStagesR4,
    NttMidStagesR8,
    NttMidStagesR4,
    NttPointwiseMul,
    GatherDense,
    R1csMatvec,
}

impl Kernel {
    /// Every kernel, in declaration order (a kernel's index is its place here).
    pub(crate) const ALL: [Kernel; 25] = [
        Kernel::MsmWindowPoints,
        Kernel::MsmScalarsHist,
        Kernel::MsmScanChunkSums,
        Kernel::MsmScanChunkOffsets,
        Kernel::MsmScanApply,
        Kernel::MsmScatter,
        Kernel::MsmAffineCounts,
        Kernel::MsmAffineRound,
        Kernel::MsmAccumulate,
        Kernel::MsmMergePieces,
        Kernel::MsmBucketReduce,
        Kernel::MsmTreeReduce,
        Kernel::MsmAccumulateG2,
        Kernel::MsmMergePiecesG2,
        Kernel::MsmBucketReduceG2,
        Kernel::MsmTreeReduceG2,
        Kernel::NttPowers,
        Kernel::NttScale,
        Kernel::NttFirstStagesR8,
        Kernel::NttFirstStagesR4,
        Kernel::NttMidStagesR8,
        Kernel::NttMidStagesR4,
        Kernel::NttPointwiseMul,
        Kernel::GatherDense,
        Kernel::R1csMatvec,
    ];

    /// The NTT's tile kernels: their shared memory is dynamic, up to 64 KB (the context opts
    /// them in when it loads the module).
    pub(crate) const NTT_TILES: [Kernel; 4] = [
        Kernel::NttFirstStagesR8,
        Kernel::NttFirstStagesR4,
        Kernel::NttMidStagesR8,
        Kernel::NttMidStagesR4,
    ];

    /// The `extern "C"` symbol in the fatbin.
    pub(crate) fn symbol(self) -> &'static CStr {
        match self {
            Kernel::MsmWindowPoints => c"cuzk_msm_window_points",
            Kernel::MsmScalarsHist => c"cuzk_msm_scalars_hist",
            Kernel::MsmScanChunkSums => c"cuzk_msm_scan_chunk_sums",
            Kernel::MsmScanChunkOffsets => c"cuzk_msm_scan_chunk_offsets",
            Kernel::MsmScanApply => c"cuzk_msm_scan_apply",
            Kernel::MsmScatter => c"cuzk_msm_scatter",
            Kernel::MsmAffineCounts => c"cuzk_msm_affine_counts",
            Kernel::MsmAffineRound => c"cuzk_msm_affine_round",
            Kernel::MsmAccumulate => c"cuzk_msm_accumulate",
            Kernel::MsmMergePieces => c"cuzk_msm_merge_pieces",
            Kernel::MsmBucketReduce => c"cuzk_msm_bucket_reduce",
            Kernel::MsmTreeReduce => c"cuzk_msm_tree_reduce",
            Kernel::MsmAccumulateG2 => c"cuzk_msm_accumulate_g2",
            Kernel::MsmMergePiecesG2 => c"cuzk_msm_merge_pieces_g2",
            Kernel::MsmBucketReduceG2 => c"cuzk_msm_bucket_reduce_g2",
            Kernel::MsmTreeReduceG2 => c"cuzk_msm_tree_reduce_g2",
            Kernel::NttPowers => c"cuzk_ntt_powers",
            Kernel::NttScale => c"cuzk_ntt_scale",
            Kernel::NttFirstStagesR8 => c"cuzk_ntt_first_stages_r8",
            Kernel::NttFirstStagesR4 => c"cuzk_ntt_first_stages_r4",
            Kernel::NttMidStagesR8 => c"cuzk_ntt_mid_stages_r8",
            Kernel::NttMidStagesR4 => c"cuzk_ntt_mid_stages_r4",
            Kernel::NttPointwiseMul => c"cuzk_ntt_pointwise_mul",
            Kernel::GatherDense => c"cuzk_gather_dense",
            Kernel::R1csMatvec => c"cuzk_r1cs_matvec",
        }
    }

    /// Its place in [`Kernel::ALL`].
    pub(crate) fn index(self) -> usize {
        self as usize
    }
}

/// How a launch is spread over the device.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Grid {
    /// One thread per item, in blocks of `block` (the last block partly idle): kernels
    /// whose threads test their global index against a count.
    Threads { threads: u64, block: u32 },
    /// Exactly `blocks` blocks of `block` threads: kernels that work per block (shared
    /// memory).
    Blocks { blocks: u32, block: u32 },
}

/// Kernel arguments: each value is copied into its own 8-byte-aligned slot, and
/// cuLaunchKernel gets the slots' addresses (it copies the values at launch). The slots do
/// not move between `pointers()` and the launch: nothing is pushed after it.
#[derive(Default)]
pub(crate) struct Args {
    slots: Vec<[u64; 4]>,
}

impl Args {
    pub(crate) fn new() -> Self {
        Args::default()
    }

    /// Appends one argument (a device pointer, an integer, or a field element by value).
    pub(crate) fn arg<T: Copy>(mut self, v: T) -> Self {
        assert!(
            std::mem::size_of::<T>() <= 32,
            "kernel arguments are at most 32 bytes"
        );
        let mut slot = [0u64; 4];
        // SAFETY: the slot has 32 bytes and T is Copy with size <= 32.
        unsafe {
            std::ptr::copy_nonoverlapping(
                &v as *const T as *const u8,
                slot.as_mut_ptr() as *mut u8,
                std::mem::size_of::<T>(),
            );
        }
        self.slots.push(slot);
        self
    }

    fn pointers(&mut self) -> Vec<*mut c_void> {
        self.slots
            .iter_mut()
            .map(|b| b.as_mut_ptr() as *mut c_void)
            .collect()
    }
}

impl GpuContext {
    /// Threads of `kernel` the device runs at once in blocks of `block` with `smem` bytes of
    /// dynamic shared memory: the occupancy calculator's blocks a multiprocessor times the
    /// multiprocessors. A launch of fewer leaves part of the device idle.
    pub(crate) fn resident_threads(
        &self,
        kernel: Kernel,
        block: u32,
        smem: u32,
    ) -> Result<u32, GpuError> {
        // SAFETY: the function was looked up in this context's module when it was loaded.
        let per_mp = check(
            unsafe {
                result::occupancy::max_active_block_per_multiprocessor(
                    self.function(kernel),
                    block as i32,
                    smem as usize,
                )
            },
            "cuOccupancyMaxActiveBlocksPerMultiprocessor",
        )?;
        Ok(per_mp.max(1) as u32 * block * self.info().multiprocessors)
    }

    /// Launches `kernel` on the compute stream, between two events of the kernel timeline.
    /// An empty grid launches nothing.
    ///
    /// # Safety
    /// `args` must hold values whose types and order match the kernel's signature, and every
    /// device pointer among them must cover what the kernel touches over `grid`.
    pub(crate) unsafe fn launch(
        &self,
        kernel: Kernel,
        grid: Grid,
        smem: u32,
        mut args: Args,
    ) -> Result<(), GpuError> {
        let (blocks, block) = match grid {
            Grid::Threads { threads, block } => (threads.div_ceil(block as u64), block),
            Grid::Blocks { blocks, block } => (blocks as u64, block),
        };
        if blocks == 0 {
            return Ok(());
        }
        if blocks > i32::MAX as u64 {
            return Err(GpuError::InvalidArgument(format!(
                "{kernel:?}: grid of {blocks} blocks is too large"
            )));
        }
        let f = self.function(kernel);
        let mut params = args.pointers();
        let stream = self.stream();
        self.timeline().borrow_mut().bracket(stream, || {
            check(
                result::launch_kernel(
                    f,
                    (blocks as u32, 1, 1),
                    (block, 1, 1),
                    smem,
                    stream,
                    &mut params,
                ),
                &format!("cuLaunchKernel({})", kernel.symbol().to_string_lossy()),
            )
        })
    }
}
