//! The C ABI as C and C++ hosts see it: builds the host programs in `tests/c/` against
//! `include/cuzk.h` with `-Wall -Wextra -Werror` under AddressSanitizer (LeakSanitizer on),
//! the C one linked to `libcuzk.so`, the C++ one to `libcuzk.a`, and runs them on a fixture
//! written by `cuzk_fixtures`. Each host proves, compares proof bytes with the fixture's,
//! verifies, reads stats and runs its bad-input matrix; any check that fails, any ASAN
//! report and any leak fails the test.
//!
//! The libraries are the ones cargo built for this test run: cargo builds the crate's lib
//! target with all its crate types (rlib, cdylib, staticlib) into `target/<profile>/deps/`,
//! beside this test binary, and copies them up to `target/<profile>/` for `cargo build`.
//! The newer of the two is copied into this run's scratch folder before use, so a build
//! running beside the test (another checkout user, an editor) cannot swap the library out
//! from under a host program.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A private copy of libcuzk.so and libcuzk.a as cargo built them for this run.
fn lib_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let exe = std::env::current_exe().expect("test executable path");
        let deps = exe.parent().expect("test binary in target/<profile>/deps");
        let profile = deps.parent().expect("target/<profile>");
        let modified = |d: &Path| {
            let so = std::fs::metadata(d.join("libcuzk.so")).and_then(|m| m.modified());
            let a = std::fs::metadata(d.join("libcuzk.a"));
            so.ok().filter(|_| a.is_ok())
        };
        let from = [deps, profile]
            .into_iter()
            .filter_map(|d| modified(d).map(|t| (t, d)))
            .max_by_key(|(t, _)| *t)
            .map(|(_, d)| d)
            .unwrap_or_else(|| {
                panic!(
                    "neither {} nor {} holds libcuzk.so and libcuzk.a",
                    deps.display(),
                    profile.display()
                )
            });
        let dir = scratch("lib");
        for lib in ["libcuzk.so", "libcuzk.a"] {
            std::fs::copy(from.join(lib), dir.join(lib))
                .unwrap_or_else(|e| panic!("copy {lib} from {}: {e}", from.display()));
        }
        dir
    })
}

fn scratch(name: &str) -> PathBuf {
    static SWEPT: OnceLock<()> = OnceLock::new();
    let root = Path::new(env!("CARGO_TARGET_TMPDIR"));
    SWEPT.get_or_init(|| sweep_dead_scratch(root));
    let d = root.join(format!("ffi-hosts-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).expect("scratch dir");
    d
}

/// Scratch folders are named by process so that two runs never share one; a static
/// cannot remove its folder at exit, so each run removes those of runs no longer alive
/// (each holds over a gigabyte of library copies and host builds).
fn sweep_dead_scratch(root: &Path) {
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("ffi-hosts-"))
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// The fixture, written once per test binary.
fn fixture() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = scratch("fixture");
        let out = Command::new(env!("CARGO_BIN_EXE_cuzk_fixtures"))
            .arg(&dir)
            .output()
            .expect("run cuzk_fixtures");
        assert!(
            out.status.success(),
            "cuzk_fixtures failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        dir
    })
}

fn run(cmd: &mut Command, what: &str) -> String {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {what}: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{what} failed ({}):\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        out.status
    );
    // ASAN reports go to stderr and make the process exit non-zero; this also catches a
    // report from a sanitizer configured not to fail the process.
    assert!(
        !stderr.contains("Sanitizer"),
        "{what} printed a sanitizer report:\n{stderr}"
    );
    stdout
}

const WARNINGS: [&str; 4] = ["-Wall", "-Wextra", "-Werror", "-pedantic"];
const ASAN: [&str; 3] = ["-g", "-fsanitize=address", "-fno-omit-frame-pointer"];

fn asan_env(cmd: &mut Command) -> &mut Command {
    // Leak checking on (it is by default on Linux; explicit so a stray environment cannot
    // turn it off), and no suppressions: the library must free everything its handles own.
    // None are needed for Rust's runtime either: what std keeps for the process (thread
    // locals, the rayon and blst pools' threads) is still reachable from live threads and
    // globals at exit, which LeakSanitizer does not report; engine threads are joined by
    // cuzk_engine_free.
    cmd.env(
        "ASAN_OPTIONS",
        "detect_leaks=1:abort_on_error=0:exitcode=23",
    )
    .env_remove("LSAN_OPTIONS")
    // cargo runs tests with its target folders in LD_LIBRARY_PATH, which would win over
    // the programs' RUNPATH: point it at the private copy of the library.
    .env("LD_LIBRARY_PATH", lib_dir())
}

