/* C11 host test of the cuzk C ABI: loads the fixture's params, proves its partitions through
 * start/finish, compares the proofs with the expected bytes, verifies them, reads the stats,
 * then runs a matrix of bad inputs (each must return its status with a message naming the
 * argument) and proves a good job again on the same engine.
 *
 * Usage: host FIXTURE_DIR SCRATCH_DIR. Built and run under AddressSanitizer by
 * tests/ffi_hosts.rs. */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuzk.h"
#include "fixture.h"

static const char *fixture_dir;
/* Each partition gives its memory back just after its proof is stored, so right after a
 * finish the engine may still hold a few bytes for a moment: wait (up to 10 s) for zero. */
static uint64_t reserved_when_idle(cuzk_engine *engine) {
  cuzk_stats s;
  memset(&s, 0, sizeof s);
  for (int i = 0; i < 10000; i++) {
    s.size = sizeof s;
    if (cuzk_get_stats(engine, &s) != CUZK_STATUS_OK || s.memory_reserved_bytes == 0) break;
    struct timespec ms = {0, 1000000};
    nanosleep(&ms, NULL);
  }
  return s.memory_reserved_bytes;
}

static const char *scratch_dir;

/* Proves the whole fixture on `engine` with its fixed r and s and checks every proof byte. */
static void prove_and_compare(cuzk_engine *engine, cuzk_srs *srs, const fixture *f) {
  cuzk_prove_options o;
  memset(&o, 0, sizeof o);
  o.size = sizeof o;
  o.priority = CUZK_PRIORITY_POREP_SNAP;
  o.r = f->r.data;
  o.s = f->s.data;
  o.rs_len = f->partitions;
  cuzk_job *job = NULL;
  EXPECT(cuzk_prove_start(engine, srs, f->abi, f->partitions, &o, &job), CUZK_STATUS_OK, NULL);
  CHECK(job != NULL);
  size_t n = 0;
  EXPECT(cuzk_job_partitions(job, &n), CUZK_STATUS_OK, NULL);
  CHECK(n == f->partitions);
  size_t len = f->partitions * CUZK_PROOF_BYTES;
  uint8_t *proofs = calloc(1, len);
  EXPECT(cuzk_prove_finish(job, CUZK_WAIT_FOREVER, proofs, len), CUZK_STATUS_OK, NULL);
  CHECK(len == f->proofs.len && memcmp(proofs, f->proofs.data, len) == 0);

  cuzk_job_state state = CUZK_JOB_STATE_PENDING;
  size_t proved = 0, total = 0;
  EXPECT(cuzk_job_poll(job, &state, &proved, &total), CUZK_STATUS_OK, NULL);
  CHECK(state == CUZK_JOB_STATE_DONE && proved == n && total == n);

  for (size_t i = 0; i < f->partitions; i++) {
    const blob *pub = &f->parts[i].public_inputs;
    size_t n_pub = pub->len / CUZK_SCALAR_BYTES;
    bool ok = false;
    EXPECT(cuzk_srs_verify(srs, proofs + i * CUZK_PROOF_BYTES, CUZK_PROOF_BYTES, pub->data, n_pub,
                           &ok),
           CUZK_STATUS_OK, NULL);
    CHECK(ok);
    ok = false;
    EXPECT(cuzk_verify(f->vk.data, f->vk.len, proofs + i * CUZK_PROOF_BYTES, CUZK_PROOF_BYTES,
                       pub->data, n_pub, &ok),
           CUZK_STATUS_OK, NULL);
    CHECK(ok);
  }
  free(proofs);
  cuzk_job_free(job);
}

static void write_file(const char *path, const uint8_t *data, size_t len) {
  FILE *fp = fopen(path, "wb");
  if (!fp || fwrite(data, 1, len, fp) != len) {
    fprintf(stderr, "cannot write %s\n", path);
    exit(2);
  }
  fclose(fp);
}

