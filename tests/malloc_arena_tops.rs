//! `engine::bound_arena_tops` (`EngineConfig::trim_arena_tops`): glibc keeps the free top of
//! a thread's arena resident through `malloc_trim(0)` once it has raised its trim threshold
//! (it does as large blocks are freed); with the thresholds fixed, that memory goes back.
//! One test in its own binary: it changes the process's allocator for good, and it reads
//! the process's resident set, which other tests running beside it would move.

#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[test]
fn a_thread_arenas_free_top_goes_back_once_bounded() {
    use cuzk::engine::{bound_arena_tops, malloc_trim, ARENA_TOP_BYTES};

    const MIB: usize = 1 << 20;

    fn rss() -> usize {
        let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
        let kb: usize = status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .expect("VmRSS");
        kb * 1024
    }

    /// 48 MiB in 1 MiB blocks, written and freed on a thread of its own (so in a thread
    /// arena), then a trim.
    fn churn() -> usize {
        std::thread::spawn(|| {
            let blocks: Vec<Vec<u8>> = (0..48).map(|i| vec![i as u8 | 1; MIB]).collect();
            let sum: usize = blocks.iter().map(|b| b[MIB / 2] as usize).sum();
            drop(blocks);
            sum
        })
        .join()
        .expect("churn thread")
    }

    // A large block freed raises glibc's mmap threshold to its size and its trim threshold
    // to twice that (60 MiB here), as a proving host's buffers do.
    drop(std::hint::black_box(vec![1u8; 30 * MIB]));
    let base = rss();
    assert!(churn() > 0);
    malloc_trim();
    let kept = rss().saturating_sub(base);
    println!(
        "without bounded tops: {} MiB kept after the trim",
        kept / MIB
    );
    // glibc 2.36 (this project's machines): the arena's 48 MiB free top stays resident.
    assert!(
        kept >= 24 * MIB,
        "glibc gave the arena's free top back by itself ({} MiB kept): this test no longer shows what bound_arena_tops is for",
        kept / MIB
    );

    assert!(bound_arena_tops(), "glibc takes the thresholds");
    assert!(churn() > 0);
    malloc_trim();
    let kept = rss().saturating_sub(base);
    println!("with bounded tops: {} MiB kept after the trim", kept / MIB);
    assert!(
        kept <= 2 * ARENA_TOP_BYTES,
        "{} MiB still resident after the trim with the tops bounded at {} MiB",
        kept / MIB,
        ARENA_TOP_BYTES / MIB
    );
}
