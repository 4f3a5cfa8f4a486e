//! The Prometheus text exposition format (0.0.4), rendered from [`FIGURES`]: each figure's
//! family, in the table's order, with no per-figure code here.

use std::fmt::Write as _;

use super::{
    DeviceStatsSnapshot, Figure, HistogramSnapshot, KindStatsSnapshot, MetricKind, Shape,
    StatsSnapshot, FIGURES, PRIORITY_CLASSES,
};
use crate::engine::JobKind;

/// One sample of a family: its labels (`name="value",...`, without braces) and value.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    /// The labels, empty for a scalar.
    pub labels: String,
    /// The value.
    pub value: Value,
}

/// A sample's value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    /// A counter's or a gauge's.
    Number(f64),
    /// A summary's, in nanoseconds (rendered in seconds).
    Summary(HistogramSnapshot),
}

/// What a per-device metric's value function gives: a value, or labels beyond `device`
/// and a value.
pub struct Measure {
    labels: String,
    value: f64,
}

impl From<f64> for Measure {
    fn from(value: f64) -> Self {
        Measure {
            labels: String::new(),
            value,
        }
    }
}

impl From<(String, f64)> for Measure {
    fn from((labels, value): (String, f64)) -> Self {
        Measure { labels, value }
    }
}

const CLASS_LABELS: [&str; PRIORITY_CLASSES] =
    ["winning_post", "window_post", "porep_snap", "other"];

pub(crate) fn secs(ns: u64) -> f64 {
    ns as f64 / 1e9
}

pub(crate) fn value(s: &StatsSnapshot, f: impl Fn(&StatsSnapshot) -> f64) -> f64 {
    f(s)
}

pub(crate) fn number(v: f64) -> Vec<Sample> {
    vec![Sample {
        labels: String::new(),
        value: Value::Number(v),
    }]
}

pub(crate) fn summary(h: HistogramSnapshot) -> Vec<Sample> {
    vec![Sample {
        labels: String::new(),
        value: Value::Summary(h),
    }]
}

pub(crate) fn by_class(label: &str, v: [u64; PRIORITY_CLASSES]) -> Vec<Sample> {
    CLASS_LABELS
        .iter()
        .zip(v)
        .map(|(c, v)| Sample {
            labels: format!("{label}=\"{c}\""),
            value: Value::Number(v as f64),
        })
        .collect()
}

pub(crate) fn per_device<M: Into<Measure>>(
    s: &StatsSnapshot,
    label: &str,
    f: impl Fn(&DeviceStatsSnapshot) -> M,
) -> Vec<Sample> {
    s.devices()
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let m = f(d).into();
            let sep = if m.labels.is_empty() { "" } else { "," };
            Sample {
                labels: format!("{label}=\"{i}\"{sep}{}", m.labels),
                value: Value::Number(m.value),
            }
        })
        .collect()
}

pub(crate) fn per_kind(
    s: &StatsSnapshot,
    label: &str,
    f: impl Fn(&KindStatsSnapshot) -> f64,
) -> Vec<Sample> {
    JobKind::ALL
        .iter()
        .zip(&s.kinds)
        .map(|(k, ks)| Sample {
            labels: format!("{label}=\"{}\"", k.label()),
            value: Value::Number(f(ks)),
        })
        .collect()
}

pub(crate) fn stages(label: &str, s: &StatsSnapshot) -> Vec<Sample> {
    s.start_stages()
        .iter()
        .map(|(stage, h)| Sample {
            labels: format!("{label}=\"{stage}\""),
            value: Value::Summary(*h),
        })
        .collect()
}

impl StatsSnapshot {
    /// The snapshot in the Prometheus text exposition format (version 0.0.4), one family per
    /// figure of [`FIGURES`] that has one. Histograms are summaries (quantiles 0.5 and 0.99,
    /// `_sum`, `_count`) in seconds, each with a `_max_seconds` gauge beside it.
    pub fn prometheus(&self) -> String {
        let mut o = String::new();
        for f in FIGURES {
            render(&mut o, f, self);
        }
        o
    }
}

