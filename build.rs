//! Compiles the CUDA kernels (cuda/*.cu) into one fatbin when the `cuda` feature is on.
//!
//! nvcc is looked up in `$NVCC`, `$CUDA_PATH/bin/nvcc`, `PATH`, then the project's pinned
//! toolkit (`scripts/setup-cuda.sh` puts it in `.cuda-toolkit/`). The fatbin holds SASS for
//! sm_80, sm_86, sm_89 and sm_90 plus compute_90 PTX (so newer GPUs JIT it), and lands in
//! `$OUT_DIR/cuzk.fatbin`, which `src/gpu` embeds. `cfg(cuzk_cuda_kernels)` is set only when
//! that really compiled: without nvcc the crate still builds, CPU-only, with a warning.
//! Nothing here links a CUDA library; the driver is loaded at run time (cudarc).
//!
//! Environment: `CUZK_CUDA_ARCHS=90` (comma list) narrows the SASS set for quicker
//! development builds; `CUZK_NVCC_FLAGS` adds flags; `CUZK_REQUIRE_CUDA=1` turns a missing or
//! failing nvcc into a build error instead of a warning.

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

const DEFAULT_ARCHS: &str = "80,86,89,90";
const PTX_ARCH: &str = "90";

fn main() {
    println!("cargo::rustc-check-cfg=cfg(cuzk_cuda_kernels)");
    println!("cargo:rerun-if-changed=build.rs");
    if env::var_os("CARGO_FEATURE_CUDA").is_none() {
        return;
    }
    // The whole folder, so that a new .cu/.cuh file reruns the build too (listing the files
    // found now would miss one added later). Edits to cuda/test/ also rebuild the kernels.
    println!("cargo:rerun-if-changed=cuda");
    for var in [
        "NVCC",
        "CUDA_PATH",
        "PATH",
        "CUZK_CUDA_ARCHS",
        "CUZK_NVCC_FLAGS",
        "CUZK_REQUIRE_CUDA",
    ] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    let require = env::var("CUZK_REQUIRE_CUDA")
        .map(|v| v == "1")
        .unwrap_or(false);
    let manifest =
        PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let out = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR"));

    let Some(nvcc) = find_nvcc(&manifest) else {
        skip(
            require,
            "nvcc not found ($NVCC, $CUDA_PATH/bin, PATH, .cuda-toolkit/); building without GPU kernels \
             (scripts/setup-cuda.sh installs the pinned toolkit)",
        );
        return;
    };
    match compile(&nvcc, &manifest, &out) {
        Ok(()) => println!("cargo:rustc-cfg=cuzk_cuda_kernels"),
        Err(e) => skip(
            require,
            &format!("CUDA kernels not built ({}): {e}", nvcc.display()),
        ),
    }
}

fn skip(require: bool, msg: &str) {
    if require {
        panic!("{msg}");
    }
    for line in msg.lines().take(20) {
        println!("cargo:warning={line}");
    }
}

fn find_nvcc(manifest: &Path) -> Option<PathBuf> {
    let exe = |p: PathBuf| if p.is_file() { Some(p) } else { None };
    if let Some(p) = env::var_os("NVCC") {
        return exe(PathBuf::from(p));
    }
    if let Some(p) = env::var_os("CUDA_PATH").and_then(|d| exe(PathBuf::from(d).join("bin/nvcc"))) {
        return Some(p);
    }
    if let Some(path) = env::var_os("PATH") {
        if let Some(p) = env::split_paths(&path).find_map(|d| exe(d.join("nvcc"))) {
            return Some(p);
        }
    }
    exe(manifest.join(".cuda-toolkit/nvidia/cu13/bin/nvcc"))
}

fn nvcc_version(nvcc: &Path) -> Result<(u32, u32), String> {
    let o = Command::new(nvcc)
        .arg("--version")
        .output()
        .map_err(|e| format!("running nvcc: {e}"))?;
    let text = String::from_utf8_lossy(&o.stdout);
    // "... Cuda compilation tools, release 13.0, V13.0.88"
    let rel = text
        .split("release ")
        .nth(1)
        .and_then(|s| s.split(',').next())
        .ok_or_else(|| format!("unrecognised `nvcc --version` output: {text}"))?;
    let mut it = rel.trim().split('.').map(|x| x.parse::<u32>().unwrap_or(0));
    Ok((it.next().unwrap_or(0), it.next().unwrap_or(0)))
}

fn compile(nvcc: &Path, manifest: &Path, out: &Path) -> Result<(), String> {
    let (major, minor) = nvcc_version(nvcc)?;
    // sm_90 SASS needs CUDA 11.8; the kernels are only tested with 12.x and 13.0.
    if major < 12 {
        return Err(format!(
            "nvcc {major}.{minor} is too old (need 12.0 or newer)"
        ));
    }
    let cuda_dir = manifest.join("cuda");
    let mut sources: Vec<PathBuf> = fs::read_dir(&cuda_dir)
        .map_err(|e| format!("reading {}: {e}", cuda_dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "cu"))
        .collect();
    sources.sort();
    if sources.is_empty() {
        return Err("no cuda/*.cu sources".into());
    }
    // One translation unit including every .cu, so the fatbin is a single module.
    let unity = out.join("cuzk_all.cu");
    let body: String = sources
        .iter()
        .map(|p| format!("#include \"{}\"\n", p.display()))
        .collect();
    fs::write(&unity, body).map_err(|e| format!("writing {}: {e}", unity.display()))?;

    let archs = env::var("CUZK_CUDA_ARCHS").unwrap_or_else(|_| DEFAULT_ARCHS.to_string());
    let fatbin = out.join("cuzk.fatbin");
    let mut cmd = Command::new(nvcc);
    cmd.arg("-fatbin")
        .arg("-O3")
        .arg("-std=c++17")
        .arg("-I")
        .arg(&cuda_dir);
    for a in archs.split(',').map(str::trim).filter(|a| !a.is_empty()) {
        cmd.arg(format!("-gencode=arch=compute_{a},code=sm_{a}"));
    }
    cmd.arg(format!(
        "-gencode=arch=compute_{PTX_ARCH},code=compute_{PTX_ARCH}"
    ));
    // Architectures compile in parallel; cargo's job count bounds the threads.
    let jobs = env::var("NUM_JOBS").unwrap_or_else(|_| "1".into());
    cmd.arg("--threads").arg(jobs);
    if let Ok(extra) = env::var("CUZK_NVCC_FLAGS") {
        cmd.args(extra.split_whitespace());
    }
    cmd.arg("-o").arg(&fatbin).arg(&unity);
    let o = cmd.output().map_err(|e| format!("running nvcc: {e}"))?;
    // Kept for reading the resource report (CUZK_NVCC_FLAGS="-Xptxas -v").
    let _ = fs::write(out.join("nvcc.log"), &o.stderr);
    if !o.status.success() {
        return Err(format!(
            "nvcc failed ({}):\n{}",
            o.status,
            String::from_utf8_lossy(&o.stderr)
        ));
    }
    Ok(())
}
