//! Counters, latency histograms and device busy meters for the engine, and their snapshot.
//!
//! Every figure is declared once, in the figures table (`figures.rs`); the snapshot types,
//! the recorders, the Prometheus text and the C and Go views are derived from it.
//!
//! Everything here is recorded with relaxed atomics and no lock, because it is recorded on the
//! hot path (a device worker between two partitions) where the engine promises to take no
//! lock a finalizer or the trimmer can hold. [`StatsSnapshot`] is plain data: flat `u64`
//! counts and nanoseconds, which map one to one onto the `cuzk_get_stats()` C struct.
//! [`StatsSnapshot::prometheus`] renders it in the Prometheus text exposition format.
//!
//! - `figures.rs`: the table; `declare.rs`: what an entry means and the macro that reads it.
//! - `histogram.rs`, `busy.rs`: the recorders that are more than an atomic.
//! - `recorder.rs`, `snapshot.rs`: the hand-written methods of [`Stats`] and the snapshots.
//! - `prometheus.rs`: the text, rendered from [`FIGURES`].
//! - `codegen.rs` (tests only): writes and checks `src/ffi/stats_layout.rs` and
//!   `go/stats_gen.go` from [`FIGURES`].

mod busy;
#[cfg(test)]
mod codegen;
pub(crate) mod declare;
mod figures;
mod histogram;
pub(crate) mod prometheus;
mod recorder;
mod snapshot;

pub use busy::{BusyMeter, BUSY_WINDOW_SECS};
pub use declare::{Figure, Metric, MetricKind, Shape};
pub use figures::{
    DeviceStatsSnapshot, Gauges, KindStatsSnapshot, StageHistograms, Stats, StatsSnapshot, FIGURES,
};
pub use histogram::{Histogram, HistogramSnapshot};
pub use prometheus::{Sample, Value};

/// The most devices a snapshot reports individually (the C struct has a fixed array).
pub const MAX_DEVICES: usize = 16;

/// Number of priority classes, the length of [`StatsSnapshot::queue_depth`].
pub const PRIORITY_CLASSES: usize = 4;

/// [`DeviceStatsSnapshot::gpu_ordinal`] of a device that is not a GPU.
pub const NO_GPU_ORDINAL: u32 = u32::MAX;
