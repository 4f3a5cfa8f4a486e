//! A recorded circuit's A, B and C on the device, and their product with a witness there:
//! the evaluations a, b and c that the H step transforms, made where the H step runs, so
//! that the host neither computes nor uploads them (issue 14's "a, b, c on the GPU").
//!
//! The matrices are uploaded once per circuit shape and stay (like a resident SRS); per
//! proof only the witness goes up, and the aux values uploaded for the MSMs serve the
//! mat-vec too. The kernel (`cuda/r1cs.cuh`) takes one row per thread.

use blstrs::Scalar;
use cudarc::driver::sys;
use ff::Field;
use rayon::prelude::*;

use super::driver::{DevBuf, DevPtr, GpuContext, Scratch};
use super::gather::DeviceScalars;
use super::{CsrMatrix, GpuError};

/// The column bit that marks an input (`src/r1cs/recorded.rs`, `cuda/r1cs.cuh`).
const INPUT_COLUMN: u32 = 1 << 31;
/// The first code that indexes the coefficient table (0 is +1, 1 is −1).
const FIRST_TABLE_CODE: u16 = 2;

struct DeviceCsr {
    row_start: DevBuf,
    cols: DevBuf,
    codes: DevBuf,
}

/// A circuit shape's A, B and C and coefficient table on one device, made by
/// [`GpuContext::upload_r1cs`]. Drop it before the `GpuContext` it came from.
pub struct DeviceR1cs {
    // Field order: the buffers are freed (in their own Drop) after this struct's Drop made
    // `ctx` current.
    matrices: [DeviceCsr; 3],
    table: DevBuf,
    rows: usize,
    inputs: usize,
    aux: usize,
    bytes: usize,
    ctx: sys::CUcontext,
}

// SAFETY: device allocations and the context handle they belong to; freeing binds the context.
unsafe impl Send for DeviceR1cs {}
unsafe impl Sync for DeviceR1cs {}

impl DeviceR1cs {
    /// Rows (constraints, the per-input ones included) of each matrix.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Device memory held, in bytes.
    pub fn device_bytes(&self) -> usize {
        self.bytes
    }
}

impl std::fmt::Debug for DeviceR1cs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceR1cs")
            .field("rows", &self.rows)
            .field("inputs", &self.inputs)
            .field("aux", &self.aux)
            .finish_non_exhaustive()
    }
}

impl Drop for DeviceR1cs {
    fn drop(&mut self) {
        // cuMemFree needs a current context; the buffers are freed right after this.
        let _ = unsafe { cudarc::driver::result::ctx::set_current(self.ctx) };
    }
}

/// Checks that `m` is a well-formed matrix of `rows` rows over `inputs` inputs and `aux` aux
/// variables whose codes name `table_len` table entries: the kernel reads where the offsets,
/// columns and codes say, so a bad entry would be an illegal address on the device (which
/// poisons the whole context), not a wrong answer.
fn check_matrix(
    which: &str,
    m: &CsrMatrix<'_>,
    rows: usize,
    inputs: usize,
    aux: usize,
    table_len: usize,
) -> Result<(), GpuError> {
    let bad = |what: String| {
        Err(GpuError::InvalidArgument(format!(
            "upload_r1cs: {which}: {what}"
        )))
    };
    if m.row_start.len() != rows + 1 {
        return bad(format!("{} row offsets for {rows} rows", m.row_start.len()));
    }
    if m.cols.len() != m.codes.len() {
        return bad(format!(
            "{} columns but {} codes",
            m.cols.len(),
            m.codes.len()
        ));
    }
    if m.row_start[0] != 0 || m.row_start[rows] as usize != m.cols.len() {
        return bad("the row offsets do not span the entries".into());
    }
    if m.row_start.par_windows(2).any(|w| w[0] > w[1]) {
        return bad("the row offsets decrease".into());
    }
    let col_ok = |c: u32| {
        if c & INPUT_COLUMN != 0 {
            ((c & !INPUT_COLUMN) as usize) < inputs
        } else {
            (c as usize) < aux
        }
    };
    if !m.cols.par_iter().all(|&c| col_ok(c)) {
        return bad(format!(
            "a column beyond the {inputs} inputs or {aux} aux variables"
        ));
    }
    let max_code = FIRST_TABLE_CODE as usize + table_len;
    if !m.codes.par_iter().all(|&c| (c as usize) < max_code) {
        return bad(format!(
            "a code beyond the {table_len}-entry coefficient table"
        ));
    }
    Ok(())
}

