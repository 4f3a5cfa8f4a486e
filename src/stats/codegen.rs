//! Writes the C and Go views of the statistics from [`FIGURES`], and checks that the
//! committed ones are current.
//!
//! cbindgen reads Rust source without expanding macros, so the C struct cannot come from
//! `declare_figures!` directly: `src/ffi/stats_layout.rs` is generated here (the `#[repr(C)]`
//! structs with their docs and the conversion from [`StatsSnapshot`](super::StatsSnapshot)),
//! and `include/cuzk.h` from it by `scripts/check-header.sh`. `go/stats_gen.go` is the Go
//! struct and its conversion from the C one. The test below regenerates both in memory and
//! fails when a committed file differs; with `CUZK_REGENERATE=1` it rewrites them.

use std::fmt::Write as _;

use super::{Figure, Shape, FIGURES};

const FFI_PATH: &str = "src/ffi/stats_layout.rs";
const GO_PATH: &str = "go/stats_gen.go";
const REGENERATE: &str = "CUZK_REGENERATE=1 cargo test --lib stats::codegen";

/// Each line of a figure's doc, without the space `///` leaves before it.
fn doc_lines(doc: &str) -> impl Iterator<Item = &str> {
    doc.lines().map(|l| l.strip_prefix(' ').unwrap_or(l))
}

fn rust_doc(o: &mut String, indent: &str, doc: &str) {
    for l in doc_lines(doc) {
        let sep = if l.is_empty() { "" } else { " " };
        let _ = writeln!(o, "{indent}///{sep}{l}");
    }
}

fn go_doc(o: &mut String, indent: &str, doc: &str) {
    for l in doc_lines(doc) {
        let sep = if l.is_empty() { "" } else { " " };
        let _ = writeln!(o, "{indent}//{sep}{l}");
    }
}

fn block_fields(f: &Figure) -> Option<(&'static str, &'static str, &'static [Figure])> {
    match f.shape {
        Shape::DeviceBlock {
            c_type,
            doc,
            fields,
        }
        | Shape::KindBlock {
            c_type,
            doc,
            fields,
        } => Some((c_type, doc, fields)),
        _ => None,
    }
}

/// The Rust type a field has in the C view, and its size in bytes.
fn c_type(shape: &Shape) -> (String, usize) {
    match shape {
        Shape::Count | Shape::Nanos => ("u64".into(), 8),
        Shape::Latency | Shape::Stage { .. } => ("cuzk_latency".into(), 40),
        Shape::ByClass => (
            "[u64; CUZK_PRIORITY_CLASSES]".into(),
            8 * super::PRIORITY_CLASSES,
        ),
        Shape::Backend => ("cuzk_backend".into(), 4),
        Shape::Ordinal => ("u32".into(), 4),
        Shape::PerDevice { .. } => ("[u64; CUZK_MAX_DEVICES]".into(), 8 * super::MAX_DEVICES),
        Shape::DeviceBlock { c_type, fields, .. } => (
            format!("[{c_type}; CUZK_MAX_DEVICES]"),
            super::MAX_DEVICES * fields.iter().map(|f| c_type_of(f).1).sum::<usize>(),
        ),
        Shape::KindBlock { c_type, fields, .. } => (
            format!("[{c_type}; CUZK_JOB_KINDS]"),
            crate::engine::JOB_KINDS * fields.iter().map(|f| c_type_of(f).1).sum::<usize>(),
        ),
        Shape::Stages(_) => unreachable!("the stages are fields of their own"),
    }
}

fn c_type_of(f: &Figure) -> (String, usize) {
    c_type(&f.shape)
}

/// The C fields in order: (figure, extra doc before it), the stages flattened.
fn c_fields() -> Vec<(&'static Figure, &'static str)> {
    let mut v = Vec::new();
    for f in FIGURES {
        match f.shape {
            Shape::Stages(stages) => {
                for (i, s) in stages.iter().enumerate() {
                    v.push((s, if i == 0 { f.doc } else { "" }));
                }
            }
            _ => v.push((f, "")),
        }
    }
    v
}

/// `size_of::<cuzk_stats>()` as the table lays it out (no padding: every field is 8-byte
/// sized and aligned, the blocks' 4-byte fields come in pairs).
fn c_size() -> usize {
    8 + c_fields()
        .iter()
        .map(|(f, _)| c_type_of(f).1)
        .sum::<usize>()
}

/// A block field's value from the Rust snapshot element `d`.
fn c_value(f: &Figure, elem: &str) -> String {
    match f.shape {
        Shape::Backend => format!("{elem}.{}.into()", f.name),
        _ => format!("{elem}.{}", f.name),
    }
}

