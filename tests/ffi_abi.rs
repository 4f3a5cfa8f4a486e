//! The C ABI called from Rust, for what a C host test cannot easily reach: Montgomery-form
//! scalars, unaligned bitmaps, the panic boundary, the thread-locality of the last error,
//! sized-struct compatibility, the engine config's checks, the stats' stage figures and
//! device backends, per-job admission, engine shutdown under queued jobs, and the stable
//! status numbers.

use std::ffi::CStr;
use std::ptr::{null, null_mut};

use blstrs::Scalar;
use cuzk::cpu::CpuStart;
use cuzk::ffi::*;
use cuzk::fixtures::{generate_srs, SampleCircuit, ToxicWaste};
use cuzk::groth16::{prove, synthesize, Assignment, Randomness, Srs};
use cuzk::{Error, ErrorKind};
use ff::Field;
use rand_chacha::ChaCha8Rng;
use rand_core::SeedableRng;

fn last_error() -> String {
    unsafe { CStr::from_ptr(cuzk_last_error()) }
        .to_string_lossy()
        .into_owned()
}

#[track_caller]
fn ok(status: cuzk_status) {
    assert_eq!(status, cuzk_status::Ok, "{}", last_error());
}

fn circuit() -> SampleCircuit {
    SampleCircuit::Random {
        constraints: 200,
        seed: 0,
    }
}

fn srs() -> Srs {
    generate_srs(circuit(), &ToxicWaste::from_seed(5)).expect("params")
}

fn srs_handle(srs: &Srs) -> *mut cuzk_srs {
    let bytes = srs.to_bytes();
    let mut h = null_mut();
    ok(unsafe { cuzk_srs_from_bytes(bytes.as_ptr(), bytes.len(), false, &mut h) });
    h
}

fn engine(config: Option<&cuzk_config>) -> *mut cuzk_engine {
    let mut e = null_mut();
    ok(unsafe { cuzk_engine_new(config.map_or(null(), |c| c as *const _), &mut e) });
    e
}

fn canonical(s: &[Scalar]) -> Vec<u8> {
    s.iter().flat_map(|x| x.to_bytes_le()).collect()
}

fn montgomery(s: &[Scalar]) -> Vec<u8> {
    s.iter()
        .flat_map(|x| blst::blst_fr::from(*x).l)
        .flat_map(|l| l.to_le_bytes())
        .collect()
}

/// A partition's buffers, owned, encoded for the ABI.
struct Buffers {
    a: Vec<u8>,
    b: Vec<u8>,
    c: Vec<u8>,
    input: Vec<u8>,
    aux: Vec<u8>,
    /// The three bitmaps' words as bytes, each at `offset` in its buffer (to test
    /// unaligned pointers).
    bitmaps: [Vec<u8>; 3],
    bits: [usize; 3],
    offset: usize,
}

impl Buffers {
    fn new(a: &Assignment, encode: fn(&[Scalar]) -> Vec<u8>, offset: usize) -> Self {
        let w = &a.witness;
        let bitmap = |d: &cuzk::groth16::Density| {
            let mut v = vec![0xeeu8; offset];
            v.extend(d.words().iter().flat_map(|x| x.to_ne_bytes()));
            v
        };
        Buffers {
            a: encode(&a.evaluations.a),
            b: encode(&a.evaluations.b),
            c: encode(&a.evaluations.c),
            input: encode(&w.input),
            aux: encode(&w.aux),
            bitmaps: [
                bitmap(&w.a_aux_density),
                bitmap(&w.b_input_density),
                bitmap(&w.b_aux_density),
            ],
            bits: [
                w.a_aux_density.len(),
                w.b_input_density.len(),
                w.b_aux_density.len(),
            ],
            offset,
        }
    }