#[test]
fn c11_host_proves_verifies_and_survives_bad_inputs_under_asan() {
    let lib = lib_dir();
    let src = manifest_dir().join("tests/c");
    let work = scratch("c");
    let exe = work.join("host_c");
    let mut cc = Command::new(std::env::var("CC").unwrap_or_else(|_| "gcc".into()));
    cc.arg("-std=c11")
        .args(WARNINGS)
        .args(ASAN)
        .arg("-I")
        .arg(manifest_dir().join("include"))
        .arg("-I")
        .arg(&src)
        // Two translation units include cuzk.h: it must not define anything twice.
        .arg(src.join("host.c"))
        .arg(src.join("fixture.c"))
        .arg("-L")
        .arg(lib)
        .arg("-lcuzk")
        .arg(format!("-Wl,-rpath,{}", lib.display()))
        .arg("-o")
        .arg(&exe);
    run(&mut cc, "the C compiler");

    let stdout = run(
        asan_env(Command::new(&exe).arg(fixture()).arg(&work)),
        "the C host",
    );
    assert!(stdout.contains("backend in use: cpu"), "{stdout}");
    let line = stdout
        .lines()
        .find(|l| l.starts_with("C host: "))
        .unwrap_or_else(|| panic!("no summary line:\n{stdout}"));
    assert!(line.ends_with(" passed, 0 failed"), "{line}");
    let passed: usize = line["C host: ".len()..]
        .split(' ')
        .next()
        .and_then(|n| n.parse().ok())
        .expect("count");
    // The matrix has well over a hundred checks; far fewer means the host stopped early.
    assert!(passed >= 150, "{line}");
}

#[test]
fn cpp17_host_shares_an_engine_between_threads_under_asan() {
    let lib = lib_dir();
    let src = manifest_dir().join("tests/c");
    let work = scratch("cpp");
    let exe = work.join("host_cpp");
    let mut cxx = Command::new(std::env::var("CXX").unwrap_or_else(|_| "g++".into()));
    cxx.arg("-std=c++17")
        .args(WARNINGS)
        .args(ASAN)
        .arg("-I")
        .arg(manifest_dir().join("include"))
        .arg("-I")
        .arg(&src)
        .arg(src.join("host.cpp"))
        .arg(src.join("host_util.cpp"))
        // The static library, with the system libraries Rust's std needs.
        .arg(lib.join("libcuzk.a"))
        .args(["-lpthread", "-ldl", "-lm", "-lrt", "-lgcc_s"])
        .arg("-o")
        .arg(&exe);
    run(&mut cxx, "the C++ compiler");

    let stdout = run(asan_env(Command::new(&exe).arg(fixture())), "the C++ host");
    let line = stdout
        .lines()
        .find(|l| l.starts_with("C++ host: "))
        .unwrap_or_else(|| panic!("no summary line:\n{stdout}"));
    assert!(line.ends_with(" passed, 0 failed"), "{line}");
}

#[test]
fn leak_checking_catches_a_host_that_forgets_a_free() {
    // The hosts' clean runs mean something only if a leak would have failed them: a host
    // that drops its params handle must fail with LeakSanitizer's report naming cuzk.
    let lib = lib_dir();
    let work = scratch("leak");
    let src = work.join("leak.c");
    std::fs::write(
        &src,
        r#"#include "cuzk.h"
int main(int argc, char **argv) {
  cuzk_srs *srs = NULL;
  (void)argc;
  cuzk_status st = cuzk_srs_load(argv[1], false, &srs);
  /* Forget the handle (LeakSanitizer counts a pointer left on the stack as a reference). */
  srs = NULL;
  return st == CUZK_STATUS_OK && srs == NULL ? 0 : 1;
}
"#,
    )
    .expect("write leak.c");
    let exe = work.join("leak");
    run(
        Command::new("gcc")
            .arg("-std=c11")
            .args(WARNINGS)
            .args(ASAN)
            .arg("-I")
            .arg(manifest_dir().join("include"))
            .arg(&src)
            .arg("-L")
            .arg(lib)
            .arg("-lcuzk")
            .arg(format!("-Wl,-rpath,{}", lib.display()))
            .arg("-o")
            .arg(&exe),
        "the C compiler",
    );
    let out = asan_env(&mut Command::new(&exe))
        .arg(fixture().join("params.bin"))
        .output()
        .expect("run leak");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(23), "{stderr}");
    assert!(stderr.contains("LeakSanitizer"), "{stderr}");
    assert!(stderr.contains("cuzk::ffi::srs"), "{stderr}");
}

#[test]
fn header_compiles_alone_as_c_and_cpp() {
    // Self-contained: includes what it uses, and parses in both languages with every
    // warning an error.
    let header = manifest_dir().join("include/cuzk.h");
    for (compiler, lang, std) in [("gcc", "c", "-std=c11"), ("g++", "c++", "-std=c++17")] {
        run(
            Command::new(compiler)
                .args(["-x", lang, std, "-fsyntax-only"])
                .args(WARNINGS)
                .arg(&header),
            compiler,
        );
    }
}

