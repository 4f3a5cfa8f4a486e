//! The hand-written methods of [`Stats`], the recorder (its fields come from the figures
//! table: `declare_figures!`).

use std::sync::atomic::Ordering::Relaxed;
use std::time::Instant;

use super::{BusyMeter, DeviceStatsSnapshot, Stats, MAX_DEVICES, NO_GPU_ORDINAL};

impl Stats {
    /// Device `i`'s busy meter.
    pub fn device(&self, i: usize) -> &BusyMeter {
        &self.devices[i]
    }

    /// Adds `ns` nanoseconds to the time device `device` had kernels running (its
    /// `kernel_active_ns`). Devices past [`MAX_DEVICES`] are not reported, so not recorded.
    pub fn record_kernel_active(&self, device: usize, ns: u64) {
        if let Some(a) = self.device_kernel_active_ns.get(device) {
            a.fetch_add(ns, Relaxed);
        }
    }

    /// Counts a device fault on device `device` (its `faults`).
    pub fn record_device_fault(&self, device: usize) {
        if let Some(a) = self.device_faults.get(device) {
            a.fetch_add(1, Relaxed);
        }
    }

    /// Counts a hang on device `device` (its `hangs`).
    pub fn record_device_hang(&self, device: usize) {
        if let Some(a) = self.device_hangs.get(device) {
            a.fetch_add(1, Relaxed);
        }
    }

    /// One more (`true`) or one fewer partition waiting for device `device`'s mutex (its
    /// `waiting`).
    pub fn record_device_waiting(&self, device: usize, more: bool) {
        if let Some(a) = self.device_waiting.get(device) {
            if more {
                a.fetch_add(1, Relaxed);
            } else {
                a.fetch_sub(1, Relaxed);
            }
        }
    }

    /// The fields of the device blocks (`cuzk_device_stats`, `cuzk_device_backend`): the
    /// busy meters' figures and each device's backend. Zero past the devices in use.
    pub(super) fn device_block_snapshots(
        &self,
        now: Instant,
    ) -> [DeviceStatsSnapshot; MAX_DEVICES] {
        let mut devices = [DeviceStatsSnapshot::default(); MAX_DEVICES];
        for ((d, m), b) in devices.iter_mut().zip(&self.devices).zip(&self.backends) {
            *d = DeviceStatsSnapshot {
                backend: b.kind(),
                gpu_ordinal: b.gpu_ordinal().unwrap_or(NO_GPU_ORDINAL),
                ..m.snapshot(now)
            };
        }
        devices
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::groth16::Backend;
    use crate::stats::Gauges;

    #[test]
    fn kernel_active_time_sums_per_device() {
        let stats = Stats::new(&[Backend::Cuda { ordinal: 0 }, Backend::Cuda { ordinal: 1 }]);
        stats.record_kernel_active(0, 5);
        stats.record_kernel_active(1, 7);
        stats.record_kernel_active(0, 11);
        stats.record_kernel_active(MAX_DEVICES, 1); // not reported: ignored
        let snap = stats.snapshot(Gauges::default());
        let active: Vec<u64> = snap.devices().iter().map(|d| d.kernel_active_ns).collect();
        assert_eq!(active, [16, 7]);
        assert_eq!(snap.devices[2].kernel_active_ns, 0);
        let text = snap.prometheus();
        assert!(text.contains("# TYPE cuzk_device_kernel_active_seconds_total counter"));
        assert!(text.contains("cuzk_device_kernel_active_seconds_total{device=\"0\"} 0.000000016"));
        assert!(text.contains("cuzk_device_kernel_active_seconds_total{device=\"1\"} 0.000000007"));
    }
}