/// `src/ffi/stats_layout.rs`.
pub(super) fn ffi_source() -> String {
    let mut o = String::new();
    o.push_str(
        "//! `cuzk_stats` and the structs of its arrays, as the C ABI lays them out, and the\n\
         //! conversion from `StatsSnapshot`.\n\
         //!\n\
         //! Generated from the figures table (`src/stats/figures.rs`) by `src/stats/codegen.rs`;\n\
         //! do not edit. Regenerate with `",
    );
    o.push_str(REGENERATE);
    o.push_str(
        "`, then\n\
         //! `scripts/check-header.sh --write`.\n\
         \n\
         use super::engine::{\n    \
         cuzk_backend, cuzk_latency, CUZK_JOB_KINDS, CUZK_MAX_DEVICES, CUZK_PRIORITY_CLASSES,\n\
         };\n\
         use crate::stats::StatsSnapshot;\n",
    );
    let derive = "#[allow(non_camel_case_types)]\n#[repr(C)]\n\
                  #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]\n";
    for f in FIGURES {
        if let Some((c_type, doc, fields)) = block_fields(f) {
            let _ = write!(
                o,
                "\n/// {}\n{derive}pub struct {c_type} {{\n",
                doc.trim_end()
            );
            for s in fields {
                rust_doc(&mut o, "    ", s.doc);
                let _ = writeln!(o, "    pub {}: {},", s.name, c_type_of(s).0);
            }
            o.push_str("}\n");
        }
    }
    let _ = write!(
        o,
        "\n/// Every figure of the engine's statistics: counts, bytes and nanoseconds. The host sets\n\
         /// `size` to `sizeof(cuzk_stats)` before calling `cuzk_get_stats`.\n\
         {derive}pub struct cuzk_stats {{\n    \
         // Fields only ever go at the end (and the structs of the arrays never grow), so that a\n    \
         // host built against an older header, which passes a smaller `size`, still reads every\n    \
         // field it knows at its place.\n    \
         /// In: `sizeof(cuzk_stats)` as the host knows it. Out: the bytes written.\n    \
         pub size: usize,\n"
    );
    for (f, before) in c_fields() {
        rust_doc(&mut o, "    ", before);
        rust_doc(&mut o, "    ", f.doc);
        let _ = writeln!(o, "    pub {}: {},", f.name, c_type_of(f).0);
    }
    o.push_str(
        "}\n\nimpl From<StatsSnapshot> for cuzk_stats {\n    \
         fn from(s: StatsSnapshot) -> Self {\n        \
         cuzk_stats {\n            \
         size: std::mem::size_of::<cuzk_stats>(),\n",
    );
    for (f, _) in c_fields() {
        let n = f.name;
        let value = match f.shape {
            Shape::Count | Shape::Nanos | Shape::ByClass => format!("s.{n}"),
            Shape::Latency | Shape::Stage { .. } => format!("s.{n}.into()"),
            Shape::PerDevice { field, .. } => format!("s.devices.map(|d| d.{field})"),
            Shape::DeviceBlock { c_type, fields, .. } | Shape::KindBlock { c_type, fields, .. } => {
                let (array, elem) = match f.shape {
                    Shape::DeviceBlock { .. } => ("devices", "d"),
                    _ => ("kinds", "k"),
                };
                let mut v = format!("s.{array}.map(|{elem}| {c_type} {{\n");
                for s in fields {
                    let _ = writeln!(v, "                {}: {},", s.name, c_value(s, elem));
                }
                v.push_str("            })");
                v
            }
            Shape::Backend | Shape::Ordinal | Shape::Stages(_) => {
                unreachable!("{n}: not a cuzk_stats field")
            }
        };
        let _ = writeln!(o, "            {n}: {value},");
    }
    o.push_str("        }\n    }\n}\n");
    o.push_str(
        "\nimpl cuzk_stats {\n    \
         /// The start-phase stage figures with their names (Prometheus' `stage` label), in\n    \
         /// order.\n    \
         pub fn start_stages(&self) -> [(&'static str, cuzk_latency); crate::groth16::START_STAGES] {\n        \
         [\n",
    );
    for (f, _) in c_fields() {
        if let Shape::Stage { label } = f.shape {
            let _ = writeln!(o, "            (\"{label}\", self.{}),", f.name);
        }
    }
    o.push_str("        ]\n    }\n}\n");
    o
}

