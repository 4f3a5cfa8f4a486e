//! The hand-written methods of the snapshots (their fields come from the figures table).

use super::{DeviceStatsSnapshot, StatsSnapshot};
use crate::groth16::BackendKind;

impl StatsSnapshot {
    /// Fraction of the synthesis pool's capacity (threads × uptime) spent synthesizing.
    pub fn synthesis_busy_fraction(&self) -> f64 {
        ratio(
            self.synthesis_busy_ns,
            self.synthesis_threads.saturating_mul(self.uptime_ns),
        )
    }

    /// The device entries in use.
    pub fn devices(&self) -> &[DeviceStatsSnapshot] {
        &self.devices[..self.device_count as usize]
    }
}

impl DeviceStatsSnapshot {
    /// Busy fraction over the engine's life.
    pub fn busy_fraction(&self) -> f64 {
        ratio(self.busy_ns, self.life_ns)
    }

    /// Busy fraction over the recent window.
    pub fn window_busy_fraction(&self) -> f64 {
        ratio(self.window_busy_ns, self.window_ns)
    }

    /// The Prometheus labels that say what the device is: `backend="cpu"`, or
    /// `backend="cuda",gpu_ordinal="N"`.
    pub fn backend_labels(&self) -> String {
        match self.backend {
            BackendKind::Cpu => "backend=\"cpu\"".to_owned(),
            BackendKind::Cuda => format!("backend=\"cuda\",gpu_ordinal=\"{}\"", self.gpu_ordinal),
        }
    }
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}
