//! What the figures table (`figures.rs`) says about a figure, and the macro that turns the
//! table into code.
//!
//! [`declare_figures!`] reads the table once and generates, from each entry:
//! - the [`StatsSnapshot`](super::StatsSnapshot) field (the per-device ones in
//!   [`DeviceStatsSnapshot`](super::DeviceStatsSnapshot), the per-kind ones in
//!   [`KindStatsSnapshot`](super::KindStatsSnapshot)) and the line of `Stats::snapshot`
//!   that reads it;
//! - the recorder field of [`Stats`](super::Stats) (`= atomic`: an `AtomicU64`, per device
//!   an array of them; `= histogram`: a [`Histogram`](super::Histogram)) or of
//!   [`Gauges`](super::Gauges) (`= gauge`);
//! - its [`Figure`] in [`FIGURES`](super::FIGURES), the runtime description from which the
//!   Prometheus text is rendered and the C (`src/ffi/stats_layout.rs`) and Go
//!   (`go/stats_gen.go`) views are generated (`codegen.rs`).
//!
//! The macro works in two steps because `macro_rules!` cannot filter a list in one pass: the
//! entry arm rewrites every entry into one brace group of a fixed form, then small
//! "munchers" (`@snapshot`, `@recorder`, `@gauges`, `@devices`, `@kinds`) walk the groups,
//! each keeping those it needs, and `@figure` describes each.

use std::time::Instant;

use super::{Gauges, Stats};

/// One figure of the engine's statistics, as the table declares it.
#[derive(Debug)]
pub struct Figure {
    /// The field's name in `cuzk_stats` (and in `StatsSnapshot`, `DeviceStatsSnapshot` or
    /// `KindStatsSnapshot`, except for a [`Shape::PerDevice`] array).
    pub name: &'static str,
    /// The doc text, one line per `///` line of the table (each with its leading space).
    pub doc: &'static str,
    /// The Go field's name; empty where Go has none.
    pub go: &'static str,
    /// What the value is.
    pub shape: Shape,
    /// Its Prometheus family, if it has one.
    pub metric: Option<Metric>,
}

/// What a figure's value is, which decides its Rust, C and Go types.
#[derive(Debug)]
pub enum Shape {
    /// A count or a number of bytes (`u64`).
    Count,
    /// Nanoseconds (`u64`; Go `time.Duration`; Prometheus seconds).
    Nanos,
    /// A latency summary (`HistogramSnapshot`, C `cuzk_latency`, Go `Latency`).
    Latency,
    /// One count per priority class (`[u64; PRIORITY_CLASSES]`).
    ByClass,
    /// A device's backend (`BackendKind`, C `cuzk_backend`, Go `Backend`).
    Backend,
    /// A GPU's driver ordinal (`u32`; Go `int`, -1 for none).
    Ordinal,
    /// The start phase's stages ([`with_start_stages!`](crate::groth16::stages)), each a
    /// [`Shape::Stage`] latency field of its own.
    Stages(&'static [Figure]),
    /// One start-phase stage, named `label` (Prometheus' `stage` label).
    Stage {
        /// The stage's name.
        label: &'static str,
    },
    /// One value per device: an array `[u64; CUZK_MAX_DEVICES]` in C, field `field` of
    /// `DeviceStatsSnapshot` in Rust and of `DeviceStats` in Go.
    PerDevice {
        /// The field of the per-device structs.
        field: &'static str,
        /// [`Shape::Count`] or [`Shape::Nanos`].
        unit: &'static Shape,
    },
    /// An array of per-device C structs `c_type` that never grows (the C ABI fixes its
    /// element size); its fields are fields of `DeviceStatsSnapshot` and Go's `DeviceStats`.
    DeviceBlock {
        /// The C struct.
        c_type: &'static str,
        /// The C struct's doc.
        doc: &'static str,
        /// Its fields.
        fields: &'static [Figure],
    },
    /// The array of per-kind C structs `c_type` (`KindStatsSnapshot`, Go `KindStats`).
    KindBlock {
        /// The C struct.
        c_type: &'static str,
        /// The C struct's doc.
        doc: &'static str,
        /// Its fields.
        fields: &'static [Figure],
    },
}

/// A Prometheus metric type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MetricKind {
    /// Only ever grows.
    Counter,
    /// Goes up and down.
    Gauge,
    /// Quantiles 0.5 and 0.99, `_sum` and `_count` (with a `_max_seconds` gauge beside it).
    Summary,
}

