//! The start phase's stages, declared once.
//!
//! [`with_start_stages!`] holds the list; everything that names a stage is derived from it:
//! the [`StartTimings`] fields below, and through the stats' figures table
//! (`src/stats/figures.rs`) the `start_<stage>` histograms and snapshot fields, the
//! Prometheus `cuzk_start_stage_seconds{stage="<stage>"}` samples, the C fields
//! `cuzk_stats.start_<stage>` and the Go fields `Stats.Stages.<Go name>`; the doc text becomes
//! the field's doc in Rust, C and Go. The stages' C fields sit in the middle of `cuzk_stats`,
//! which a host with an older header reads by its own (smaller) size, so the list is closed:
//! a later start-phase figure is a `StartTimings` field outside it and a figure of its own at
//! the end of the figures table (as `matvec` / `start_matvec` is).

use std::time::Duration;

/// Hands the stage list to `$callback! { stages [ ... ] <the rest of the input> }`.
///
/// Each entry: the doc, the stage's name (the `StartTimings` field and the Prometheus
/// `stage` label), `=>` the C and `StatsSnapshot` field, `,` the Go field of `StartStages`.
/// A macro cannot make `start_ntt` from `ntt` on stable Rust, hence both names.
macro_rules! with_start_stages {
    ($callback:ident ! { $($input:tt)* }) => {
        $callback! {
            stages [
                /// The H step: the NTTs and (a·b − c)/Z (on a GPU its transfers included).
                ntt => start_ntt, NTT;
                /// Of the H step, the device's wait for a, b and c to reach the GPU (CUDA event time; 0 on
                /// the CPU): b and c go up under the transforms before them.
                ntt_upload => start_ntt_upload, NTTUpload;
                /// Of the H step, copying H back from the GPU (CUDA event time; 0 on the CPU, and
                /// on a GPU with resident params, where H stays on the device for its MSM).
                ntt_download => start_ntt_download, NTTDownload;
                /// The H MSM (wall time, its transfers included).
                msm_h => start_msm_h, MSMH;
                /// The L MSM (wall time, its transfers included).
                msm_l => start_msm_l, MSML;
                /// The A MSM (wall time, its transfers included, its gather not).
                msm_a => start_msm_a, MSMA;
                /// The B_g1 MSM (wall time, its transfers included, its gather not).
                msm_b_g1 => start_msm_b_g1, MSMBG1;
                /// Gathering the density-selected A and B scalars (GPU: on the host, or on the GPU
                /// when the params are resident there, with the small uploads that feed it; 0 on
                /// the CPU, whose MSMs read the selections in place).
                gather => start_gather, Gather;
                /// All host → GPU copies of one start phase (a gather's excepted), summed: CUDA
                /// event times of the uploads, plus the wall time of those not event-timed (the
                /// aux values; making params resident on the GPU, on their first proof there).
                /// 0 on the CPU.
                host_to_device => start_host_to_device, HostToDevice;
                /// All GPU → host copies of one start phase, summed (CUDA event times; 0 on the CPU).
                device_to_host => start_device_to_host, DeviceToHost;
            ]
            $($input)*
        }
    };
}
pub(crate) use with_start_stages;

macro_rules! start_timings {
    (stages [ $( $(#[doc = $doc:literal])* $stage:ident => $field:ident, $go:ident; )* ]) => {
        /// Time spent in each stage of a start phase, for the stats. Stages overlap where a
        /// field says so (the transfer sums cover transfers inside the NTT and MSM stages), so
        /// the fields do not add up to the whole start phase.
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
        pub struct StartTimings {
            /// The four G1 MSMs with the gathers and, on a GPU, the resident-SRS lookup (not a
            /// stage of the stats: its parts are).
            pub msm: Duration,
            /// Time the device had a kernel running during the start phase, measured on the
            /// device (timing events around every launch; zero on the CPU, which runs no
            /// kernels). Not a stage either: the stats sum it per device
            /// (`device_kernel_active_ns`), against which the mutex hold shows the device's
            /// idle time inside its start phases.
            pub kernels: Duration,
            /// From the start phase's first kernel to its last, on the device: beyond
            /// `kernels`, the time the device waited between them (host work, synchronous
            /// copies) inside the start phase. Zero on the CPU.
            pub kernel_span: Duration,
            /// a, b and c from a recorded circuit's matrices and the witness (a deferred
            /// partition), before the H step and not part of `ntt`: on a GPU the mat-vec over
            /// the resident matrices (CUDA event time), on the CPU the host's; zero where the
            /// synthesis stage made them. Not in the stage list, whose C fields sit in the
            /// middle of `cuzk_stats`: the stats' `start_matvec` is a figure of its own at
            /// the struct's end.
            pub matvec: Duration,
            $( $(#[doc = $doc])* pub $stage: Duration, )*
        }

        /// Number of start-phase stages.
        pub const START_STAGES: usize = [$(stringify!($stage)),*].len();

        impl StartTimings {
            /// Each stage's name and time, in declaration order.
            pub fn stages(&self) -> [(&'static str, Duration); START_STAGES] {
                [$((stringify!($stage), self.$stage)),*]
            }
        }
    };
}

with_start_stages!(start_timings! {});