/// The Go type of a field and how to convert it from the C value `c`.
fn go_type(shape: &Shape, c: &str) -> (String, String) {
    match shape {
        Shape::Count => ("uint64".into(), format!("uint64({c})")),
        Shape::Nanos => ("time.Duration".into(), format!("ns({c})")),
        Shape::Latency | Shape::Stage { .. } => ("Latency".into(), format!("latencyFromC(&{c})")),
        Shape::Backend => ("Backend".into(), format!("Backend({c})")),
        Shape::Ordinal => ("int".into(), format!("gpuOrdinal({c})")),
        Shape::PerDevice { unit, .. } => go_type(unit, c),
        _ => unreachable!("no Go scalar for {shape:?}"),
    }
}

/// `go/stats_gen.go`.
pub(super) fn go_source() -> String {
    let mut o = String::new();
    let _ = write!(
        o,
        "// Code generated by src/stats/codegen.rs from the figures table (src/stats/figures.rs).\n\
         // DO NOT EDIT. Regenerate with `{REGENERATE}`.\n\
         \n\
         package cuzk\n\
         \n\
         // #include \"cuzk.h\"\n\
         import \"C\"\n\
         \n\
         import \"time\"\n\
         \n\
         // statsBytes is sizeof(cuzk_stats) as the figures table lays it out. These two lines stop\n\
         // the build when the header and this file disagree (one regenerated without the other).\n\
         const statsBytes = {}\n\
         \n\
         var (\n\
         \t_ [C.sizeof_cuzk_stats - statsBytes]byte\n\
         \t_ [statsBytes - C.sizeof_cuzk_stats]byte\n\
         )\n\
         \n\
         // Stats is every figure of cuzk_stats (include/cuzk.h documents each).\n\
         type Stats struct {{\n",
        c_size()
    );
    let mut stages: &[Figure] = &[];
    for f in FIGURES {
        match f.shape {
            Shape::Count | Shape::Nanos | Shape::Latency if !f.go.is_empty() => {
                go_doc(&mut o, "\t", f.doc);
                let _ = writeln!(o, "\t{} {}", f.go, go_type(&f.shape, "").0);
            }
            Shape::ByClass => {
                go_doc(&mut o, "\t", f.doc);
                let _ = writeln!(o, "\t{} [PriorityClasses]uint64", f.go);
            }
            Shape::Stages(s) => {
                stages = s;
                go_doc(&mut o, "\t", f.doc);
                let _ = writeln!(o, "\t{} StartStages", f.go);
            }
            _ => {}
        }
    }
    o.push_str(
        "\t// Devices holds one entry per device in use.\n\
         \tDevices []DeviceStats\n\
         \t// Kinds holds each proof kind's counts, indexed by JobKind.\n\
         \tKinds [JobKinds]KindStats\n\
         }\n",
    );

    let device_fields = || {
        FIGURES.iter().flat_map(|f| match f.shape {
            Shape::DeviceBlock { fields, .. } => fields.iter().map(|s| (s, f.name, true)).collect(),
            Shape::PerDevice { .. } => vec![(f, f.name, false)],
            _ => vec![],
        })
    };
    o.push_str("\n// DeviceStats are one device's figures.\ntype DeviceStats struct {\n");
    for (s, _, _) in device_fields() {
        go_doc(&mut o, "\t", s.doc);
        if let Shape::Ordinal = s.shape {
            o.push_str("\t// In Go, -1 for a CPU device.\n");
        }
        let _ = writeln!(o, "\t{} {}", s.go, go_type(&s.shape, "").0);
    }
    o.push_str("}\n");

    let kind_block = FIGURES.iter().find_map(|f| match f.shape {
        Shape::KindBlock { fields, .. } => Some((f.name, fields)),
        _ => None,
    });
    let (kinds, kind_fields) = kind_block.expect("the table has a kind block");
    o.push_str("\n// KindStats are one proof kind's counts.\ntype KindStats struct {\n");
    for s in kind_fields {
        go_doc(&mut o, "\t", s.doc);
        let _ = writeln!(o, "\t{} {}", s.go, go_type(&s.shape, "").0);
    }
    o.push_str("}\n");

    o.push_str(
        "\n// StartStages times the stages of the start phase (the device's share of a proof), one\n\
         // observation per start phase. Stages overlap: the transfers are also inside the NTT and\n\
         // MSM stages. Transfers and gathers are zero on a CPU device.\n\
         type StartStages struct {\n",
    );
    for s in stages {
        go_doc(&mut o, "\t", s.doc);
        let _ = writeln!(o, "\t{} Latency", s.go);
    }
    o.push_str(
        "}\n\n\
         // StageLatency is one start-phase stage: its name (the Prometheus stage label) and figures.\n\
         type StageLatency struct {\n\
         \tName    string\n\
         \tLatency Latency\n\
         }\n\
         \n\
         // All lists the stages in cuzk_stats order.\n\
         func (s *StartStages) All() []StageLatency {\n\
         \treturn []StageLatency{\n",
    );
    for s in stages {
        if let Shape::Stage { label } = s.shape {
            let _ = writeln!(o, "\t\t{{\"{label}\", s.{}}},", s.go);
        }
    }
    o.push_str("\t}\n}\n\nfunc statsFromC(c *C.cuzk_stats) Stats {\n\tvar s Stats\n");
    for f in FIGURES {
        match f.shape {
            Shape::Count | Shape::Nanos | Shape::Latency if !f.go.is_empty() => {
                let c = format!("c.{}", f.name);
                let _ = writeln!(o, "\ts.{} = {}", f.go, go_type(&f.shape, &c).1);
            }
            Shape::ByClass => {
                let _ = write!(
                    o,
                    "\tfor i := range s.{g} {{\n\t\ts.{g}[i] = uint64(c.{n}[i])\n\t}}\n",
                    g = f.go,
                    n = f.name
                );
            }
            Shape::Stages(stages) => {
                for st in stages {
                    let c = format!("c.{}", st.name);
                    let _ = writeln!(o, "\ts.{}.{} = {}", f.go, st.go, go_type(&st.shape, &c).1);
                }
            }
            _ => {}
        }
    }
    o.push_str(
        "\tn := int(c.device_count)\n\
         \tif n > MaxDevices {\n\
         \t\tn = MaxDevices\n\
         \t}\n\
         \ts.Devices = make([]DeviceStats, n)\n\
         \tfor i := range s.Devices {\n\
         \t\td := &s.Devices[i]\n",
    );
    for (s, array, in_block) in device_fields() {
        let c = if in_block {
            format!("c.{array}[i].{}", s.name)
        } else {
            format!("c.{array}[i]")
        };
        let _ = writeln!(o, "\t\td.{} = {}", s.go, go_type(&s.shape, &c).1);
    }
    let _ = write!(
        o,
        "\t}}\n\tfor i := range s.Kinds {{\n\t\tk := &s.Kinds[i]\n"
    );
    for s in kind_fields {
        let c = format!("c.{kinds}[i].{}", s.name);
        let _ = writeln!(o, "\t\tk.{} = {}", s.go, go_type(&s.shape, &c).1);
    }
    o.push_str("\t}\n\treturn s\n}\n");
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_views_are_current() {
        let root = env!("CARGO_MANIFEST_DIR");
        let regenerate = std::env::var_os("CUZK_REGENERATE").is_some_and(|v| v == "1");
        let mut stale = Vec::new();
        for (path, text) in [(FFI_PATH, ffi_source()), (GO_PATH, go_source())] {
            let full = format!("{root}/{path}");
            let committed = std::fs::read_to_string(&full).unwrap_or_default();
            if committed == text {
                continue;
            }
            if regenerate {
                std::fs::write(&full, text).unwrap_or_else(|e| panic!("writing {full}: {e}"));
                eprintln!("wrote {path}");
            } else {
                stale.push(path);
            }
        }
        assert!(
            stale.is_empty(),
            "{} out of date with the figures table (src/stats/figures.rs): run `{REGENERATE}`, \
             then `scripts/check-header.sh --write`, and commit them",
            stale.join(" and ")
        );
    }

    #[test]
    fn the_layout_the_generators_assume_is_the_compilers() {
        assert_eq!(
            c_size(),
            std::mem::size_of::<crate::ffi::cuzk_stats>(),
            "cuzk_stats' size (the Go file checks the header's against this figure)"
        );
    }

    #[test]
    fn every_array_figure_has_a_label_and_every_name_is_unique() {
        let mut names = std::collections::HashSet::new();
        let mut metrics = std::collections::HashSet::new();
        for (f, _) in c_fields() {
            assert!(names.insert(f.name), "two C fields named {}", f.name);
        }
        let snapshot = crate::stats::Stats::new(&[crate::groth16::Backend::Cpu])
            .snapshot(crate::stats::Gauges::default());
        let scalar = |f: &Figure| matches!(f.shape, Shape::Count | Shape::Nanos | Shape::Latency);
        let mut all: Vec<(&Figure, bool)> = FIGURES.iter().map(|f| (f, !scalar(f))).collect();
        let in_blocks = FIGURES
            .iter()
            .filter_map(block_fields)
            .flat_map(|(_, _, f)| f);
        all.extend(in_blocks.map(|f| (f, true)));
        for (f, labelled) in all {
            if let Some(m) = &f.metric {
                assert!(metrics.insert(m.name), "two families named {}", m.name);
                for s in (m.samples)(&snapshot) {
                    assert_eq!(!s.labels.is_empty(), labelled, "{}: {:?}", m.name, s.labels);
                }
            }
        }
    }
}