    fn view(&self) -> cuzk_partition {
        let bm = |i: usize| {
            (
                self.bitmaps[i][self.offset..].as_ptr().cast::<u64>(),
                (self.bitmaps[i].len() - self.offset) / 8,
                self.bits[i],
            )
        };
        let (a_aux, a_aux_w, a_aux_b) = bm(0);
        let (b_in, b_in_w, b_in_b) = bm(1);
        let (b_aux, b_aux_w, b_aux_b) = bm(2);
        cuzk_partition {
            a: self.a.as_ptr(),
            a_len: self.a.len() / 32,
            b: self.b.as_ptr(),
            b_len: self.b.len() / 32,
            c: self.c.as_ptr(),
            c_len: self.c.len() / 32,
            input: self.input.as_ptr(),
            input_len: self.input.len() / 32,
            aux: self.aux.as_ptr(),
            aux_len: self.aux.len() / 32,
            a_aux_density: a_aux,
            a_aux_density_words: a_aux_w,
            a_aux_density_bits: a_aux_b,
            b_input_density: b_in,
            b_input_density_words: b_in_w,
            b_input_density_bits: b_in_b,
            b_aux_density: b_aux,
            b_aux_density_words: b_aux_w,
            b_aux_density_bits: b_aux_b,
        }
    }
}

fn options() -> cuzk_prove_options {
    cuzk_prove_options {
        size: std::mem::size_of::<cuzk_prove_options>(),
        priority: CUZK_PRIORITY_DEFAULT,
        flags: 0,
        r: null(),
        s: null(),
        rs_len: 0,
        admission_timeout_ms: 0,
        params_dir: null(),
    }
}

fn start(
    e: *const cuzk_engine,
    s: *const cuzk_srs,
    parts: &[cuzk_partition],
    o: &cuzk_prove_options,
) -> Result<*mut cuzk_job, (cuzk_status, String)> {
    let mut job = null_mut();
    match unsafe { cuzk_prove_start(e, s, parts.as_ptr(), parts.len(), o, &mut job) } {
        cuzk_status::Ok => Ok(job),
        st => {
            assert!(job.is_null());
            Err((st, last_error()))
        }
    }
}

fn finish(job: *const cuzk_job, n: usize) -> Result<Vec<u8>, (cuzk_status, String)> {
    let mut proofs = vec![0u8; n * CUZK_PROOF_BYTES];
    match unsafe { cuzk_prove_finish(job, CUZK_WAIT_FOREVER, proofs.as_mut_ptr(), proofs.len()) } {
        cuzk_status::Ok => Ok(proofs),
        st => Err((st, last_error())),
    }
}

#[test]
fn montgomery_scalars_and_unaligned_bitmaps_give_the_reference_proofs() {
    let srs = srs();
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    let assignments: Vec<Assignment> = (0..2)
        .map(|i| synthesize(circuit().with_seed(40 + i)).expect("synthesis"))
        .collect();
    let rs: Vec<Randomness> = (0..2)
        .map(|_| Randomness {
            r: Scalar::random(&mut rng),
            s: Scalar::random(&mut rng),
        })
        .collect();
    let expected: Vec<u8> = assignments
        .iter()
        .zip(&rs)
        .flat_map(|(a, rs)| {
            prove(&CpuStart, &srs, a.clone(), *rs)
                .expect("reference proof")
                .to_bytes()
        })
        .collect();

    let e = engine(None);
    let s = srs_handle(&srs);
    for (flags, encode) in [
        (0, canonical as fn(&[Scalar]) -> Vec<u8>),
        (
            CUZK_PROVE_MONTGOMERY,
            montgomery as fn(&[Scalar]) -> Vec<u8>,
        ),
    ] {
        for offset in [0, 1, 4] {
            let bufs: Vec<Buffers> = assignments
                .iter()
                .map(|a| Buffers::new(a, encode, offset))
                .collect();
            let views: Vec<cuzk_partition> = bufs.iter().map(Buffers::view).collect();
            let r = encode(&rs.iter().map(|x| x.r).collect::<Vec<_>>());
            let s_ = encode(&rs.iter().map(|x| x.s).collect::<Vec<_>>());
            let o = cuzk_prove_options {
                flags,
                r: r.as_ptr(),
                s: s_.as_ptr(),
                rs_len: 2,
                ..options()
            };
            let job = start(e, s, &views, &o).expect("start");
            // Everything was copied: the host may scribble over its buffers at once.
            drop(views);
            drop(bufs);
            let proofs = finish(job, 2).expect("finish");
            assert_eq!(proofs, expected, "flags {flags} offset {offset}");
            unsafe { cuzk_job_free(job) };
        }
    }
    // Canonical bytes read as Montgomery are different numbers: a wrong flag is caught
    // (by the validation of input[0] = 1), not silently proved.
    let bufs = Buffers::new(&assignments[0], canonical, 0);
    let o = cuzk_prove_options {
        flags: CUZK_PROVE_MONTGOMERY,
        ..options()
    };
    let (st, msg) = start(e, s, &[bufs.view()], &o).expect_err("wrong encoding");
    assert_eq!(st, cuzk_status::InvalidAssignment);
    assert!(msg.contains("input[0]"), "{msg}");
    unsafe {
        cuzk_srs_free(s);
        cuzk_engine_free(e);
    }
}