static void bad_params(void) {
  cuzk_srs *srs = (cuzk_srs *)(uintptr_t)1; /* must come back NULL on failure */
  EXPECT(cuzk_srs_load(NULL, true, &srs), CUZK_STATUS_INVALID_ARGUMENT, "`path`");
  CHECK(srs == NULL);
  EXPECT(cuzk_srs_load("", true, &srs), CUZK_STATUS_INVALID_ARGUMENT, "`path`");
  EXPECT(cuzk_srs_load("/nonexistent/cuzk.params", true, &srs), CUZK_STATUS_IO, "nonexistent");
  EXPECT(cuzk_srs_load("/nonexistent/cuzk.params", true, NULL), CUZK_STATUS_INVALID_ARGUMENT,
         "`srs`");

  blob params = read_blob(fixture_dir, "params.bin");
  char path[4096];
  /* Truncated: a whole file cut short, through the file path and the memory path. */
  snprintf(path, sizeof path, "%s/truncated.params", scratch_dir);
  write_file(path, params.data, params.len - 100);
  EXPECT(cuzk_srs_load(path, false, &srs), CUZK_STATUS_INVALID_PARAMS, "truncated.params");
  CHECK(srs == NULL);
  EXPECT(cuzk_srs_from_bytes(params.data, params.len / 2, false, &srs),
         CUZK_STATUS_INVALID_PARAMS, NULL);
  EXPECT(cuzk_srs_from_bytes(params.data, 0, false, &srs), CUZK_STATUS_INVALID_ARGUMENT, "`len`");
  EXPECT(cuzk_srs_from_bytes(NULL, 100, false, &srs), CUZK_STATUS_INVALID_ARGUMENT, "`data`");
  /* Trailing garbage after the last section. */
  uint8_t *longer = malloc(params.len + 7);
  memcpy(longer, params.data, params.len);
  memset(longer + params.len, 0xab, 7);
  EXPECT(cuzk_srs_from_bytes(longer, params.len + 7, false, &srs), CUZK_STATUS_INVALID_PARAMS,
         NULL);
  free(longer);
  /* Corrupt: a byte of the first point (vk.alpha_g1's x coordinate) flipped. */
  params.data[20] ^= 0x5a;
  snprintf(path, sizeof path, "%s/corrupt.params", scratch_dir);
  write_file(path, params.data, params.len);
  EXPECT(cuzk_srs_load(path, true, &srs), CUZK_STATUS_INVALID_PARAMS, "alpha_g1");
  CHECK(srs == NULL);
  EXPECT(cuzk_srs_from_bytes(params.data, params.len, true, &srs), CUZK_STATUS_INVALID_PARAMS,
         "alpha_g1");
  free(params.data);
}

/* A partition copy the bad-input cases mutate. */
static cuzk_partition part0(const fixture *f) { return f->abi[0]; }