fn header_define(header: &str, name: &str) -> String {
    header
        .lines()
        .find_map(|l| l.strip_prefix(&format!("#define {name} ")))
        .unwrap_or_else(|| panic!("include/cuzk.h has no #define {name}"))
        .trim()
        .to_string()
}

#[test]
fn header_version_macros_match_cargo_toml() {
    let header = std::fs::read_to_string(manifest_dir().join("include/cuzk.h")).expect("header");
    assert_eq!(
        header_define(&header, "CUZK_VERSION_MAJOR"),
        env!("CARGO_PKG_VERSION_MAJOR")
    );
    assert_eq!(
        header_define(&header, "CUZK_VERSION_MINOR"),
        env!("CARGO_PKG_VERSION_MINOR")
    );
    assert_eq!(
        header_define(&header, "CUZK_VERSION_PATCH"),
        env!("CARGO_PKG_VERSION_PATCH")
    );
    // And the run-time string says the same.
    let v = unsafe { std::ffi::CStr::from_ptr(cuzk::ffi::cuzk_version()) }
        .to_str()
        .expect("utf-8");
    assert!(
        v.starts_with(&format!("cuzk {} (", env!("CARGO_PKG_VERSION"))),
        "{v}"
    );
}

#[test]
fn header_declares_every_export() {
    // A cheap staleness check that needs no cbindgen (scripts/check-header.sh is the full
    // one): every `extern "C"` function in src/ffi is declared in the committed header.
    let header = std::fs::read_to_string(manifest_dir().join("include/cuzk.h")).expect("header");
    let mut exports = 0;
    for entry in std::fs::read_dir(manifest_dir().join("src/ffi")).expect("src/ffi") {
        let text = std::fs::read_to_string(entry.expect("entry").path()).expect("source");
        for line in text.lines() {
            let Some(rest) = line
                .trim_start()
                .strip_prefix("pub unsafe extern \"C\" fn ")
                .or_else(|| line.trim_start().strip_prefix("pub extern \"C\" fn "))
            else {
                continue;
            };
            let name = rest.split('(').next().expect("name");
            exports += 1;
            assert!(
                header.contains(&format!(" {name}(")) || header.contains(&format!("*{name}(")),
                "include/cuzk.h lacks {name}: run scripts/check-header.sh --write"
            );
        }
    }
    assert!(exports >= 20, "found only {exports} exports");
}

/// The test parameter cache the Rust Filecoin tests share (made once, reused by every run).
fn test_params_dir() -> PathBuf {
    std::env::var_os("CUZK_TEST_PARAMS").map_or_else(
        || manifest_dir().join("target/cuzk-test-params"),
        PathBuf::from,
    )
}

#[test]
fn c11_host_proves_every_filecoin_kind_under_asan() {
    // Real 2KiB inputs, and per kind the proof bytes filecoin-proofs' verifiers accepted
    // for fixed r and s: the C host must get exactly those through the ABI.
    let fixture = scratch("filecoin-fixture");
    let params = test_params_dir();
    run(
        Command::new(env!("CARGO_BIN_EXE_cuzk_fixtures"))
            .arg("filecoin-inputs")
            .arg(&fixture)
            .arg(&params)
            .env("FIL_PROOFS_PARENT_CACHE", scratch("parents")),
        "cuzk_fixtures filecoin-inputs",
    );
    let lib = lib_dir();
    let src = manifest_dir().join("tests/c");
    let work = scratch("c-filecoin");
    let exe = work.join("filecoin_c");
    let mut cc = Command::new(std::env::var("CC").unwrap_or_else(|_| "gcc".into()));
    cc.arg("-std=c11")
        .args(WARNINGS)
        .args(ASAN)
        .arg("-I")
        .arg(manifest_dir().join("include"))
        .arg("-I")
        .arg(&src)
        .arg(src.join("filecoin.c"))
        .arg(src.join("fixture.c"))
        .arg("-L")
        .arg(lib)
        .arg("-lcuzk")
        .arg(format!("-Wl,-rpath,{}", lib.display()))
        .arg("-o")
        .arg(&exe);
    run(&mut cc, "the C compiler");
    let stdout = run(
        asan_env(Command::new(&exe).arg(&fixture).arg(&params)),
        "the C Filecoin host",
    );
    let line = stdout
        .lines()
        .find(|l| l.starts_with("C filecoin host: "))
        .unwrap_or_else(|| panic!("no summary line:\n{stdout}"));
    assert!(line.ends_with(" passed, 0 failed"), "{line}");
    for kind in [
        "PoRep C2",
        "WinningPoSt",
        "WindowPoSt (whole window)",
        "SnapDeals",
    ] {
        assert!(
            stdout.contains(&format!("{kind}: ")),
            "{kind} not proved:\n{stdout}"
        );
    }
}