#[test]
fn the_panic_boundary_turns_a_panic_into_a_status_and_a_message() {
    let st = boundary_for_tests("cuzk_probe", || panic!("deliberate test panic"));
    assert_eq!(st, cuzk_status::Panic);
    assert_eq!(
        last_error(),
        "cuzk_probe: internal panic: deliberate test panic"
    );
    let st = boundary_for_tests("cuzk_probe", || Err(Error::new(ErrorKind::Timeout, "late")));
    assert_eq!(st, cuzk_status::Timeout);
    assert_eq!(last_error(), "cuzk_probe: late");
    // A message with a NUL inside still reaches C whole.
    let st = boundary_for_tests("cuzk_probe", || Err(Error::invalid_argument("a\0b")));
    assert_eq!(st, cuzk_status::InvalidArgument);
    assert_eq!(last_error(), "cuzk_probe: a?b");
    assert_eq!(boundary_for_tests("cuzk_probe", || Ok(())), cuzk_status::Ok);
    // The library still works after a contained panic.
    let e = engine(None);
    unsafe { cuzk_engine_free(e) };
}

#[test]
fn the_last_error_belongs_to_its_thread() {
    let st = unsafe { cuzk_engine_new(null(), null_mut()) };
    assert_eq!(st, cuzk_status::InvalidArgument);
    assert!(last_error().contains("cuzk_engine_new: argument `engine` is NULL"));
    let other = std::thread::spawn(|| {
        let before = last_error();
        let st = unsafe { cuzk_srs_load(c"/nonexistent".as_ptr(), false, null_mut()) };
        (before, st, last_error())
    })
    .join()
    .expect("thread");
    assert_eq!(other.0, "", "a new thread has no error");
    assert_eq!(other.1, cuzk_status::InvalidArgument);
    assert!(other.2.contains("`srs`"), "{}", other.2);
    assert!(
        last_error().contains("`engine`"),
        "untouched by the other thread"
    );
}