static void bad_prove(cuzk_engine *engine, cuzk_srs *srs, const fixture *f) {
  cuzk_job *job = (cuzk_job *)(uintptr_t)1;
  cuzk_partition p;
  const cuzk_partition *good = f->abi;
  size_t n = f->partitions;

  EXPECT(cuzk_prove_start(NULL, srs, good, n, NULL, &job), CUZK_STATUS_INVALID_ARGUMENT,
         "`engine`");
  CHECK(job == NULL);
  EXPECT(cuzk_prove_start(engine, NULL, good, n, NULL, &job), CUZK_STATUS_INVALID_ARGUMENT,
         "`srs`");
  EXPECT(cuzk_prove_start(engine, srs, NULL, n, NULL, &job), CUZK_STATUS_INVALID_ARGUMENT,
         "`partitions`");
  EXPECT(cuzk_prove_start(engine, srs, good, 0, NULL, &job), CUZK_STATUS_INVALID_ARGUMENT, "`n`");
  EXPECT(cuzk_prove_start(engine, srs, good, n, NULL, NULL), CUZK_STATUS_INVALID_ARGUMENT,
         "`job`");

  /* NULL buffers with non-zero lengths, one per pointer field. */
  p = part0(f); p.a = NULL;
  EXPECT(cuzk_prove_start(engine, srs, &p, 1, NULL, &job), CUZK_STATUS_INVALID_ARGUMENT,
         "partitions[0].a");
  p = part0(f); p.aux = NULL;
  EXPECT(cuzk_prove_start(engine, srs, &p, 1, NULL, &job), CUZK_STATUS_INVALID_ARGUMENT,
         "partitions[0].aux");
  p = part0(f); p.input = NULL;
  EXPECT(cuzk_prove_start(engine, srs, &p, 1, NULL, &job), CUZK_STATUS_INVALID_ARGUMENT,
         "partitions[0].input");
  p = part0(f); p.b_aux_density = NULL;
  EXPECT(cuzk_prove_start(engine, srs, &p, 1, NULL, &job), CUZK_STATUS_INVALID_ARGUMENT,
         "partitions[0].b_aux_density");

  /* Lengths no buffer can have: the byte count overflows, or passes the largest object. */
  p = part0(f); p.a_len = SIZE_MAX;
  EXPECT(cuzk_prove_start(engine, srs, &p, 1, NULL, &job), CUZK_STATUS_INVALID_ARGUMENT,
         "partitions[0].a");
  p = part0(f); p.aux_len = SIZE_MAX / CUZK_SCALAR_BYTES;
  EXPECT(cuzk_prove_start(engine, srs, &p, 1, NULL, &job), CUZK_STATUS_INVALID_ARGUMENT,
         "impossible length");
  EXPECT(cuzk_prove_start(engine, srs, good, SIZE_MAX, NULL, &job), CUZK_STATUS_INVALID_ARGUMENT,
         "`partitions`");

  /* Wrong and zero lengths. */
  p = part0(f); p.b_len -= 1;
  EXPECT(cuzk_prove_start(engine, srs, &p, 1, NULL, &job), CUZK_STATUS_INVALID_ASSIGNMENT,
         "partition 0");
  p = part0(f); p.aux_len -= 1;
  EXPECT(cuzk_prove_start(engine, srs, &p, 1, NULL, &job), CUZK_STATUS_INVALID_ASSIGNMENT,
         "aux");
  p = part0(f); p.a_len = 0; p.b_len = 0; p.c_len = 0;
  EXPECT(cuzk_prove_start(engine, srs, &p, 1, NULL, &job), CUZK_STATUS_EMPTY_CIRCUIT, "empty");
  p = part0(f); p.input_len = 0;
  EXPECT(cuzk_prove_start(engine, srs, &p, 1, NULL, &job), CUZK_STATUS_EMPTY_CIRCUIT, "empty");

  /* Bitmaps of the wrong size: words that don't match the bits, bits that don't match the
   * variables, and a bit set past the end. */
  p = part0(f); p.a_aux_density_words += 1;
  EXPECT(cuzk_prove_start(engine, srs, &p, 1, NULL, &job), CUZK_STATUS_INVALID_ASSIGNMENT,
         "partitions[0].a_aux_density");
  p = part0(f); p.b_input_density_bits += 1;
  EXPECT(cuzk_prove_start(engine, srs, &p, 1, NULL, &job), CUZK_STATUS_INVALID_ASSIGNMENT,
         "b_input_density");
  {
    uint64_t *words = malloc(p.b_aux_density_words * 8);
    memcpy(words, f->abi[0].b_aux_density, f->abi[0].b_aux_density_words * 8);
    p = part0(f);
    if (p.b_aux_density_bits % 64 != 0) {
      words[p.b_aux_density_words - 1] |= (uint64_t)1 << 63;
      p.b_aux_density = words;
      EXPECT(cuzk_prove_start(engine, srs, &p, 1, NULL, &job), CUZK_STATUS_INVALID_ASSIGNMENT,
             "past its end");
    }
    /* A bit cleared: the popcount no longer matches the params' b_g1 section. */
    memcpy(words, f->abi[0].b_aux_density, f->abi[0].b_aux_density_words * 8);
    for (size_t w = 0; w < p.b_aux_density_words; w++) {
      if (words[w] != 0) {
        words[w] &= words[w] - 1;
        break;
      }
    }
    p.b_aux_density = words;
    EXPECT(cuzk_prove_start(engine, srs, &p, 1, NULL, &job), CUZK_STATUS_INVALID_ASSIGNMENT,
           "b_g1");
    free(words);
  }

  /* Scalars >= r: all-ones bytes in one aux scalar, and r itself in an evaluation. */
  {
    uint8_t *aux = malloc(f->parts[0].aux.len);
    memcpy(aux, f->parts[0].aux.data, f->parts[0].aux.len);
    memset(aux + 2 * CUZK_SCALAR_BYTES, 0xff, CUZK_SCALAR_BYTES);
    p = part0(f); p.aux = aux;
    EXPECT(cuzk_prove_start(engine, srs, &p, 1, NULL, &job), CUZK_STATUS_INVALID_ASSIGNMENT,
           "partitions[0].aux[2]");
    free(aux);
    static const uint8_t r_le[32] = {
        0x01, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0xfe, 0x5b, 0xfe, 0xff, 0x02, 0xa4, 0xbd, 0x53,
        0x05, 0xd8, 0xa1, 0x09, 0x08, 0xd8, 0x39, 0x33, 0x48, 0x7d, 0x9d, 0x29, 0x53, 0xa7, 0xed, 0x73};
    uint8_t *c = malloc(f->parts[0].c.len);
    memcpy(c, f->parts[0].c.data, f->parts[0].c.len);
    memcpy(c, r_le, 32);
    p = part0(f); p.c = c;
    EXPECT(cuzk_prove_start(engine, srs, &p, 1, NULL, &job), CUZK_STATUS_INVALID_ASSIGNMENT,
           "not reduced");
    free(c);
  }
  /* input[0] must be ONE. */
  {
    uint8_t *input = malloc(f->parts[0].input.len);
    memcpy(input, f->parts[0].input.data, f->parts[0].input.len);
    input[0] = 2;
    p = part0(f); p.input = input;
    EXPECT(cuzk_prove_start(engine, srs, &p, 1, NULL, &job), CUZK_STATUS_INVALID_ASSIGNMENT,
           "input[0]");
    free(input);
  }
  /* One bad partition among good ones fails the whole job and is named. */
  {
    cuzk_partition *many = malloc(n * sizeof *many);
    memcpy(many, good, n * sizeof *many);
    many[n - 1].c_len -= 1;
    char needle[32];
    snprintf(needle, sizeof needle, "partition %zu", n - 1);
    EXPECT(cuzk_prove_start(engine, srs, many, n, NULL, &job), CUZK_STATUS_INVALID_ASSIGNMENT,
           needle);
    free(many);
  }

  /* Options. */
  cuzk_prove_options o;
  memset(&o, 0, sizeof o);
  o.size = sizeof o;
  o.priority = 99;
  EXPECT(cuzk_prove_start(engine, srs, good, n, &o, &job), CUZK_STATUS_INVALID_ARGUMENT,
         "priority");
  o.priority = 0;
  o.flags = 0x80;
  EXPECT(cuzk_prove_start(engine, srs, good, n, &o, &job), CUZK_STATUS_INVALID_ARGUMENT, "flags");
  o.flags = 0;
  o.r = f->r.data;
  o.rs_len = n;
  EXPECT(cuzk_prove_start(engine, srs, good, n, &o, &job), CUZK_STATUS_INVALID_ARGUMENT,
         "both");
  o.s = f->s.data;
  o.rs_len = n - 1;
  EXPECT(cuzk_prove_start(engine, srs, good, n, &o, &job), CUZK_STATUS_INVALID_ARGUMENT,
         "rs_len");
  o.size = 3;
  EXPECT(cuzk_prove_start(engine, srs, good, n, &o, &job), CUZK_STATUS_INVALID_ARGUMENT,
         "`options`");
  {
    /* A newer host's bigger struct with a field this library does not know set. */
    unsigned char bigger[sizeof(cuzk_prove_options) + 16];
    memset(bigger, 0, sizeof bigger);
    size_t sz = sizeof bigger;
    memcpy(bigger, &sz, sizeof sz);
    bigger[sizeof(cuzk_prove_options) + 3] = 1;
    EXPECT(cuzk_prove_start(engine, srs, good, n, (const cuzk_prove_options *)(void *)bigger, &job),
           CUZK_STATUS_INVALID_ARGUMENT, "newer header");
  }
  CHECK(job == NULL);
}

