//! The recorded-R1CS mat-vec on the device (`GpuContext::upload_r1cs`, `r1cs_evaluate`):
//! a = A·w, b = B·w, c = C·w must equal the same products computed here with blstrs, for
//! matrices with every kind of entry (±1, table coefficients, input and aux columns, empty
//! rows) and witnesses of zeros, ones and random values; malformed matrices are refused
//! before anything reaches the device, and the context keeps working after. Skips without a
//! GPU.

mod gpu_common;

use blstrs::Scalar;
use ff::Field;
use rand::Rng;

use cuzk::gpu::{CsrMatrix, GpuError};

use gpu_common::*;

const INPUT: u32 = 1 << 31;

/// One random matrix: row_start, cols, codes.
struct Csr {
    row_start: Vec<u32>,
    cols: Vec<u32>,
    codes: Vec<u16>,
}

impl Csr {
    fn view(&self) -> CsrMatrix<'_> {
        CsrMatrix {
            row_start: &self.row_start,
            cols: &self.cols,
            codes: &self.codes,
        }
    }
}

fn random_csr(rows: usize, inputs: usize, aux: usize, table: usize, seed: u64) -> Csr {
    let mut g = rng(seed);
    let mut m = Csr {
        row_start: vec![0],
        cols: Vec::new(),
        codes: Vec::new(),
    };
    for _ in 0..rows {
        // Empty rows too (a constraint with nothing in B, say).
        for _ in 0..g.gen_range(0..7) {
            let col = if g.gen_ratio(1, 10) {
                INPUT | g.gen_range(0..inputs as u32)
            } else {
                g.gen_range(0..aux as u32)
            };
            let code = match g.gen_range(0..10) {
                0..=4 => 0,
                5..=7 => 1,
                _ => 2 + g.gen_range(0..table as u16),
            };
            m.cols.push(col);
            m.codes.push(code);
        }
        m.row_start.push(m.cols.len() as u32);
    }
    m
}

/// Values as Filecoin's are: mostly 0 and 1, some anything.
fn witness_values(n: usize, seed: u64) -> Vec<Scalar> {
    let mut g = rng(seed);
    let random = random_scalars(n, seed ^ 0xabcd);
    (0..n)
        .map(|i| match g.gen_range(0..4) {
            0 => Scalar::ZERO,
            1 | 2 => Scalar::ONE,
            _ => random[i],
        })
        .collect()
}

fn product(m: &Csr, table: &[Scalar], input: &[Scalar], aux: &[Scalar]) -> Vec<Scalar> {
    (0..m.row_start.len() - 1)
        .map(|r| {
            let (s, e) = (m.row_start[r] as usize, m.row_start[r + 1] as usize);
            let mut acc = Scalar::ZERO;
            for k in s..e {
                let c = m.cols[k];
                let v = if c & INPUT != 0 {
                    input[(c & !INPUT) as usize]
                } else {
                    aux[c as usize]
                };
                acc += match m.codes[k] {
                    0 => v,
                    1 => -v,
                    code => v * table[code as usize - 2],
                };
            }
            acc
        })
        .collect()
}

#[test]
fn matvec_equals_the_host_product() {
    let Some(mut ctx) = gpu() else { return };
    for (rows, inputs, aux, seed) in [
        (1usize, 1usize, 1usize, 1u64),
        (1000, 3, 700, 2),
        (70_001, 17, 50_000, 3),
    ] {
        let table = random_scalars(5, seed ^ 7);
        let m: Vec<Csr> = (0..3)
            .map(|k| random_csr(rows, inputs, aux, table.len(), seed * 10 + k))
            .collect();
        let input = witness_values(inputs, seed ^ 11);
        let aux_values = witness_values(aux, seed ^ 13);
        let on_device = ctx
            .upload_r1cs([m[0].view(), m[1].view(), m[2].view()], &table, inputs, aux)
            .expect("upload");
        assert_eq!(on_device.rows(), rows);
        let got = ctx
            .r1cs_evaluate(&on_device, &input, &aux_values)
            .expect("r1cs_evaluate");
        for (k, name) in ["a", "b", "c"].iter().enumerate() {
            let want = product(&m[k], &table, &input, &aux_values);
            assert_eq!(got[k].len(), rows);
            if let Some(r) = (0..rows).find(|&r| got[k][r] != want[r]) {
                panic!("{rows} rows: {name}[{r}] differs");
            }
        }
    }
}

#[test]
fn malformed_matrices_are_refused_and_the_context_keeps_working() {
    let Some(mut ctx) = gpu() else { return };
    let table = random_scalars(2, 5);
    let good = random_csr(100, 2, 50, table.len(), 21);
    let mut bad_col = random_csr(100, 2, 50, table.len(), 22);
    bad_col.cols[0] = 50; // one past the aux variables
    bad_col.cols.push(0);
    bad_col.codes.push(0);
    *bad_col.row_start.last_mut().unwrap() += 1;
    let mut bad_input = random_csr(100, 2, 50, table.len(), 23);
    bad_input.cols.push(INPUT | 2);
    bad_input.codes.push(0);
    *bad_input.row_start.last_mut().unwrap() += 1;
    let mut bad_code = random_csr(100, 2, 50, table.len(), 24);
    bad_code.cols.push(0);
    bad_code.codes.push(2 + table.len() as u16);
    *bad_code.row_start.last_mut().unwrap() += 1;
    let mut bad_span = random_csr(100, 2, 50, table.len(), 25);
    bad_span.cols.push(0);
    bad_span.codes.push(0);
    let short = random_csr(99, 2, 50, table.len(), 26);
    for (what, m) in [
        ("aux column", &bad_col),
        ("input column", &bad_input),
        ("code", &bad_code),
        ("offsets", &bad_span),
        ("row count", &short),
    ] {
        match ctx.upload_r1cs([good.view(), m.view(), good.view()], &table, 2, 50) {
            Err(GpuError::InvalidArgument(msg)) => assert!(msg.contains("B:"), "{what}: {msg}"),
            other => panic!("{what}: {other:?}"),
        }
    }
    let on_device = ctx
        .upload_r1cs([good.view(), good.view(), good.view()], &table, 2, 50)
        .expect("upload");
    let input = witness_values(2, 31);
    let aux = witness_values(50, 32);
    assert!(matches!(
        ctx.r1cs_evaluate(&on_device, &input[..1], &aux),
        Err(GpuError::InvalidArgument(_))
    ));
    let got = ctx
        .r1cs_evaluate(&on_device, &input, &aux)
        .expect("evaluate");
    assert_eq!(got[0], product(&good, &table, &input, &aux));
}