#[test]
fn status_numbers_are_stable_and_every_error_kind_has_its_own() {
    let table = [
        (cuzk_status::Ok, 0, "CUZK_STATUS_OK"),
        (cuzk_status::Panic, 1, "CUZK_STATUS_PANIC"),
        (
            cuzk_status::InvalidArgument,
            2,
            "CUZK_STATUS_INVALID_ARGUMENT",
        ),
        (cuzk_status::InvalidParams, 3, "CUZK_STATUS_INVALID_PARAMS"),
        (
            cuzk_status::InvalidAssignment,
            4,
            "CUZK_STATUS_INVALID_ASSIGNMENT",
        ),
        (cuzk_status::EmptyCircuit, 5, "CUZK_STATUS_EMPTY_CIRCUIT"),
        (cuzk_status::Synthesis, 6, "CUZK_STATUS_SYNTHESIS"),
        (cuzk_status::InvalidProof, 7, "CUZK_STATUS_INVALID_PROOF"),
        (cuzk_status::Io, 8, "CUZK_STATUS_IO"),
        (cuzk_status::Cancelled, 9, "CUZK_STATUS_CANCELLED"),
        (cuzk_status::Timeout, 10, "CUZK_STATUS_TIMEOUT"),
        (
            cuzk_status::ResourceExhausted,
            11,
            "CUZK_STATUS_RESOURCE_EXHAUSTED",
        ),
        (cuzk_status::ShuttingDown, 12, "CUZK_STATUS_SHUTTING_DOWN"),
        (cuzk_status::Gpu, 13, "CUZK_STATUS_GPU"),
        (cuzk_status::Internal, 14, "CUZK_STATUS_INTERNAL"),
        (
            cuzk_status::BufferTooSmall,
            15,
            "CUZK_STATUS_BUFFER_TOO_SMALL",
        ),
        (cuzk_status::InvalidInput, 16, "CUZK_STATUS_INVALID_INPUT"),
        (
            cuzk_status::ParamsNotFound,
            17,
            "CUZK_STATUS_PARAMS_NOT_FOUND",
        ),
        (
            cuzk_status::SectorSizeMismatch,
            18,
            "CUZK_STATUS_SECTOR_SIZE_MISMATCH",
        ),
        (
            cuzk_status::VerificationFailed,
            19,
            "CUZK_STATUS_VERIFICATION_FAILED",
        ),
    ];
    let header = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/include/cuzk.h"))
        .expect("header");
    for (status, number, name) in table {
        assert_eq!(status as u32, number);
        assert_eq!(
            unsafe { CStr::from_ptr(cuzk_status_name(number)) }.to_str(),
            Ok(name)
        );
        assert!(header.contains(&format!("  {name} = {number},")), "{name}");
    }
    assert_eq!(
        unsafe { CStr::from_ptr(cuzk_status_name(20)) }.to_str(),
        Ok("CUZK_STATUS_UNKNOWN")
    );
    let kinds = [
        ErrorKind::InvalidArgument,
        ErrorKind::InvalidParams,
        ErrorKind::InvalidAssignment,
        ErrorKind::EmptyCircuit,
        ErrorKind::Synthesis,
        ErrorKind::InvalidProof,
        ErrorKind::Io,
        ErrorKind::Cancelled,
        ErrorKind::Timeout,
        ErrorKind::ResourceExhausted,
        ErrorKind::ShuttingDown,
        ErrorKind::Gpu,
        ErrorKind::Internal,
        ErrorKind::InvalidInput,
        ErrorKind::ParamsNotFound,
        ErrorKind::SectorSizeMismatch,
        ErrorKind::VerificationFailed,
    ];
    let mut seen = std::collections::HashSet::new();
    for k in kinds {
        let s = cuzk_status::from(k);
        assert!(s != cuzk_status::Ok && s != cuzk_status::Panic, "{k:?}");
        assert!(seen.insert(s as u32), "{k:?} shares a status");
    }
}

fn stats(e: *const cuzk_engine) -> cuzk_stats {
    let mut s = cuzk_stats {
        size: std::mem::size_of::<cuzk_stats>(),
        ..Default::default()
    };
    ok(unsafe { cuzk_get_stats(e, &mut s) });
    s
}

#[test]
fn sized_structs_read_older_and_newer_hosts() {
    let full = cuzk_config {
        size: std::mem::size_of::<cuzk_config>(),
        memory_budget_bytes: 123_456_789,
        ..Default::default()
    };
    let e = engine(Some(&full));
    assert_eq!(stats(e).memory_budget_bytes, 123_456_789);
    unsafe { cuzk_engine_free(e) };

    // An older host that knows the fields up to `flags`: the budget it cannot have set
    // reads as zero (the default), whatever lies in memory past its struct.
    let older = cuzk_config {
        size: std::mem::offset_of!(cuzk_config, memory_budget_bytes),
        ..full
    };
    let e = engine(Some(&older));
    let budget = stats(e).memory_budget_bytes;
    assert!(budget != 123_456_789 && budget > 0, "{budget}");
    unsafe { cuzk_engine_free(e) };

    // A newer host's bigger struct: accepted while its extra fields are zero.
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct Newer {
        base: cuzk_config,
        extra: u64,
    }
    let mut newer = Newer {
        base: cuzk_config {
            size: std::mem::size_of::<Newer>(),
            ..full
        },
        extra: 0,
    };
    let e = engine(Some(&newer.base));
    assert_eq!(stats(e).memory_budget_bytes, 123_456_789);
    unsafe { cuzk_engine_free(e) };
    newer.extra = 1;
    let mut out = null_mut();
    let st = unsafe { cuzk_engine_new(&newer.base, &mut out) };
    assert_eq!(st, cuzk_status::InvalidArgument);
    assert!(out.is_null());
    assert!(last_error().contains("newer header"), "{}", last_error());

    // Zeroed means defaults.
    let e = engine(Some(&cuzk_config::default()));
    let s = stats(e);
    assert_eq!(s.device_count, 1);
    assert_eq!(s.size, std::mem::size_of::<cuzk_stats>());
    unsafe { cuzk_engine_free(e) };
}

