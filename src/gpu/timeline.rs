//! The device's own record of when its kernels ran.
//!
//! "Busy" in the engine's stats used to mean the device mutex being held, which also counts
//! the host's work between launches (gathers, staging copies) and the transfers. Here every
//! kernel launch on the compute stream, and every memset and device-to-device copy there
//! (the driver runs those as kernels too, and its utilization counts them), is bracketed by
//! a pair of timing events, and the sum of the pairs' device-side elapsed times is the time
//! the device had a kernel running. Everything on one stream runs one after another, so the
//! pairs never overlap and their sum is the union.
//!
//! A begin event completes when everything enqueued before it has (a copy, a wait on the copy
//! stream), so a pair measures the kernel alone, plus at most the launch latency when the
//! stream was idle. Events are created once and reused: a start phase launches a few hundred
//! kernels, and recording an event costs the host about a microsecond.

use std::time::Duration;

use cudarc::driver::result;
use cudarc::driver::sys;

use super::driver::check;
use super::{GpuError, KernelTime};

/// Timing event pairs around the kernels launched since the last [`KernelTimeline::take`].
#[derive(Default)]
pub(crate) struct KernelTimeline {
    /// Created on demand and kept: `events[2k]` and `events[2k + 1]` bracket launch k.
    events: Vec<sys::CUevent>,
    /// Events recorded since the last `take` (always even between launches).
    recorded: usize,
}

impl KernelTimeline {
    /// Records the next event of the timeline on `stream`.
    fn record(&mut self, stream: sys::CUstream) -> Result<(), GpuError> {
        if self.recorded == self.events.len() {
            let e = check(
                result::event::create(sys::CUevent_flags::CU_EVENT_DEFAULT),
                "cuEventCreate",
            )?;
            self.events.push(e);
        }
        check(
            unsafe { result::event::record(self.events[self.recorded], stream) },
            "cuEventRecord",
        )?;
        self.recorded += 1;
        Ok(())
    }

    /// Runs `launch` (one kernel launch on `stream`) between two events.
    pub(crate) fn bracket(
        &mut self,
        stream: sys::CUstream,
        launch: impl FnOnce() -> Result<(), GpuError>,
    ) -> Result<(), GpuError> {
        self.record(stream)?;
        let launched = launch();
        // The end event goes in even when the launch failed, so that the pairs stay paired
        // (an unlaunched kernel's pair measures nothing).
        let ended = self.record(stream);
        launched.and(ended)
    }

    /// The kernel time since the last call, and a fresh timeline. Waits for the last kernel.
    pub(crate) fn take(&mut self) -> Result<KernelTime, GpuError> {
        let n = std::mem::take(&mut self.recorded);
        if n == 0 {
            return Ok(KernelTime::default());
        }
        check(
            unsafe { result::event::synchronize(self.events[n - 1]) },
            "cuEventSynchronize",
        )?;
        let mut ms = 0f64;
        for pair in self.events[..n].chunks_exact(2) {
            let dt = check(
                unsafe { result::event::elapsed(pair[0], pair[1]) },
                "cuEventElapsedTime",
            )?;
            ms += f64::from(dt.max(0.0));
        }
        let span = check(
            unsafe { result::event::elapsed(self.events[0], self.events[n - 1]) },
            "cuEventElapsedTime",
        )?;
        let secs = |ms: f64| Duration::from_secs_f64(ms.max(0.0) / 1e3);
        Ok(KernelTime {
            active: secs(ms),
            span: secs(f64::from(span)),
        })
    }
}

impl Drop for KernelTimeline {
    fn drop(&mut self) {
        for &e in &self.events {
            // SAFETY: created by cuEventCreate in the context that owns this timeline, which
            // is current when the context drops its fields.
            let _ = unsafe { result::event::destroy(e) };
        }
    }
}