static void bad_job_calls(cuzk_engine *engine, cuzk_srs *srs, const fixture *f) {
  size_t n = f->partitions;
  cuzk_job *job = NULL;
  EXPECT(cuzk_prove_start(engine, srs, f->abi, n, NULL, &job), CUZK_STATUS_OK, NULL);
  uint8_t *proofs = malloc(n * CUZK_PROOF_BYTES);
  EXPECT(cuzk_prove_finish(NULL, 0, proofs, n * CUZK_PROOF_BYTES), CUZK_STATUS_INVALID_ARGUMENT,
         "`job`");
  EXPECT(cuzk_prove_finish(job, 0, NULL, n * CUZK_PROOF_BYTES), CUZK_STATUS_INVALID_ARGUMENT,
         "`proofs`");
  EXPECT(cuzk_prove_finish(job, CUZK_WAIT_FOREVER, proofs, n * CUZK_PROOF_BYTES - 1),
         CUZK_STATUS_BUFFER_TOO_SMALL, "`proofs`");
  EXPECT(cuzk_prove_finish(job, CUZK_WAIT_FOREVER, proofs, 0), CUZK_STATUS_BUFFER_TOO_SMALL,
         "`proofs`");
  EXPECT(cuzk_job_poll(job, NULL, NULL, NULL), CUZK_STATUS_INVALID_ARGUMENT, "`state`");
  EXPECT(cuzk_job_poll(NULL, NULL, NULL, NULL), CUZK_STATUS_INVALID_ARGUMENT, "`job`");
  EXPECT(cuzk_job_partitions(job, NULL), CUZK_STATUS_INVALID_ARGUMENT, "`n`");
  EXPECT(cuzk_job_cancel(NULL, NULL), CUZK_STATUS_INVALID_ARGUMENT, "`job`");
  /* Random r and s: the proofs verify but differ from the fixed-r/s ones. */
  EXPECT(cuzk_prove_finish(job, CUZK_WAIT_FOREVER, proofs, n * CUZK_PROOF_BYTES), CUZK_STATUS_OK,
         NULL);
  CHECK(memcmp(proofs, f->proofs.data, CUZK_PROOF_BYTES) != 0);
  bool ok = false;
  EXPECT(cuzk_srs_verify(srs, proofs, CUZK_PROOF_BYTES, f->parts[0].public_inputs.data,
                         f->public_inputs, &ok),
         CUZK_STATUS_OK, NULL);
  CHECK(ok);
  bool cancelled = true;
  EXPECT(cuzk_job_cancel(job, &cancelled), CUZK_STATUS_OK, NULL);
  CHECK(!cancelled); /* it had already ended */
  cuzk_job_free(job);
  free(proofs);
}

