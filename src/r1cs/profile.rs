//! Where a witness run's time goes, by namespace: the profile behind "attack the largest
//! parts" of the witness (SHA-256 labeling, Poseidon column hashes, Merkle paths, bit
//! decomposition).
//!
//! A [`WitnessCs`](super::WitnessCs) with a profiler names its namespaces (without one it
//! never even builds their names) and, for every namespace path up to a depth, adds the time
//! between its push and pop and the aux variables allocated inside. Digits in names fold
//! into `#`, so `challenge 17` and `challenge 18` are one row. Times are inclusive: a row
//! contains its children's. Parts a circuit synthesizes in child systems of their own
//! (storage-proofs' PoSt sectors) count in the namespace that extends them.

use std::collections::HashMap;
use std::fmt;
use std::time::{Duration, Instant};

/// One namespace path's share of a witness run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProfileEntry {
    /// Namespace names from the root, `/`-separated, digits folded into `#`.
    pub path: String,
    /// Time inside it (children included), over every time it was entered.
    pub time: Duration,
    /// Times it was entered.
    pub calls: u64,
    /// Aux variables allocated inside it.
    pub aux: u64,
}

/// A witness run's profile: its total time and each namespace path's share.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WitnessProfile {
    /// The whole run (building the circuit excluded).
    pub total: Duration,
    /// Aux variables the run allocated in all.
    pub aux: u64,
    /// Paths in tree order (a parent before its children).
    pub entries: Vec<ProfileEntry>,
}

impl fmt::Display for WitnessProfile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{:>9} {:>6} {:>9} {:>11}  namespace (inclusive; total {:.3} s, {} aux)",
            "ms",
            "share",
            "calls",
            "aux",
            self.total.as_secs_f64(),
            self.aux
        )?;
        for e in &self.entries {
            let depth = e.path.matches('/').count();
            let name = e.path.rsplit('/').next().unwrap_or(&e.path);
            writeln!(
                f,
                "{:>9.1} {:>5.1}% {:>9} {:>11}  {}{}",
                e.time.as_secs_f64() * 1e3,
                100.0 * e.time.as_secs_f64() / self.total.as_secs_f64().max(1e-9),
                e.calls,
                e.aux,
                "  ".repeat(depth),
                name
            )?;
        }
        Ok(())
    }
}

/// The namespace timer a profiling [`WitnessCs`](super::WitnessCs) carries.
#[derive(Debug)]
pub(crate) struct Profiler {
    depth: usize,
    /// Open namespaces; `None` beyond the depth (they fold into their ancestor's row).
    stack: Vec<Option<(String, Instant, usize)>>,
    rows: HashMap<String, (Duration, u64, u64)>,
}

impl Profiler {
    pub(crate) fn new(depth: usize) -> Self {
        Profiler {
            depth,
            stack: Vec::new(),
            rows: HashMap::new(),
        }
    }

    pub(crate) fn push(&mut self, name: String, aux_now: usize) {
        if self.stack.len() >= self.depth {
            self.stack.push(None);
            return;
        }
        let parent = self.stack.iter().rev().flatten().next().map(|(p, ..)| p);
        let name = fold_digits(&name);
        let path = match parent {
            Some(p) => format!("{p}/{name}"),
            None => name,
        };
        self.stack.push(Some((path, Instant::now(), aux_now)));
    }

    pub(crate) fn pop(&mut self, aux_now: usize) {
        if let Some(Some((path, at, aux))) = self.stack.pop() {
            let row = self.rows.entry(path).or_default();
            row.0 += at.elapsed();
            row.1 += 1;
            row.2 += (aux_now - aux) as u64;
        }
    }

    pub(crate) fn finish(self, total: Duration, aux: usize) -> WitnessProfile {
        let mut entries: Vec<ProfileEntry> = self
            .rows
            .into_iter()
            .map(|(path, (time, calls, aux))| ProfileEntry {
                path,
                time,
                calls,
                aux,
            })
            .collect();
        // Tree order, and the heavier sibling first.
        let time_of: HashMap<String, Duration> =
            entries.iter().map(|e| (e.path.clone(), e.time)).collect();
        let key = |e: &ProfileEntry| -> Vec<(std::cmp::Reverse<Duration>, String)> {
            let parts: Vec<&str> = e.path.split('/').collect();
            (1..=parts.len())
                .map(|n| {
                    let p = parts[..n].join("/");
                    (std::cmp::Reverse(time_of[&p]), p)
                })
                .collect()
        };
        entries.sort_by_cached_key(key);
        WitnessProfile {
            total,
            aux: aux as u64,
            entries,
        }
    }
}

/// `challenge 17 parents 3` → `challenge # parents #`.
fn fold_digits(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut in_digits = false;
    for c in name.chars() {
        if c.is_ascii_digit() {
            if !in_digits {
                out.push('#');
            }
            in_digits = true;
        } else {
            out.push(c);
            in_digits = false;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folds_digits_nests_paths_and_counts_aux() {
        assert_eq!(
            fold_digits("challenge 17 parent_3x"),
            "challenge # parent_#x"
        );
        let mut p = Profiler::new(2);
        for i in 0..3 {
            p.push(format!("challenge {i}"), 10 * i);
            p.push("hash".into(), 10 * i);
            p.push("deep".into(), 10 * i);
            p.pop(10 * i + 2);
            p.pop(10 * i + 5);
            p.pop(10 * i + 8);
        }
        let prof = p.finish(Duration::from_secs(1), 30);
        let rows: Vec<(&str, u64, u64)> = prof
            .entries
            .iter()
            .map(|e| (e.path.as_str(), e.calls, e.aux))
            .collect();
        assert_eq!(
            rows,
            vec![("challenge #", 3, 24), ("challenge #/hash", 3, 15)],
            "the third level folds into the second"
        );
        assert!(prof.to_string().contains("challenge #"));
    }
}
