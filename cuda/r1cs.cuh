// A recorded R1CS matrix times the witness, one row per thread: a = A·w (and b, c), the
// evaluations the H step transforms, computed where the H step runs.
//
// The layout is src/r1cs/matrix.rs's: compressed sparse rows (row r's entries are
// [row_start[r], row_start[r + 1])), a 32-bit column per entry (the top bit set: an input,
// else an aux variable) and a 16-bit coefficient code (0: +1, 1: −1, 2 + i: table[i]). Most
// codes are ±1, so most entries are one field addition or subtraction; a table coefficient
// is multiplied only when the value is neither 0 nor 1 (most Filecoin values are bits).
#pragma once
#include "field.cuh"

#define CUZK_R1CS_INPUT_COLUMN 0x80000000u
#define CUZK_R1CS_PLUS_ONE 0
#define CUZK_R1CS_MINUS_ONE 1
#define CUZK_R1CS_FIRST_TABLE_CODE 2

HD bool cuzk_fr_is_zero(const fr_t& v) {
    uint32_t acc = 0;
    _Pragma("unroll") for (int i = 0; i < 8; i++) acc |= v.v[i];
    return acc == 0;
}

HD bool cuzk_fr_eq(const fr_t& a, const fr_t& b) {
    uint32_t acc = 0;
    _Pragma("unroll") for (int i = 0; i < 8; i++) acc |= a.v[i] ^ b.v[i];
    return acc == 0;
}

// out[r] for r < rows; the caller zeroes out[rows, n) (the domain's padding).
HD void r1cs_row_thread(uint32_t r, uint32_t rows, const uint32_t* row_start, const uint32_t* cols,
                        const uint16_t* codes, const fr_t* table, const fr_t* input, const fr_t* aux, fr_t* out) {
    if (r >= rows) return;
    const fr_t one = fr_t::one();
    fr_t acc = fr_t::zero();
    const uint32_t end = row_start[r + 1];
    for (uint32_t k = row_start[r]; k < end; k++) {
        const uint32_t col = cols[k];
        const fr_t v = (col & CUZK_R1CS_INPUT_COLUMN) ? input[col & ~CUZK_R1CS_INPUT_COLUMN] : aux[col];
        const uint16_t code = codes[k];
        if (code == CUZK_R1CS_PLUS_ONE) {
            acc = acc + v;
        } else if (code == CUZK_R1CS_MINUS_ONE) {
            acc = acc - v;
        } else {
            const fr_t& c = table[code - CUZK_R1CS_FIRST_TABLE_CODE];
            if (cuzk_fr_eq(v, one)) {
                acc = acc + c;
            } else if (!cuzk_fr_is_zero(v)) {
                acc = acc + v * c;
            }
        }
    }
    out[r] = acc;
}