/* Finish after cancel: a low-priority job queued behind a backlog of WinningPoSt jobs is
 * cancelled while it waits; its finish must report CUZK_STATUS_CANCELLED. */
static void finish_after_cancel(cuzk_engine *engine, cuzk_srs *srs, const fixture *f) {
  size_t n = f->partitions;
  int seen_cancel = 0;
  for (int attempt = 0; attempt < 5 && !seen_cancel; attempt++) {
    cuzk_job *blockers[4] = {NULL, NULL, NULL, NULL};
    cuzk_prove_options hi;
    memset(&hi, 0, sizeof hi);
    hi.size = sizeof hi;
    hi.priority = CUZK_PRIORITY_WINNING_POST;
    for (int b = 0; b < 4; b++) {
      EXPECT(cuzk_prove_start(engine, srs, f->abi, n, &hi, &blockers[b]), CUZK_STATUS_OK, NULL);
    }
    cuzk_prove_options lo;
    memset(&lo, 0, sizeof lo);
    lo.size = sizeof lo;
    lo.priority = CUZK_PRIORITY_OTHER;
    cuzk_job *victim = NULL;
    EXPECT(cuzk_prove_start(engine, srs, f->abi, n, &lo, &victim), CUZK_STATUS_OK, NULL);
    bool cancelled = false;
    EXPECT(cuzk_job_cancel(victim, &cancelled), CUZK_STATUS_OK, NULL);
    uint8_t *proofs = malloc(n * CUZK_PROOF_BYTES);
    cuzk_job_state state = CUZK_JOB_STATE_PENDING;
    EXPECT(cuzk_job_poll(victim, &state, NULL, NULL), CUZK_STATUS_OK, NULL);
    if (cancelled) {
      seen_cancel = 1;
      CHECK(state == CUZK_JOB_STATE_CANCELLED);
      EXPECT(cuzk_prove_finish(victim, CUZK_WAIT_FOREVER, proofs, n * CUZK_PROOF_BYTES),
             CUZK_STATUS_CANCELLED, "cancelled");
      /* A second cancel is a no-op. */
      EXPECT(cuzk_job_cancel(victim, &cancelled), CUZK_STATUS_OK, NULL);
      CHECK(!cancelled);
    }
    cuzk_job_free(victim);
    for (int b = 0; b < 4; b++) {
      EXPECT(cuzk_prove_finish(blockers[b], CUZK_WAIT_FOREVER, proofs, n * CUZK_PROOF_BYTES),
             CUZK_STATUS_OK, NULL);
      cuzk_job_free(blockers[b]);
    }
    free(proofs);
  }
  CHECK(seen_cancel);
  /* Freeing a running job cancels it (and must not leak: LeakSanitizer watches). */
  cuzk_job *dropped = NULL;
  EXPECT(cuzk_prove_start(engine, srs, f->abi, n, NULL, &dropped), CUZK_STATUS_OK, NULL);
  cuzk_job_free(dropped);
}

