//! The engine's per-partition tracing events: `cuzk::gpu_timing` from the device worker
//! (mutex wait, compute, gap) and `cuzk::fin_timing` from the finalizer (finalize) and the
//! trimmer (trim). A process-wide subscriber records them, so this test has its own binary.

mod engine_common;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use cuzk::engine::Hooks;
use cuzk::{Engine, Priority, RandomnessChoice, TrimPolicy};
use engine_common::*;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

type Captured = Arc<Mutex<Vec<(String, BTreeMap<String, String>)>>>;

struct Capture(Captured);

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0
            .insert(field.name().to_string(), format!("{value:?}"));
    }
}

impl Subscriber for Capture {
    fn enabled(&self, m: &Metadata<'_>) -> bool {
        m.target().starts_with("cuzk::")
    }
    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, e: &Event<'_>) {
        let mut fields = BTreeMap::new();
        e.record(&mut Fields(&mut fields));
        self.0
            .lock()
            .unwrap()
            .push((e.metadata().target().to_string(), fields));
    }
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

#[test]
fn every_partition_reports_its_device_and_finalizer_timings() {
    let captured: Captured = Arc::default();
    tracing::subscriber::set_global_default(Capture(captured.clone())).expect("first subscriber");

    let f = fixture();
    // One worker: the first start has no gap before it, each later one has.
    let mut cfg = config(cuzk::engine::Device::cpu(1), 1);
    cfg.trim = TrimPolicy::Every {
        interval: Duration::from_millis(1),
        min_freed_bytes: 1,
    };
    cfg.hooks = Hooks {
        trim: Some(Arc::new(|| {})),
        ..Hooks::default()
    };
    let engine = Engine::new(cfg).expect("engine");
    let (parts, _) = partitions(1, 3);
    let job = engine
        .prove_start(
            f.srs.clone(),
            parts,
            RandomnessChoice::Random,
            Priority::WindowPost,
        )
        .expect("admitted");
    job.finish(PATIENCE).expect("proved");
    assert!(eventually(|| engine.stats().trims > 0));
    let seq = job.seq().to_string();
    engine.shutdown();

    let events = captured.lock().unwrap().clone();
    let of = |target: &str, key: &str| -> Vec<BTreeMap<String, String>> {
        events
            .iter()
            .filter(|(t, f)| t == target && f.contains_key(key))
            .map(|(_, f)| f.clone())
            .collect()
    };
    let gpu = of("cuzk::gpu_timing", "compute_us");
    assert_eq!(gpu.len(), 3, "{events:?}");
    for (i, e) in gpu.iter().enumerate() {
        assert_eq!(e["job"], seq);
        assert_eq!(e["partition"], i.to_string());
        assert_eq!(e["device"], "cpu0");
        assert_eq!(e["ok"], "true");
        for k in ["mutex_wait_us", "queue_wait_us"] {
            e[k].parse::<u64>().expect("a number of microseconds");
        }
    }
    assert!(
        !gpu[0].contains_key("gap_us"),
        "nothing ran before the first start"
    );
    assert!(gpu[1..].iter().all(|e| e.contains_key("gap_us")));
    let fin = of("cuzk::fin_timing", "finalize_us");
    assert_eq!(fin.len(), 3);
    assert!(fin.iter().all(|e| e["job"] == seq && e["ok"] == "true"));
    assert!(!of("cuzk::fin_timing", "trim_us").is_empty());
}
