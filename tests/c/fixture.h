/* The fixture written by `cuzk_fixtures` (src/bin/cuzk_fixtures.rs), read into memory and
 * laid out as cuzk_partition structs, plus the small check helpers the C host test uses. */
#ifndef CUZK_TEST_FIXTURE_H
#define CUZK_TEST_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

#include "cuzk.h"

typedef struct {
  uint8_t *data;
  size_t len;
} blob;

typedef struct {
  blob a, b, c, input, aux, public_inputs;
  blob a_aux_density, b_input_density, b_aux_density;
} fixture_partition;

typedef struct {
  size_t partitions, constraints, inputs, aux, public_inputs, domain_size;
  blob params, vk, r, s, proofs;
  fixture_partition *parts;
  cuzk_partition *abi; /* views into parts, ready for cuzk_prove_start */
} fixture;

/* Reads a whole file; exits the test on failure. free() the data. */
blob read_blob(const char *dir, const char *name);
/* Loads the fixture in `dir`; exits the test on failure. */
void fixture_load(fixture *f, const char *dir);
void fixture_free(fixture *f);

/* Test bookkeeping: CHECK records a failure with its line and goes on. */
extern int checks_passed, checks_failed;
void check(int ok, const char *what, const char *file, int line);
#define CHECK(cond) check((cond) ? 1 : 0, #cond, __FILE__, __LINE__)
/* `call` returns `want`, and a failure leaves a last-error message containing `needle`. */
void expect_status(cuzk_status got, cuzk_status want, const char *needle, const char *what,
                   const char *file, int line);
#define EXPECT(call, want, needle) expect_status((call), (want), (needle), #call, __FILE__, __LINE__)

#endif