static void bad_engine_and_stats(cuzk_engine *engine) {
  cuzk_engine *e = (cuzk_engine *)(uintptr_t)1;
  EXPECT(cuzk_engine_new(NULL, NULL), CUZK_STATUS_INVALID_ARGUMENT, "`engine`");
  cuzk_config c;
  memset(&c, 0, sizeof c);
  c.size = 4;
  EXPECT(cuzk_engine_new(&c, &e), CUZK_STATUS_INVALID_ARGUMENT, "`config`");
  CHECK(e == NULL);
  c.size = sizeof c;
  c.flags = 0x100;
  EXPECT(cuzk_engine_new(&c, &e), CUZK_STATUS_INVALID_ARGUMENT, "unknown flags");
  c.flags = 0;
  c.cpu_devices = 1000;
  EXPECT(cuzk_engine_new(&c, &e), CUZK_STATUS_INVALID_ARGUMENT, "devices");

  cuzk_stats s;
  memset(&s, 0, sizeof s);
  EXPECT(cuzk_get_stats(engine, &s), CUZK_STATUS_INVALID_ARGUMENT, "`stats`");
  s.size = sizeof s;
  EXPECT(cuzk_get_stats(NULL, &s), CUZK_STATUS_INVALID_ARGUMENT, "`engine`");
  EXPECT(cuzk_get_stats(engine, NULL), CUZK_STATUS_INVALID_ARGUMENT, "`stats`");
  /* An older host's shorter struct: only the fields it knows are written. */
  {
    struct {
      size_t size;
      uint64_t uptime_ns;
      uint64_t jobs_admitted;
      uint64_t canary;
    } old;
    old.size = offsetof(cuzk_stats, jobs_rejected);
    old.canary = 0x1234;
    EXPECT(cuzk_get_stats(engine, (cuzk_stats *)(void *)&old), CUZK_STATUS_OK, NULL);
    CHECK(old.size == offsetof(cuzk_stats, jobs_rejected));
    CHECK(old.jobs_admitted > 0 && old.canary == 0x1234);
  }

  size_t needed = 0;
  char small[8];
  EXPECT(cuzk_stats_prometheus(engine, small, sizeof small, &needed), CUZK_STATUS_BUFFER_TOO_SMALL,
         "`buf`");
  CHECK(needed > sizeof small);
  EXPECT(cuzk_stats_prometheus(engine, NULL, 10, &needed), CUZK_STATUS_INVALID_ARGUMENT, "`buf`");
  EXPECT(cuzk_stats_prometheus(engine, small, sizeof small, NULL), CUZK_STATUS_INVALID_ARGUMENT,
         "`needed`");
  EXPECT(cuzk_tracing_init("cuzk=[not a filter"), CUZK_STATUS_INVALID_ARGUMENT, "`env_filter`");
  CHECK(strcmp(cuzk_status_name(9999), "CUZK_STATUS_UNKNOWN") == 0);
  CHECK(strcmp(cuzk_status_name(CUZK_STATUS_PANIC), "CUZK_STATUS_PANIC") == 0);
}