impl MetricKind {
    /// The name the `# TYPE` line gives it.
    pub fn name(self) -> &'static str {
        match self {
            MetricKind::Counter => "counter",
            MetricKind::Gauge => "gauge",
            MetricKind::Summary => "summary",
        }
    }
}

/// A figure's Prometheus family.
#[derive(Debug)]
pub struct Metric {
    /// The name after `cuzk_`.
    pub name: &'static str,
    /// The type.
    pub kind: MetricKind,
    /// The `# HELP` text.
    pub help: &'static str,
    /// The samples of a snapshot, labelled where the figure is an array.
    pub samples: fn(&super::StatsSnapshot) -> Vec<super::prometheus::Sample>,
}

/// Gives a table's `read(...)` closure its argument types.
pub(super) fn read_with<T, F: Fn(&Stats, &Gauges, Instant) -> T>(f: F) -> F {
    f
}

/// Generates the statistics' types from the figures table: see the module doc, and
/// `figures.rs` for the entry syntax.
macro_rules! declare_figures {
    // The entry point: the stage list (from `with_start_stages!`), then the table.
    (
        stages [ $( $(#[doc = $tdoc:literal])* $tstage:ident => $tfield:ident, $tgo:ident; )* ]
        $(
            $(#[doc = $doc:literal])*
            $name:ident : $shape:ident $( ( $($arg:tt)* ) )?
            $( {
                $(
                    $(#[doc = $sdoc:literal])*
                    $sname:ident : $sunit:ident $( = $srec:ident )? => $sgo:ident
                    $( , $smk:ident $smn:literal { $sml:ident } $smh:literal $( = $smv:expr )? )?
                ;)*
            } )?
            $( = $src:ident $( ( $($sarg:tt)* ) )? )?
            $( => $go:ident )?
            $( , $mk:ident $mn:literal $( { $ml:ident } )? $mh:literal $( = $mv:expr )? )?
        ;)*
    ) => {
        declare_figures!(@entries
            [ $( { [$($tdoc),*] $tstage $tfield $tgo } )* ]
            $( {
                $shape [ $($($arg)*)? ] name[$name] doc[$($doc),*]
                sub[ $( $( {
                    doc[$($sdoc),*] $sname $sunit rec[$($srec)?] go[$sgo]
                    m[ $( $smk $smn [$sml] $smh [$($smv)?] )? ]
                } )* )? ]
                src[ $( $src [ $($($sarg)*)? ] )? ]
                go[ $($go)? ]
                m[ $( $mk $mn [ $($ml)? ] $mh [ $($mv)? ] )? ]
            } )*
        );
    };

    (@entries $stages:tt $($entry:tt)*) => {
        declare_figures!(@snapshot $stages [] [] $($entry)*);
        declare_figures!(@recorder [] [] $($entry)*);
        declare_figures!(@gauges [] $($entry)*);
        declare_figures!(@devices [] [] $($entry)*);
        declare_figures!(@kinds $($entry)*);
        declare_figures!(@stages $stages);

        /// Every figure, in the table's order, which is `cuzk_stats`' order.
        pub static FIGURES: &[$crate::stats::Figure] =
            &[ $( declare_figures!(@figure $stages $entry) ),* ];
    };

    // StatsSnapshot: a field per scalar figure and per stage.
    (@snapshot $st:tt [$($f:tt)*] [$($r:tt)*]) => {
        /// A copy of the engine's statistics: plain numbers (counts, bytes, nanoseconds,
        /// latency summaries), one field per figure of [`FIGURES`] that is not per device or
        /// per kind.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        #[repr(C)]
        pub struct StatsSnapshot {
            $($f)*
            /// Per device, the first `device_count` entries; the rest are zero.
            pub devices: [$crate::stats::DeviceStatsSnapshot; $crate::stats::MAX_DEVICES],
            /// Per [`JobKind`](crate::engine::JobKind), in `JobKind::ALL` order.
            pub kinds: [$crate::stats::KindStatsSnapshot; $crate::engine::JOB_KINDS],
        }

        impl $crate::stats::Stats {
            /// A copy of every figure as of now (each read on its own, so figures that
            /// change together may be a few events apart while work runs). The gauges are
            /// what the caller passes: the queues keep those counts.
            pub fn snapshot(&self, gauges: $crate::stats::Gauges) -> StatsSnapshot {
                let now = ::std::time::Instant::now();
                declare_figures!(@read_all self gauges now [$($r)*])
            }
        }
    };
    (@snapshot $st:tt $f:tt $r:tt { device_block $($x:tt)* } $($rest:tt)*) => {
        declare_figures!(@snapshot $st $f $r $($rest)*);
    };
    (@snapshot $st:tt $f:tt $r:tt { kind_block $($x:tt)* } $($rest:tt)*) => {
        declare_figures!(@snapshot $st $f $r $($rest)*);
    };
    (@snapshot $st:tt $f:tt $r:tt { per_device $($x:tt)* } $($rest:tt)*) => {
        declare_figures!(@snapshot $st $f $r $($rest)*);
    };
    (@snapshot [$( { [$($td:literal),*] $ts:ident $tf:ident $tg:ident } )*] [$($f:tt)*] [$($r:tt)*]
        { stages $($x:tt)* } $($rest:tt)*) => {
        declare_figures!(@snapshot [$( { [$($td),*] $ts $tf $tg } )*]
            [$($f)* $( $(#[doc = $td])* pub $tf: $crate::stats::HistogramSnapshot, )*]
            [$($r)* $( { $tf stage [$ts] } )*]
            $($rest)*);
    };
    (@snapshot $st:tt [$($f:tt)*] [$($r:tt)*]
        { $shape:ident [] name[$name:ident] doc[$($doc:literal),*] sub[] src[$src:ident [$($sarg:tt)*]] $($x:tt)* }
        $($rest:tt)*) => {
        declare_figures!(@snapshot $st
            [$($f)* $(#[doc = $doc])* pub $name: declare_figures!(@type $shape),]
            [$($r)* { $name $src [$($sarg)*] }]
            $($rest)*);
    };
    (@snapshot $st:tt $f:tt $r:tt { $shape:ident $args:tt name[$name:ident] $($x:tt)* } $($rest:tt)*) => {
        compile_error!(concat!(
            "figure `", stringify!($name), "`: a `", stringify!($shape),
            "` figure needs its source: `= atomic`, `= histogram`, `= gauge` or `= read(|stats, gauges, now| ...)`"
        ));
    };

    (@read_all $s:tt $g:tt $now:tt [$( { $n:ident $src:ident [$($sarg:tt)*] } )*]) => {
        StatsSnapshot {
            $( $n: declare_figures!(@read $src [$($sarg)*] $s $g $now $n), )*
            devices: $s.device_snapshots($now),
            kinds: $s.kind_snapshots(),
        }
    };
    (@read atomic [] $s:tt $g:tt $now:tt $n:ident) => {
        $s.$n.load(::std::sync::atomic::Ordering::Relaxed)
    };
    (@read histogram [] $s:tt $g:tt $now:tt $n:ident) => { $s.$n.snapshot() };
    (@read gauge [] $s:tt $g:tt $now:tt $n:ident) => { $g.$n };
    (@read read [$f:expr] $s:tt $g:tt $now:tt $n:ident) => {
        $crate::stats::declare::read_with($f)($s, &$g, $now)
    };
    (@read stage [$stage:ident] $s:tt $g:tt $now:tt $n:ident) => { $s.stages.$stage.snapshot() };

    // Stats, the recorder: a field per `= atomic` or `= histogram` figure, and the per-kind
    // counters of the kind block.
    (@recorder [$($f:tt)*] [$($n:ident)*]) => {
        /// The engine's live statistics. Owned by the engine; every field is recorded
        /// lock-free. Besides the fields here, one recorder per figure the table
        /// (`figures.rs`) declares `= atomic` or `= histogram`, named as the figure.
        pub struct Stats {
            pub(crate) epoch: ::std::time::Instant,
            /// The stages of each successful start phase
            /// ([`StartTimings`](crate::groth16::StartTimings)).
            pub stages: $crate::stats::StageHistograms,
            pub(crate) devices: Vec<$crate::stats::BusyMeter>,
            pub(crate) backends: Vec<$crate::groth16::Backend>,
            pub(crate) memory_budget: ::std::sync::atomic::AtomicU64,
            pub(crate) memory_reserved: ::std::sync::atomic::AtomicU64,
            pub(crate) memory_peak: ::std::sync::atomic::AtomicU64,
            $($f)*
        }

        impl Stats {
            /// Statistics for an engine whose devices run on `devices`, in device order,
            /// starting now.
            pub fn new(devices: &[$crate::groth16::Backend]) -> Self {
                let epoch = ::std::time::Instant::now();
                Stats {
                    epoch,
                    stages: Default::default(),
                    devices: devices.iter().map(|_| $crate::stats::BusyMeter::new(epoch)).collect(),
                    backends: devices.to_vec(),
                    memory_budget: Default::default(),
                    memory_reserved: Default::default(),
                    memory_peak: Default::default(),
                    $( $n: Default::default(), )*
                }
            }
        }
    };
    (@recorder [$($f:tt)*] [$($n:ident)*]
        { $shape:ident $args:tt name[$name:ident] doc[$($doc:literal),*] sub[] src[atomic []] $($x:tt)* }
        $($rest:tt)*) => {
        declare_figures!(@recorder
            [$($f)* $(#[doc = $doc])* pub $name: declare_figures!(@atomic $shape),]
            [$($n)* $name]
            $($rest)*);
    };
    (@recorder [$($f:tt)*] [$($n:ident)*]
        { $shape:ident $args:tt name[$name:ident] doc[$($doc:literal),*] sub[] src[histogram []] $($x:tt)* }
        $($rest:tt)*) => {
        declare_figures!(@recorder
            [$($f)* $(#[doc = $doc])* pub $name: $crate::stats::Histogram,]
            [$($n)* $name]
            $($rest)*);
    };
    (@recorder [$($f:tt)*] [$($n:ident)*]
        { kind_block $args:tt name[$name:ident] doc $doc:tt
          sub[$( { doc[$($sd:literal),*] $sn:ident $su:ident rec[$sr:ident] $($sx:tt)* } )*] $($x:tt)* }
        $($rest:tt)*) => {
        declare_figures!(@recorder
            [$($f)* $( $(#[doc = $sd])* #[doc = ""] #[doc = " By kind."]
                pub $sr: [::std::sync::atomic::AtomicU64; $crate::engine::JOB_KINDS], )*]
            [$($n)* $($sr)*]
            $($rest)*);
    };
    (@recorder $f:tt $n:tt $skip:tt $($rest:tt)*) => {
        declare_figures!(@recorder $f $n $($rest)*);
    };

    // Gauges: a field per `= gauge` figure.
    (@gauges [$($f:tt)*]) => {
        /// The figures the queues keep themselves, passed to
        /// [`Stats::snapshot`](crate::stats::Stats::snapshot).
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
        pub struct Gauges {
            $($f)*
        }
    };
    (@gauges [$($f:tt)*]
        { $shape:ident [] name[$name:ident] doc[$($doc:literal),*] sub[] src[gauge []] $($x:tt)* }
        $($rest:tt)*) => {
        declare_figures!(@gauges [$($f)* $(#[doc = $doc])* pub $name: declare_figures!(@type $shape),] $($rest)*);
    };
    (@gauges $f:tt $skip:tt $($rest:tt)*) => { declare_figures!(@gauges $f $($rest)*); };

    // DeviceStatsSnapshot: the fields of every device block, and each per-device array.
    (@devices [$($f:tt)*] [$( { $field:ident $name:ident } )*]) => {
        /// One device's figures: the fields of every per-device figure of [`FIGURES`].
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
        #[repr(C)]
        pub struct DeviceStatsSnapshot {
            $($f)*
        }

        impl Stats {
            /// Every device's figures: the device blocks' from
            /// `Stats::device_block_snapshots`, the per-device arrays' from their recorders.
            fn device_snapshots(
                &self,
                now: ::std::time::Instant,
            ) -> [DeviceStatsSnapshot; $crate::stats::MAX_DEVICES] {
                #[allow(unused_mut)]
                let mut devices = self.device_block_snapshots(now);
                #[allow(unused_variables)]
                for (i, d) in devices.iter_mut().enumerate().take(self.devices.len()) {
                    $( d.$field = self.$name[i].load(::std::sync::atomic::Ordering::Relaxed); )*
                }
                devices
            }
        }
    };
    (@devices [$($f:tt)*] $r:tt
        { device_block $args:tt name $name:tt doc $doc:tt
          sub[$( { doc[$($sd:literal),*] $sn:ident $su:ident $($sx:tt)* } )*] $($x:tt)* }
        $($rest:tt)*) => {
        declare_figures!(@devices
            [$($f)* $( $(#[doc = $sd])* pub $sn: declare_figures!(@type $su), )*]
            $r
            $($rest)*);
    };
    (@devices [$($f:tt)*] [$($r:tt)*]
        { per_device [$field:ident : $unit:ident] name[$name:ident] doc[$($doc:literal),*] sub[] src[atomic []] $($x:tt)* }
        $($rest:tt)*) => {
        declare_figures!(@devices
            [$($f)* $(#[doc = $doc])* pub $field: declare_figures!(@type $unit),]
            [$($r)* { $field $name }]
            $($rest)*);
    };
    (@devices $f:tt $r:tt { per_device $args:tt name[$name:ident] $($x:tt)* } $($rest:tt)*) => {
        compile_error!(concat!(
            "per-device figure `", stringify!($name),
            "`: write `per_device(field: count|nanos) = atomic`"
        ));
    };
    (@devices $f:tt $r:tt $skip:tt $($rest:tt)*) => { declare_figures!(@devices $f $r $($rest)*); };

    // KindStatsSnapshot: the fields of the kind block.
    (@kinds) => {};
    (@kinds
        { kind_block $args:tt name $name:tt doc $doc:tt
          sub[$( { doc[$($sd:literal),*] $sn:ident $su:ident rec[$sr:ident] $($sx:tt)* } )*] $($x:tt)* }
        $($rest:tt)*) => {
        /// One [`JobKind`](crate::engine::JobKind)'s counts.
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
        #[repr(C)]
        pub struct KindStatsSnapshot {
            $( $(#[doc = $sd])* pub $sn: declare_figures!(@type $su), )*
        }

        impl Stats {
            fn kind_snapshots(&self) -> [KindStatsSnapshot; $crate::engine::JOB_KINDS] {
                $crate::engine::JobKind::ALL.map(|k| KindStatsSnapshot {
                    $( $sn: self.$sr[k.index()].load(::std::sync::atomic::Ordering::Relaxed), )*
                })
            }
        }

        declare_figures!(@kinds $($rest)*);
    };
    (@kinds $skip:tt $($rest:tt)*) => { declare_figures!(@kinds $($rest)*); };

    // The stage histograms and their snapshot accessor.
    (@stages [$( { [$($td:literal),*] $ts:ident $tf:ident $tg:ident } )*]) => {
        /// One histogram per start-phase stage, each recorded once per successful start
        /// phase (zero where the backend has no such stage, e.g. transfers on the CPU).
        #[derive(Default)]
        pub struct StageHistograms {
            $( $(#[doc = $td])* pub $ts: $crate::stats::Histogram, )*
        }

        impl StageHistograms {
            /// Records one start phase's stages.
            pub fn record(&self, t: &$crate::groth16::StartTimings) {
                $( self.$ts.record(t.$ts); )*
            }
        }

        impl StatsSnapshot {
            /// The start-phase stage histograms with their names (Prometheus' `stage` label).
            pub fn start_stages(
                &self,
            ) -> [(&'static str, $crate::stats::HistogramSnapshot); $crate::groth16::START_STAGES] {
                [$( (stringify!($ts), self.$tf) ),*]
            }
        }
    };

    // The runtime description of each entry.
    (@figure [$( { [$($td:literal),*] $ts:ident $tf:ident $tg:ident } )*]
        { stages [] name[$name:ident] doc[$($doc:literal),*] sub[] src[] go[$($go:ident)?] m[$($m:tt)*] }) => {
        $crate::stats::Figure {
            name: stringify!($name),
            doc: declare_figures!(@doc $($doc),*),
            go: declare_figures!(@go $($go)?),
            shape: $crate::stats::Shape::Stages(&[$(
                $crate::stats::Figure {
                    name: stringify!($tf),
                    doc: declare_figures!(@doc $($td),*),
                    go: stringify!($tg),
                    shape: $crate::stats::Shape::Stage { label: stringify!($ts) },
                    metric: None,
                }
            ),*]),
            metric: declare_figures!(@metric {stages} $($m)*),
        }
    };
    (@figure $st:tt
        { $block:ident [$cty:ident, $tydoc:literal] name[$name:ident] doc[$($doc:literal),*]
          sub[$( { doc[$($sd:literal),*] $sn:ident $su:ident rec $sr:tt go[$sg:ident] m[$($sm:tt)*] } )*]
          src[] go[] m[] }) => {
        $crate::stats::Figure {
            name: stringify!($name),
            doc: declare_figures!(@doc $($doc),*),
            go: "",
            shape: declare_figures!(@block $block stringify!($cty), $tydoc, &[$(
                $crate::stats::Figure {
                    name: stringify!($sn),
                    doc: declare_figures!(@doc $($sd),*),
                    go: stringify!($sg),
                    shape: declare_figures!(@shape $su),
                    metric: declare_figures!(@metric {$block $su $sn} $($sm)*),
                }
            ),*]),
            metric: None,
        }
    };
    (@figure $st:tt
        { per_device [$field:ident : $unit:ident] name[$name:ident] doc[$($doc:literal),*] sub[] src $src:tt
          go[$($go:ident)?] m[$($m:tt)*] }) => {
        $crate::stats::Figure {
            name: stringify!($name),
            doc: declare_figures!(@doc $($doc),*),
            go: declare_figures!(@go $($go)?),
            shape: $crate::stats::Shape::PerDevice {
                field: stringify!($field),
                unit: &declare_figures!(@shape $unit),
            },
            metric: declare_figures!(@metric {device_block $unit $field} $($m)*),
        }
    };
    (@figure $st:tt
        { $shape:ident [] name[$name:ident] doc[$($doc:literal),*] sub[] src $src:tt go[$($go:ident)?] m[$($m:tt)*] }) => {
        $crate::stats::Figure {
            name: stringify!($name),
            doc: declare_figures!(@doc $($doc),*),
            go: declare_figures!(@go $($go)?),
            shape: declare_figures!(@shape $shape),
            metric: declare_figures!(@metric {$shape $name} $($m)*),
        }
    };

    (@doc $($d:literal),*) => { concat!($($d, "\n"),*) };
    (@go) => { "" };
    (@go $g:ident) => { stringify!($g) };
    (@block device_block $c:expr, $d:expr, $f:expr) => {
        $crate::stats::Shape::DeviceBlock { c_type: $c, doc: $d, fields: $f }
    };
    (@block kind_block $c:expr, $d:expr, $f:expr) => {
        $crate::stats::Shape::KindBlock { c_type: $c, doc: $d, fields: $f }
    };

    (@metric $how:tt) => { None };
    (@metric $how:tt $mk:ident $mn:literal [$($ml:ident)?] $mh:literal [$($mv:expr)?]) => {
        Some($crate::stats::Metric {
            name: $mn,
            kind: declare_figures!(@kind $mk),
            help: $mh,
            samples: declare_figures!(@samples $how [$($ml)?] [$($mv)?]),
        })
    };

    (@samples {count $n:ident} [] []) => {
        |s| $crate::stats::prometheus::number(declare_figures!(@value count s.$n))
    };
    (@samples {nanos $n:ident} [] []) => {
        |s| $crate::stats::prometheus::number(declare_figures!(@value nanos s.$n))
    };
    (@samples {$unit:ident $n:ident} [] [$v:expr]) => {
        |s| $crate::stats::prometheus::number($crate::stats::prometheus::value(s, $v))
    };
    (@samples {latency $n:ident} [] []) => { |s| $crate::stats::prometheus::summary(s.$n) };
    (@samples {by_class $n:ident} [$l:ident] []) => {
        |s| $crate::stats::prometheus::by_class(stringify!($l), s.$n)
    };
    (@samples {stages} [$l:ident] []) => {
        |s| $crate::stats::prometheus::stages(stringify!($l), s)
    };
    (@samples {device_block $unit:ident $f:ident} [$l:ident] []) => {
        |s| $crate::stats::prometheus::per_device(s, stringify!($l), |d| declare_figures!(@value $unit d.$f))
    };
    (@samples {device_block $unit:ident $f:ident} [$l:ident] [$v:expr]) => {
        |s| $crate::stats::prometheus::per_device(s, stringify!($l), $v)
    };
    (@samples {kind_block $unit:ident $f:ident} [$l:ident] []) => {
        |s| $crate::stats::prometheus::per_kind(s, stringify!($l), |k| declare_figures!(@value $unit k.$f))
    };
    (@samples $how:tt $l:tt $v:tt) => {
        compile_error!(concat!(
            "metric of ", stringify!($how), ": an array needs its label (`{device}`, `{class}`, ",
            "`{kind}`, `{stage}`), a scalar none, and a backend or ordinal a value `= |d| ...`"
        ))
    };
    (@value count $($e:tt)*) => { ($($e)*) as f64 };
    (@value nanos $($e:tt)*) => { $crate::stats::prometheus::secs($($e)*) };

    (@kind counter) => { $crate::stats::MetricKind::Counter };
    (@kind gauge) => { $crate::stats::MetricKind::Gauge };
    (@kind summary) => { $crate::stats::MetricKind::Summary };

    (@type count) => { u64 };
    (@type nanos) => { u64 };
    (@type latency) => { $crate::stats::HistogramSnapshot };
    (@type by_class) => { [u64; $crate::stats::PRIORITY_CLASSES] };
    (@type backend) => { $crate::groth16::BackendKind };
    (@type ordinal) => { u32 };

    (@atomic count) => { ::std::sync::atomic::AtomicU64 };
    (@atomic nanos) => { ::std::sync::atomic::AtomicU64 };
    (@atomic per_device) => { [::std::sync::atomic::AtomicU64; $crate::stats::MAX_DEVICES] };

    (@shape count) => { $crate::stats::Shape::Count };
    (@shape nanos) => { $crate::stats::Shape::Nanos };
    (@shape latency) => { $crate::stats::Shape::Latency };
    (@shape by_class) => { $crate::stats::Shape::ByClass };
    (@shape backend) => { $crate::stats::Shape::Backend };
    (@shape ordinal) => { $crate::stats::Shape::Ordinal };
}
pub(super) use declare_figures;