#[test]
fn the_fault_deferral_and_recordings_fields_are_checked_and_an_older_host_skips_them() {
    let refused = |c: &cuzk_config, arg: &str| {
        let mut e = null_mut();
        let st = unsafe { cuzk_engine_new(c, &mut e) };
        assert_eq!(st, cuzk_status::InvalidArgument, "{}", last_error());
        assert!(e.is_null());
        let msg = last_error();
        assert!(msg.contains(&format!("`{arg}`")), "{msg}");
        msg
    };
    let base = cuzk_config {
        size: std::mem::size_of::<cuzk_config>(),
        cpu_devices: 1,
        ..Default::default()
    };
    let both = cuzk_config {
        flags: CUZK_CONFIG_DEFER_EVALUATIONS_ON | CUZK_CONFIG_DEFER_EVALUATIONS_OFF,
        ..base
    };
    let msg = refused(&both, "config.flags");
    assert!(msg.contains("both"), "{msg}");
    let never_but_after = cuzk_config {
        flags: CUZK_CONFIG_NEVER_OUT_OF_ROTATION,
        fault_out_of_rotation_after: 5,
        ..base
    };
    refused(&never_but_after, "config.fault_out_of_rotation_after");
    let latin1 = c"/tmp/cuzk-r\xe9cordings";
    let bad_dir = cuzk_config {
        recordings_dir: latin1.as_ptr(),
        ..base
    };
    let msg = refused(&bad_dir, "config.recordings_dir");
    assert!(msg.contains("not UTF-8"), "{msg}");

    // A host built before these fields: whatever lies past its struct (here a path that
    // would be refused and contradictory rotation settings) is not read.
    let older = cuzk_config {
        size: std::mem::offset_of!(cuzk_config, fault_max_attempts),
        flags: 0,
        fault_max_attempts: 9,
        fault_out_of_rotation_after: 5,
        ..bad_dir
    };
    let e = engine(Some(&older));
    assert_eq!(stats(e).device_count, 1);
    unsafe { cuzk_engine_free(e) };

    // Every new field set, and valid: the engine starts and proves.
    let dir = std::env::temp_dir().join(format!("cuzk-ffi-abi-recordings-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let dir_c = std::ffi::CString::new(dir.to_str().unwrap()).unwrap();
    let all = cuzk_config {
        flags: CUZK_CONFIG_DEFER_EVALUATIONS_ON | CUZK_CONFIG_NEVER_OUT_OF_ROTATION,
        fault_max_attempts: 1,
        fault_probe_delay_ms: 50,
        recordings_dir: dir_c.as_ptr(),
        ..base
    };
    let e = engine(Some(&all));
    drop(dir_c); // read only during the call
    let srs = srs();
    let params = srs_handle(&srs);
    let bufs = Buffers::new(&synthesize(circuit()).expect("synthesis"), canonical, 0);
    let job = start(e, params, &[bufs.view()], &options()).expect("start");
    assert_eq!(finish(job, 1).expect("finish").len(), CUZK_PROOF_BYTES);
    unsafe {
        cuzk_job_free(job);
        cuzk_srs_free(params);
        cuzk_engine_free(e);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn stats_time_each_start_stage_and_name_each_devices_backend() {
    let srs = srs();
    let s = srs_handle(&srs);
    let cfg = cuzk_config {
        size: std::mem::size_of::<cuzk_config>(),
        cpu_devices: 2,
        ..Default::default()
    };
    let e = engine(Some(&cfg));
    let a: Vec<Assignment> = (0..3)
        .map(|i| synthesize(circuit().with_seed(60 + i)).expect("synthesis"))
        .collect();
    let bufs: Vec<Buffers> = a.iter().map(|x| Buffers::new(x, canonical, 0)).collect();
    let views: Vec<cuzk_partition> = bufs.iter().map(Buffers::view).collect();
    let job = start(e, s, &views, &options()).expect("start");
    finish(job, 3).expect("finish");
    unsafe { cuzk_job_free(job) };

    let st = stats(e);
    assert_eq!(st.partitions_proved, 3);
    let slack = 1_000_000; // rounding only: every stage is timed inside the hold
    for (name, l) in st.start_stages() {
        // The CPU times the NTTs and the MSMs; it has no transfers or gathers.
        let on_cpu = matches!(name, "ntt" | "msm_h" | "msm_l" | "msm_a" | "msm_b_g1");
        assert_eq!(l.count, 3, "{name}");
        assert!(l.sum_ns <= st.mutex_hold.sum_ns + slack, "{name}");
        assert_eq!(
            l.sum_ns > 0,
            on_cpu,
            "{name}: CPU devices have no transfers or gathers"
        );
    }
    assert_eq!(st.finalize_b_g2.count, 3);
    assert!(st.finalize_b_g2.sum_ns > 0 && st.finalize_b_g2.sum_ns <= st.finalize.sum_ns + slack);
    assert_eq!(st.device_count, 2);
    for (i, b) in st.device_backends.iter().enumerate() {
        let want = if i < 2 {
            cuzk_device_backend {
                backend: cuzk_backend::Cpu,
                gpu_ordinal: CUZK_NO_GPU_ORDINAL,
            }
        } else {
            cuzk_device_backend::default()
        };
        assert_eq!(*b, want, "device {i}");
    }
    // Measured on a GPU only: CPU devices have no kernels.
    assert_eq!(st.device_kernel_active_ns, [0; CUZK_MAX_DEVICES]);

    // The backend codes are stable, and the header says so.
    let header = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/include/cuzk.h"))
        .expect("header");
    for (b, number, name) in [
        (cuzk_backend::Cpu, 0, "CUZK_BACKEND_CPU"),
        (cuzk_backend::Cuda, 1, "CUZK_BACKEND_CUDA"),
    ] {
        assert_eq!(b as u32, number);
        assert!(header.contains(&format!("  {name} = {number},")), "{name}");
    }
    assert!(header.contains("#define CUZK_NO_GPU_ORDINAL UINT32_MAX"));

    // A host built before the stage figures existed passes the size its struct had: it
    // gets every field it knows, the per-device figures at their old places.
    let old_size = std::mem::offset_of!(cuzk_stats, start_ntt);
    let mut old = cuzk_stats {
        size: old_size,
        ..Default::default()
    };
    ok(unsafe { cuzk_get_stats(e, &mut old) });
    assert_eq!(old.size, old_size);
    assert_eq!(old.devices[1].partitions, st.devices[1].partitions);
    assert_eq!(old.start_ntt, cuzk_latency::default(), "past the old size");
    assert_eq!(
        old.device_backends,
        [cuzk_device_backend::default(); CUZK_MAX_DEVICES]
    );
    unsafe {
        cuzk_srs_free(s);
        cuzk_engine_free(e);
    }
}

#[test]
fn a_jobs_admission_timeout_and_fail_fast_override_the_engines() {
    let srs = srs();
    let s = srs_handle(&srs);
    let a: Vec<Assignment> = (0..3)
        .map(|i| synthesize(circuit().with_seed(i)).expect("synthesis"))
        .collect();
    let bufs: Vec<Buffers> = a.iter().map(|x| Buffers::new(x, canonical, 0)).collect();
    let views: Vec<cuzk_partition> = bufs.iter().map(Buffers::view).collect();

    // Measure the job's reservation on an engine of its own.
    let e = engine(None);
    let job = start(e, s, &views, &options()).expect("start");
    finish(job, 3).expect("finish");
    unsafe { cuzk_job_free(job) };
    let job_bytes = stats(e).memory_peak_bytes;
    assert!(job_bytes > 0);
    unsafe { cuzk_engine_free(e) };

    // Room for exactly one such job, and an engine that would wait ten minutes.
    let config = cuzk_config {
        size: std::mem::size_of::<cuzk_config>(),
        memory_budget_bytes: job_bytes,
        cpu_devices: 1,
        workers_per_device: 1,
        ..Default::default()
    };
    let e = engine(Some(&config));
    let first = start(e, s, &views, &options()).expect("first job fits");
    let fail_fast = cuzk_prove_options {
        flags: CUZK_PROVE_FAIL_FAST,
        ..options()
    };
    let quick = cuzk_prove_options {
        admission_timeout_ms: 1,
        ..options()
    };
    // Either refusal, unless the first job has already ended (then both are admitted).
    let mut refusals = 0;
    for (o, want) in [
        (&fail_fast, cuzk_status::ResourceExhausted),
        (&quick, cuzk_status::Timeout),
    ] {
        match start(e, s, &views, o) {
            Err((st, msg)) => {
                assert_eq!(st, want, "{msg}");
                refusals += 1;
            }
            Ok(j) => {
                finish(j, 3).expect("finish");
                unsafe { cuzk_job_free(j) };
            }
        }
    }
    finish(first, 3).expect("first job");
    unsafe { cuzk_job_free(first) };
    assert!(refusals >= 1, "the budget never refused a second job");
    // A partition gives its memory back just after its proof is stored: wait for it.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while stats(e).memory_reserved_bytes != 0 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    // With the budget free again the same options admit at once.
    let j = start(e, s, &views, &fail_fast).expect("fits now");
    finish(j, 3).expect("finish");
    unsafe {
        cuzk_job_free(j);
        cuzk_engine_free(e);
        cuzk_srs_free(s);
    }
}

#[test]
fn freeing_the_engine_ends_queued_jobs_with_shutting_down() {
    let srs = srs();
    let s = srs_handle(&srs);
    let a = synthesize(circuit().with_seed(3)).expect("synthesis");
    let bufs = Buffers::new(&a, canonical, 0);
    let views = vec![bufs.view(); 4];
    let config = cuzk_config {
        size: std::mem::size_of::<cuzk_config>(),
        workers_per_device: 1,
        ..Default::default()
    };
    let e = engine(Some(&config));
    let jobs: Vec<*mut cuzk_job> = (0..6)
        .map(|_| start(e, s, &views, &options()).expect("start"))
        .collect();
    unsafe {
        cuzk_srs_free(s);
        cuzk_engine_free(e);
    }
    let mut shut = 0;
    for j in jobs {
        match finish(j, 4) {
            Ok(_) => {}
            Err((cuzk_status::ShuttingDown, msg)) => {
                assert!(msg.contains("shut down"), "{msg}");
                shut += 1;
            }
            Err(other) => panic!("{other:?}"),
        }
        let mut state = cuzk_job_state::Pending;
        ok(unsafe { cuzk_job_poll(j, &mut state, null_mut(), null_mut()) });
        assert!(matches!(
            state,
            cuzk_job_state::Done | cuzk_job_state::Failed
        ));
        unsafe { cuzk_job_free(j) };
    }
    // 24 partitions on one worker: the engine cannot have got through them all.
    assert!(shut >= 1);
}

#[test]
fn tracing_filters_parse_or_are_refused() {
    // Quiet filters: the subscriber is process-wide and the other tests run beside this one.
    ok(unsafe { cuzk_tracing_init(c"cuzk=error".as_ptr()) });
    ok(unsafe { cuzk_tracing_init(c"cuzk=warn,error".as_ptr()) });
    assert_eq!(
        unsafe { cuzk_tracing_init(c"cuzk=[not a filter".as_ptr()) },
        cuzk_status::InvalidArgument
    );
    assert!(last_error().contains("`env_filter`"), "{}", last_error());
    std::env::set_var("RUST_LOG", "cuzk=error");
    ok(unsafe { cuzk_tracing_init(null()) });
}
