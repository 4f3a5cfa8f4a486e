//! Bad input never panics and never proves: every malformed params file, assignment or
//! scalar gets an error that says what and where.

use blstrs::{Fp, Scalar};
use cuzk::cpu::CpuStart;
use cuzk::fixtures::{generate_srs, SampleCircuit, ToxicWaste};
use cuzk::groth16::scalars::scalars_from_bytes;
use cuzk::groth16::{
    prove, synthesize, Assignment, Density, PointCheck, Randomness, ScalarEncoding, Srs,
};
use cuzk::ErrorKind;
use ff::Field;

fn fixture() -> (Srs, Vec<u8>, Assignment) {
    let circuit = SampleCircuit::BooleanHeavy { bits: 70, seed: 1 };
    let srs = generate_srs(circuit.clone(), &ToxicWaste::from_seed(1)).unwrap();
    let bytes = srs.to_bytes();
    (srs, bytes, synthesize(circuit).unwrap())
}

/// Byte offsets of each section's count in bellperson's layout.
fn section_offsets(srs: &Srs) -> [(&'static str, usize); 6] {
    let vk_fixed = 96 * 3 + 192 * 3;
    let ic = vk_fixed;
    let h = ic + 4 + 96 * srs.vk.ic.len();
    let l = h + 4 + 96 * srs.h.len();
    let a = l + 4 + 96 * srs.l.len();
    let b_g1 = a + 4 + 96 * srs.a.len();
    let b_g2 = b_g1 + 4 + 96 * srs.b_g1.len();
    [
        ("vk.ic", ic),
        ("h", h),
        ("l", l),
        ("a", a),
        ("b_g1", b_g1),
        ("b_g2", b_g2),
    ]
}

fn params_err(bytes: &[u8], check: PointCheck) -> cuzk::Error {
    Srs::from_bytes(bytes, check).expect_err("malformed params must not load")
}

#[test]
fn truncated_params_name_the_section() {
    let (srs, bytes, _) = fixture();
    for (section, off) in section_offsets(&srs) {
        for cut in [off + 2, off + 4 + 50] {
            let e = params_err(&bytes[..cut], PointCheck::Unchecked);
            assert_eq!(e.kind(), ErrorKind::InvalidParams);
            assert!(
                e.message().contains(&format!("`{section}`")),
                "{}",
                e.message()
            );
            assert!(e.message().contains("truncated"), "{}", e.message());
        }
    }
    assert!(params_err(&bytes[..100], PointCheck::Checked)
        .message()
        .contains("vk.beta_g1"));
    assert!(params_err(&[], PointCheck::Checked)
        .message()
        .contains("truncated"));
    let mut extra = bytes.clone();
    extra.push(0);
    assert!(params_err(&extra, PointCheck::Unchecked)
        .message()
        .contains("trailing"));
}

#[test]
fn wrong_counts_and_bad_points_name_section_and_index() {
    let (srs, bytes, _) = fixture();
    let offs = section_offsets(&srs);
    // A count larger than the file.
    let mut big = bytes.clone();
    let h = offs[1].1;
    big[h..h + 4].copy_from_slice(&u32::MAX.to_be_bytes());
    let e = params_err(&big, PointCheck::Unchecked);
    assert!(
        e.message().contains("`h`") && e.message().contains("4294967295"),
        "{}",
        e.message()
    );
    // A count one too small shifts everything: the next section's count is garbage or the
    // file ends early; either way an error, never a key.
    let mut small = bytes.clone();
    let l = offs[2].1;
    let n = srs.l.len() as u32 - 1;
    small[l..l + 4].copy_from_slice(&n.to_be_bytes());
    params_err(&small, PointCheck::Unchecked);

    // A corrupted point: point 3 of `l`.
    let mut bad = bytes.clone();
    bad[l + 4 + 96 * 3 + 60] ^= 0x55;
    for check in [PointCheck::Checked, PointCheck::Unchecked] {
        let e = params_err(&bad, check);
        assert!(e.message().contains("`l`, point 3"), "{}", e.message());
    }
    // The point at infinity in `a`.
    let mut inf = bytes.clone();
    let a = offs[3].1 + 4 + 96 * 2;
    inf[a..a + 96].fill(0);
    inf[a] = 0x40;
    let e = params_err(&inf, PointCheck::Unchecked);
    assert!(
        e.message().contains("`a`, point 2") && e.message().contains("infinity"),
        "{}",
        e.message()
    );
}

#[test]
fn checked_mode_rejects_a_point_outside_the_subgroup() {
    let (srs, bytes, _) = fixture();
    // A point on E(Fp) that is (with overwhelming probability) not in the r-order subgroup.
    let mut x = Fp::from(5u64);
    let y = loop {
        let rhs = x.square() * x + Fp::from(4u64);
        if let Some(y) = Option::<Fp>::from(rhs.sqrt()) {
            break y;
        }
        x += Fp::ONE;
    };
    let mut enc = [0u8; 96];
    enc[..48].copy_from_slice(&x.to_bytes_be());
    enc[48..].copy_from_slice(&y.to_bytes_be());
    let mut bad = bytes.clone();
    let h = section_offsets(&srs)[1].1 + 4 + 96;
    bad[h..h + 96].copy_from_slice(&enc);
    let e = params_err(&bad, PointCheck::Checked);
    assert!(
        e.message().contains("`h`, point 1") && e.message().contains("subgroup"),
        "{}",
        e.message()
    );
    // The unchecked mode trusts the file (the host verified its digest) and loads it.
    assert!(Srs::from_bytes(&bad, PointCheck::Unchecked).is_ok());
}

#[test]
fn params_load_from_a_file_and_report_io_errors() {
    let (srs, bytes, _) = fixture();
    let dir = std::env::temp_dir().join(format!("cuzk-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("ok.params");
    std::fs::write(&path, &bytes).unwrap();
    assert_eq!(Srs::load(&path, PointCheck::Checked).unwrap(), srs);
    let cut = dir.join("cut.params");
    std::fs::write(&cut, &bytes[..bytes.len() - 7]).unwrap();
    let e = Srs::load(&cut, PointCheck::Checked).unwrap_err();
    assert!(
        e.message().contains("cut.params") && e.message().contains("`b_g2`"),
        "{}",
        e.message()
    );
    let empty = dir.join("empty.params");
    std::fs::write(&empty, b"").unwrap();
    assert_eq!(
        Srs::load(&empty, PointCheck::Checked).unwrap_err().kind(),
        ErrorKind::InvalidParams
    );
    let e = Srs::load(dir.join("missing.params"), PointCheck::Checked).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Io);
    std::fs::remove_dir_all(&dir).unwrap();
}

fn expect_bad(srs: &Srs, a: Assignment, needle: &str, kind: ErrorKind) {
    let e = a.validate(srs).expect_err(needle);
    assert_eq!(e.kind(), kind, "{}", e.message());
    assert!(
        e.message().contains(needle),
        "want `{needle}` in: {}",
        e.message()
    );
    let e = prove(&CpuStart, srs, a, Randomness::random()).expect_err(needle);
    assert!(e.message().contains(needle));
}

#[test]
fn bad_assignments_are_rejected_before_proving() {
    let (srs, _, good) = fixture();
    good.validate(&srs).unwrap();
    let mut a = good.clone();
    a.evaluations.b.pop();
    expect_bad(
        &srs,
        a,
        "evaluations differ in length",
        ErrorKind::InvalidAssignment,
    );
    let mut a = good.clone();
    a.evaluations.a.push(Scalar::ONE);
    a.evaluations.b.push(Scalar::ONE);
    a.evaluations.c.push(Scalar::ONE);
    // One more constraint than the params' domain holds only when it crosses a power of two;
    // this fixture has room, so grow to the next power instead.
    let n = a.evaluations.a.len().next_power_of_two() + 1;
    for v in [
        &mut a.evaluations.a,
        &mut a.evaluations.b,
        &mut a.evaluations.c,
    ] {
        v.resize(n, Scalar::ZERO);
    }
    expect_bad(&srs, a, "section `h`", ErrorKind::InvalidAssignment);
    let mut a = good.clone();
    a.witness.aux.pop();
    expect_bad(&srs, a, "section `l`", ErrorKind::InvalidAssignment);
    let mut a = good.clone();
    a.witness.input.push(Scalar::ONE);
    expect_bad(&srs, a, "vk.ic", ErrorKind::InvalidAssignment);
    let mut a = good.clone();
    a.witness.input[0] = Scalar::ZERO;
    expect_bad(&srs, a, "input[0]", ErrorKind::InvalidAssignment);
    let mut a = good.clone();
    a.witness.b_aux_density = Density::new(a.witness.aux.len() + 1);
    expect_bad(&srs, a, "b_aux_density has", ErrorKind::InvalidAssignment);
    let mut a = good.clone();
    let mut words = a.witness.a_aux_density.words().to_vec();
    words[0] &= words[0] - 1; // clear the lowest set bit
    a.witness.a_aux_density = Density::from_words(words, a.witness.aux.len()).unwrap();
    expect_bad(
        &srs,
        a,
        "popcount of a_aux_density",
        ErrorKind::InvalidAssignment,
    );
    let mut a = good.clone();
    a.witness.b_input_density = Density::full(a.witness.input.len());
    expect_bad(
        &srs,
        a,
        "b_input_density plus b_aux_density",
        ErrorKind::InvalidAssignment,
    );
    expect_bad(
        &srs,
        Assignment::default(),
        "empty circuit",
        ErrorKind::EmptyCircuit,
    );
}

#[test]
fn unreduced_scalars_are_rejected_with_their_index() {
    let mut bytes = vec![0u8; 32 * 4];
    bytes[32 * 2..32 * 3].fill(0xff);
    for enc in [ScalarEncoding::CanonicalLe, ScalarEncoding::Montgomery] {
        let e = scalars_from_bytes(&bytes, enc, "aux").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidAssignment);
        assert!(e.message().contains("aux[2]"), "{}", e.message());
    }
    assert_eq!(
        scalars_from_bytes(&bytes[..64], ScalarEncoding::CanonicalLe, "aux")
            .unwrap()
            .len(),
        2
    );
}