fn render(o: &mut String, f: &Figure, s: &StatsSnapshot) {
    if let Some(m) = &f.metric {
        let samples = (m.samples)(s);
        family(o, m.name, m.kind.name(), m.help);
        let braces = |labels: &str| {
            if labels.is_empty() {
                String::new()
            } else {
                format!("{{{labels}}}")
            }
        };
        let with = |labels: &str, more: &str| {
            if labels.is_empty() {
                format!("{{{more}}}")
            } else {
                format!("{{{labels},{more}}}")
            }
        };
        let name = m.name;
        for Sample { labels, value } in &samples {
            match *value {
                Value::Number(v) => line(o, name, &braces(labels), v),
                Value::Summary(h) => {
                    line(o, name, &with(labels, "quantile=\"0.5\""), secs(h.p50_ns));
                    line(o, name, &with(labels, "quantile=\"0.99\""), secs(h.p99_ns));
                    line(o, &format!("{name}_sum"), &braces(labels), secs(h.sum_ns));
                    line(o, &format!("{name}_count"), &braces(labels), h.count as f64);
                }
            }
        }
        if m.kind == MetricKind::Summary {
            let max = format!("{}_max_seconds", name.trim_end_matches("_seconds"));
            family(
                o,
                &max,
                "gauge",
                &format!("Largest observation of cuzk_{name}."),
            );
            for Sample { labels, value } in &samples {
                if let Value::Summary(h) = value {
                    line(o, &max, &braces(labels), secs(h.max_ns));
                }
            }
        }
    }
    if let Shape::DeviceBlock { fields, .. } | Shape::KindBlock { fields, .. } = f.shape {
        for f in fields {
            render(o, f, s);
        }
    }
}

fn family(o: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(o, "# HELP cuzk_{name} {help}");
    let _ = writeln!(o, "# TYPE cuzk_{name} {kind}");
}

fn line(o: &mut String, name: &str, labels: &str, v: f64) {
    let _ = writeln!(o, "cuzk_{name}{labels} {v}");
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::Ordering::Relaxed;
    use std::time::Duration;

    use crate::groth16::{Backend, BackendKind, StartTimings};
    use crate::stats::{Gauges, Stats, NO_GPU_ORDINAL};

    use super::*;

    #[test]
    fn prometheus_has_help_type_and_quantiles() {
        let stats = Stats::new(&[Backend::Cpu, Backend::Cuda { ordinal: 3 }]);
        stats.mutex_hold.record_ns(2_000_000);
        stats.jobs_admitted.fetch_add(3, Relaxed);
        stats.stages.record(&StartTimings {
            msm_l: Duration::from_millis(3),
            host_to_device: Duration::from_millis(1),
            ..StartTimings::default()
        });
        stats.finalize_b_g2.record_ns(5);
        stats.jobs_by_kind[JobKind::WinningPost.index()].fetch_add(2, Relaxed);
        let snap = stats.snapshot(Gauges::default());
        assert_eq!(snap.kinds[JobKind::WinningPost.index()].jobs_admitted, 2);
        assert_eq!(snap.start_msm_l.sum_ns, 3_000_000);
        assert_eq!(snap.start_host_to_device.sum_ns, 1_000_000);
        assert_eq!(
            snap.start_stages().map(|(_, h)| h.count),
            [1; crate::groth16::START_STAGES],
            "zero stages are observations too"
        );
        let d = snap.devices();
        assert_eq!(
            (d[0].backend, d[0].gpu_ordinal),
            (BackendKind::Cpu, NO_GPU_ORDINAL)
        );
        assert_eq!((d[1].backend, d[1].gpu_ordinal), (BackendKind::Cuda, 3));
        let text = snap.prometheus();
        assert!(text.contains("# TYPE cuzk_start_stage_seconds summary"));
        assert!(text.contains("cuzk_start_stage_seconds_sum{stage=\"msm_l\"} 0.003"));
        assert!(text.contains("cuzk_start_stage_seconds_count{stage=\"device_to_host\"} 1"));
        assert!(text.contains("cuzk_start_stage_max_seconds{stage=\"host_to_device\"} 0.001"));
        assert!(text.contains("cuzk_finalize_b_g2_seconds_count 1"));
        assert!(text.contains("cuzk_device_info{device=\"0\",backend=\"cpu\"} 1"));
        assert!(
            text.contains("cuzk_device_info{device=\"1\",backend=\"cuda\",gpu_ordinal=\"3\"} 1")
        );
        assert!(text.contains("# TYPE cuzk_device_mutex_hold_seconds summary"));
        assert!(text.contains("cuzk_device_mutex_hold_seconds_count 1"));
        assert!(text.contains("cuzk_device_mutex_hold_seconds{quantile=\"0.99\"}"));
        assert!(text.contains("cuzk_jobs_admitted_total 3"));
        assert!(text.contains("cuzk_device_busy_ratio{device=\"1\"}"));
        assert!(text.contains("cuzk_queue_depth{class=\"winning_post\"} 0"));
        assert!(text.contains("cuzk_kind_jobs_admitted_total{kind=\"winning_post\"} 2"));
        assert!(text.contains("cuzk_kind_jobs_admitted_total{kind=\"porep\"} 0"));
        assert!(text.contains("# TYPE cuzk_synthesis_seconds summary"));
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            let (name, value) = line.rsplit_once(' ').expect("name value");
            assert!(name.starts_with("cuzk_"), "{line}");
            value.parse::<f64>().expect("numeric value");
        }
    }
}