static void bad_verify(cuzk_srs *srs, const fixture *f) {
  const uint8_t *proof = f->proofs.data;
  const blob *pub = &f->parts[0].public_inputs;
  size_t n_pub = f->public_inputs;
  bool ok = true;
  EXPECT(cuzk_srs_verify(srs, proof, CUZK_PROOF_BYTES - 1, pub->data, n_pub, &ok),
         CUZK_STATUS_INVALID_ARGUMENT, "`proof_len`");
  EXPECT(cuzk_srs_verify(srs, NULL, CUZK_PROOF_BYTES, pub->data, n_pub, &ok),
         CUZK_STATUS_INVALID_ARGUMENT, "`proof`");
  EXPECT(cuzk_srs_verify(srs, proof, CUZK_PROOF_BYTES, pub->data, n_pub, NULL),
         CUZK_STATUS_INVALID_ARGUMENT, "`ok`");
  EXPECT(cuzk_srs_verify(srs, proof, CUZK_PROOF_BYTES, pub->data, n_pub - 1, &ok),
         CUZK_STATUS_INVALID_ARGUMENT, "public inputs");
  EXPECT(cuzk_srs_verify(srs, proof, CUZK_PROOF_BYTES, NULL, n_pub, &ok),
         CUZK_STATUS_INVALID_ARGUMENT, "`inputs`");
  uint8_t bad[CUZK_PROOF_BYTES];
  memcpy(bad, proof, sizeof bad);
  bad[10] ^= 0xff;
  EXPECT(cuzk_srs_verify(srs, bad, sizeof bad, pub->data, n_pub, &ok), CUZK_STATUS_INVALID_PROOF,
         NULL);
  /* A well-formed proof against other public inputs: OK, and does not verify. */
  const blob *other = &f->parts[1].public_inputs;
  ok = true;
  EXPECT(cuzk_srs_verify(srs, proof, CUZK_PROOF_BYTES, other->data, n_pub, &ok), CUZK_STATUS_OK,
         NULL);
  CHECK(!ok);
  ok = true;
  EXPECT(cuzk_verify(f->vk.data, f->vk.len, proof, CUZK_PROOF_BYTES, other->data, n_pub, &ok),
         CUZK_STATUS_OK, NULL);
  CHECK(!ok);
  uint8_t *big = malloc(pub->len);
  memcpy(big, pub->data, pub->len);
  memset(big, 0xff, CUZK_SCALAR_BYTES);
  EXPECT(cuzk_srs_verify(srs, proof, CUZK_PROOF_BYTES, big, n_pub, &ok),
         CUZK_STATUS_INVALID_ARGUMENT, "inputs[0]");
  free(big);
  EXPECT(cuzk_verify(f->vk.data, f->vk.len - 1, proof, CUZK_PROOF_BYTES, pub->data, n_pub, &ok),
         CUZK_STATUS_INVALID_ARGUMENT, "vk");
  EXPECT(cuzk_verify(NULL, 5, proof, CUZK_PROOF_BYTES, pub->data, n_pub, &ok),
         CUZK_STATUS_INVALID_ARGUMENT, "`vk`");

  size_t needed = 0;
  uint8_t tiny[4];
  EXPECT(cuzk_srs_verifying_key(srs, tiny, sizeof tiny, &needed), CUZK_STATUS_BUFFER_TOO_SMALL,
         "`buf`");
  CHECK(needed == f->vk.len);
  EXPECT(cuzk_srs_verifying_key(NULL, tiny, sizeof tiny, &needed), CUZK_STATUS_INVALID_ARGUMENT,
         "`srs`");
  EXPECT(cuzk_srs_shape(srs, NULL), CUZK_STATUS_INVALID_ARGUMENT, "`shape`");
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s FIXTURE_DIR SCRATCH_DIR\n", argv[0]);
    return 2;
  }
  fixture_dir = argv[1];
  scratch_dir = argv[2];
  fixture f;
  fixture_load(&f, fixture_dir);

  const char *version = cuzk_version();
  char expect_prefix[64];
  snprintf(expect_prefix, sizeof expect_prefix, "cuzk %d.%d.%d (", CUZK_VERSION_MAJOR,
           CUZK_VERSION_MINOR, CUZK_VERSION_PATCH);
  CHECK(strncmp(version, expect_prefix, strlen(expect_prefix)) == 0);
  CHECK(strstr(version, "backend in use: cpu") != NULL);
  printf("version: %s\n", version);
  CHECK(strcmp(cuzk_last_error(), "") == 0);

  cuzk_config config;
  memset(&config, 0, sizeof config);
  config.size = sizeof config;
  config.flags = CUZK_CONFIG_TRIM_DISABLED;
  config.workers_per_device = 1;
  cuzk_engine *engine = NULL;
  EXPECT(cuzk_engine_new(&config, &engine), CUZK_STATUS_OK, NULL);
  if (engine == NULL) return 1;

  char params_path[4096];
  snprintf(params_path, sizeof params_path, "%s/params.bin", fixture_dir);
  cuzk_srs *srs = NULL;
  EXPECT(cuzk_srs_load(params_path, true, &srs), CUZK_STATUS_OK, NULL);
  if (srs == NULL) return 1;
  cuzk_circuit_shape info;
  EXPECT(cuzk_srs_shape(srs, &info), CUZK_STATUS_OK, NULL);
  CHECK(info.num_inputs == f.inputs && info.num_aux == f.aux &&
        info.domain_size == f.domain_size && info.num_public_inputs == f.public_inputs);
  size_t needed = 0;
  EXPECT(cuzk_srs_verifying_key(srs, NULL, 0, &needed), CUZK_STATUS_BUFFER_TOO_SMALL, NULL);
  CHECK(needed == f.vk.len);
  uint8_t *vk = malloc(needed);
  EXPECT(cuzk_srs_verifying_key(srs, vk, needed, &needed), CUZK_STATUS_OK, NULL);
  CHECK(memcmp(vk, f.vk.data, f.vk.len) == 0);
  free(vk);

  prove_and_compare(engine, srs, &f);

  /* Stats after one job of f.partitions partitions. */
  cuzk_stats stats;
  memset(&stats, 0, sizeof stats);
  stats.size = sizeof stats;
  EXPECT(cuzk_get_stats(engine, &stats), CUZK_STATUS_OK, NULL);
  CHECK(stats.size == sizeof stats);
  CHECK(stats.jobs_admitted == 1 && stats.jobs_finished == 1 && stats.jobs_rejected == 0);
  CHECK(stats.partitions_proved == f.partitions && stats.device_count == 1);
  CHECK(stats.devices[0].partitions == f.partitions && stats.devices[0].busy_ns > 0);
  CHECK(stats.mutex_hold.count == f.partitions && stats.finalize.count == f.partitions);
  CHECK(stats.memory_budget_bytes > 0 && stats.memory_peak_bytes > 0);
  /* Per-stage timings, one per partition, inside the device holds; a CPU device. */
  {
    const cuzk_latency *stages[] = {
        &stats.start_ntt,          &stats.start_ntt_upload, &stats.start_ntt_download,
        &stats.start_msm_h,        &stats.start_msm_l,      &stats.start_msm_a,
        &stats.start_msm_b_g1,     &stats.start_gather,     &stats.start_host_to_device,
        &stats.start_device_to_host,
    };
    for (size_t i = 0; i < sizeof stages / sizeof stages[0]; i++) {
      CHECK(stages[i]->count == f.partitions);
      CHECK(stages[i]->sum_ns <= stats.mutex_hold.sum_ns + 1000000);
    }
    CHECK(stats.start_msm_l.sum_ns > 0 && stats.start_host_to_device.sum_ns == 0);
    CHECK(stats.finalize_b_g2.count == f.partitions);
    CHECK(stats.device_backends[0].backend == CUZK_BACKEND_CPU);
    CHECK(stats.device_backends[0].gpu_ordinal == CUZK_NO_GPU_ORDINAL);
    CHECK(stats.device_kernel_active_ns[0] == 0); /* a CPU device runs no kernels */
  }
  CHECK(reserved_when_idle(engine) == 0);
  EXPECT(cuzk_stats_prometheus(engine, NULL, 0, &needed), CUZK_STATUS_BUFFER_TOO_SMALL, NULL);
  size_t cap = needed + 4096;
  char *text = malloc(cap);
  EXPECT(cuzk_stats_prometheus(engine, text, cap, &needed), CUZK_STATUS_OK, NULL);
  CHECK(needed <= cap && strlen(text) + 1 == needed);
  CHECK(strstr(text, "cuzk_jobs_finished_total 1\n") != NULL);
  CHECK(strstr(text, "cuzk_start_stage_seconds_count{stage=\"msm_b_g1\"}") != NULL);
  CHECK(strstr(text, "cuzk_device_info{device=\"0\",backend=\"cpu\"} 1\n") != NULL);

  free(text);

  /* The bad-input matrix, then the same engine must still prove correctly. */
  bad_engine_and_stats(engine);
  bad_params();
  bad_prove(engine, srs, &f);
  bad_verify(srs, &f);
  bad_job_calls(engine, srs, &f);
  finish_after_cancel(engine, srs, &f);
  EXPECT(cuzk_get_stats(engine, &stats), CUZK_STATUS_OK, NULL);
  CHECK(stats.jobs_rejected >= 6 && stats.jobs_cancelled >= 1);

  prove_and_compare(engine, srs, &f);

  /* The engine may go first: a job handle outlives it. */
  cuzk_job *job = NULL;
  EXPECT(cuzk_prove_start(engine, srs, f.abi, f.partitions, NULL, &job), CUZK_STATUS_OK, NULL);
  cuzk_srs_free(srs);
  cuzk_engine_free(engine);
  uint8_t *proofs = malloc(f.partitions * CUZK_PROOF_BYTES);
  cuzk_status st = cuzk_prove_finish(job, CUZK_WAIT_FOREVER, proofs, f.partitions * CUZK_PROOF_BYTES);
  CHECK(st == CUZK_STATUS_OK || st == CUZK_STATUS_SHUTTING_DOWN);
  free(proofs);
  cuzk_job_free(job);

  /* Frees accept NULL. */
  cuzk_job_free(NULL);
  cuzk_srs_free(NULL);
  cuzk_engine_free(NULL);

  fixture_free(&f);
  printf("C host: %d passed, %d failed\n", checks_passed, checks_failed);
  return checks_failed == 0 ? 0 : 1;
}