impl GpuContext {
    /// Uploads a circuit shape's A, B and C (in that order) and its coefficient table, for
    /// [`Self::r1cs_evaluate`] and the start phase. Every offset, column and code is checked
    /// first.
    pub fn upload_r1cs(
        &mut self,
        matrices: [CsrMatrix<'_>; 3],
        table: &[Scalar],
        inputs: usize,
        aux: usize,
    ) -> Result<DeviceR1cs, GpuError> {
        let rows = matrices[0].row_start.len().saturating_sub(1);
        if rows >= 1 << 31 || inputs >= 1 << 31 || aux >= 1 << 31 {
            return Err(GpuError::InvalidArgument(format!(
                "upload_r1cs: {rows} rows, {inputs} inputs, {aux} aux: each must be below 2^31"
            )));
        }
        for (m, which) in matrices.iter().zip(["A", "B", "C"]) {
            check_matrix(which, m, rows, inputs, aux, table.len())?;
        }
        self.bind()?;
        let mut bytes = 0;
        let mut mats = Vec::with_capacity(3);
        for m in &matrices {
            mats.push(DeviceCsr {
                row_start: self.upload_new(m.row_start, &mut bytes)?,
                cols: self.upload_new(m.cols, &mut bytes)?,
                codes: self.upload_new(m.codes, &mut bytes)?,
            });
        }
        let table = self.upload_new(table, &mut bytes)?;
        self.sync()?;
        let matrices: [DeviceCsr; 3] = mats.try_into().ok().expect("three matrices");
        Ok(DeviceR1cs {
            matrices,
            table,
            rows,
            inputs,
            aux,
            bytes,
            ctx: self.cu_ctx(),
        })
    }

    /// A new device buffer holding `data` (its size added to `bytes`).
    fn upload_new<T: Copy>(&mut self, data: &[T], bytes: &mut usize) -> Result<DevBuf, GpuError> {
        let b = self.alloc(std::mem::size_of_val(data))?;
        self.upload_staged(b.ptr(), data)?;
        *bytes += b.bytes;
        Ok(b)
    }

    /// a, b and c of a witness (its inputs from the host, its aux values already on the
    /// device) into the H step's buffers, zero-padded to `n` (≥ the rows). Returns where they
    /// are; they stay valid until the next call that uses those buffers.
    pub(crate) fn r1cs_evaluations_into_ntt(
        &mut self,
        r1cs: &DeviceR1cs,
        input: &[Scalar],
        aux: &DeviceScalars,
        n: usize,
    ) -> Result<[DevPtr<Scalar>; 3], GpuError> {
        if r1cs.ctx != self.cu_ctx() || aux.context() != self.cu_ctx() {
            return Err(GpuError::InvalidArgument(
                "r1cs_evaluate: the matrices or the aux values live on another device".into(),
            ));
        }
        if input.len() != r1cs.inputs || aux.len() != r1cs.aux || n < r1cs.rows {
            return Err(GpuError::InvalidArgument(format!(
                "r1cs_evaluate: {} inputs and {} aux values into {n} rows, but the matrices \
                 have {} inputs, {} aux variables and {} rows",
                input.len(),
                aux.len(),
                r1cs.inputs,
                r1cs.aux,
                r1cs.rows
            )));
        }
        self.bind()?;
        let out = [
            self.scratch(Scratch::NttA, n)?,
            self.scratch(Scratch::NttB, n)?,
            self.scratch(Scratch::NttC, n)?,
        ];
        let d_input = self.scratch(Scratch::R1csInputs, input.len().max(1))?;
        self.upload(d_input, input)?;
        for (m, &o) in r1cs.matrices.iter().zip(&out) {
            // SAFETY: upload_r1cs checked every offset, column and code against the counts
            // the inputs and aux values were just checked against; `o` has n ≥ rows elements.
            unsafe {
                self.r1cs_matvec(
                    r1cs.rows as u32,
                    m.row_start.ptr(),
                    m.cols.ptr(),
                    m.codes.ptr(),
                    r1cs.table.ptr(),
                    d_input,
                    aux.device_ptr(),
                    o,
                )?;
            }
            if n > r1cs.rows {
                self.memset0(o.add(r1cs.rows), n - r1cs.rows)?;
            }
        }
        Ok(out)
    }

    /// a = A·w, b = B·w, c = C·w on the device, downloaded (one element per row): what
    /// `RecordedCircuit::evaluate` computes on the host, for tests and benchmarks.
    pub fn r1cs_evaluate(
        &mut self,
        r1cs: &DeviceR1cs,
        input: &[Scalar],
        aux: &[Scalar],
    ) -> Result<[Vec<Scalar>; 3], GpuError> {
        let d_aux = self.upload_scalars(aux)?;
        let rows = r1cs.rows;
        let out = self.r1cs_evaluations_into_ntt(r1cs, input, &d_aux, rows.max(1))?;
        let mut v = [
            vec![Scalar::ZERO; rows],
            vec![Scalar::ZERO; rows],
            vec![Scalar::ZERO; rows],
        ];
        for (dst, &src) in v.iter_mut().zip(&out) {
            self.download(dst, src)?;
        }
        self.sync()?;
        Ok(v)
    }
}
