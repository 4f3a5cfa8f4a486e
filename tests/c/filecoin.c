/* C11 host test of the Filecoin proof kinds through the C ABI: real 2KiB inputs written by
 * `cuzk_fixtures filecoin-inputs DIR PARAMS_DIR` (a C1 output, vanilla proofs, and for each
 * kind fixed r, s and the proof bytes filecoin-proofs' verifiers accepted), proved with
 * cuzk_prove_{porep_c2,snap,window_post,winning_post}_start + cuzk_prove_finish: every kind
 * must give exactly the expected bytes. Then the bad inputs a host can pass, each with its
 * status and a message, and a good job on the same engine after them.
 *
 * Usage: filecoin FIXTURE_DIR PARAMS_DIR. Built and run under AddressSanitizer by
 * tests/ffi_hosts.rs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuzk.h"
#include "fixture.h"

static const char *dir, *params_dir;

/* `key=value` from DIR/NAME, or exits: the fixture is broken. */
static void text_value(const char *name, const char *key, char *out, size_t out_len) {
  char path[4096], line[512];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *fp = fopen(path, "r");
  if (!fp) {
    fprintf(stderr, "cannot open %s\n", path);
    exit(2);
  }
  size_t klen = strlen(key);
  while (fgets(line, sizeof line, fp)) {
    if (strncmp(line, key, klen) == 0 && line[klen] == '=') {
      line[strcspn(line, "\n")] = 0;
      snprintf(out, out_len, "%s", line + klen + 1);
      fclose(fp);
      return;
    }
  }
  fprintf(stderr, "%s has no %s\n", path, key);
  exit(2);
}

static uint64_t number(const char *name, const char *key) {
  char v[128];
  text_value(name, key, v, sizeof v);
  return strtoull(v, NULL, 10);
}

static void hex32(const char *name, const char *key, uint8_t out[32]) {
  char v[128];
  text_value(name, key, v, sizeof v);
  for (int i = 0; i < 32; i++) {
    unsigned b = 0;
    if (sscanf(v + 2 * i, "%2x", &b) != 1) {
      fprintf(stderr, "%s: %s is not 32 hex bytes\n", name, key);
      exit(2);
    }
    out[i] = (uint8_t)b;
  }
}

/* The vanilla proofs PREFIX_vanilla_<i>.bin, as the ABI takes them. */
typedef struct {
  blob *files;
  cuzk_bytes *views;
  size_t n;
} vanillas;

static vanillas read_vanillas(const char *txt, const char *prefix) {
  vanillas v;
  v.n = (size_t)number(txt, "vanilla_proofs");
  v.files = calloc(v.n, sizeof *v.files);
  v.views = calloc(v.n, sizeof *v.views);
  for (size_t i = 0; i < v.n; i++) {
    char name[256];
    snprintf(name, sizeof name, "%s_vanilla_%zu.bin", prefix, i);
    v.files[i] = read_blob(dir, name);
    v.views[i].data = v.files[i].data;
    v.views[i].len = v.files[i].len;
  }
  return v;
}

static void free_vanillas(vanillas *v) {
  for (size_t i = 0; i < v->n; i++) free(v->files[i].data);
  free(v->files);
  free(v->views);
}

/* Options with the kind's fixed r and s and the test parameter cache. */
typedef struct {
  blob r, s, proof;
  cuzk_prove_options options;
} expected;

static expected read_expected(const char *kind) {
  expected e;
  char name[256];
  snprintf(name, sizeof name, "%s_r.bin", kind);
  e.r = read_blob(dir, name);
  snprintf(name, sizeof name, "%s_s.bin", kind);
  e.s = read_blob(dir, name);
  snprintf(name, sizeof name, "%s_proof.bin", kind);
  e.proof = read_blob(dir, name);
  memset(&e.options, 0, sizeof e.options);
  e.options.size = sizeof e.options;
  e.options.r = e.r.data;
  e.options.s = e.s.data;
  e.options.rs_len = e.r.len / CUZK_SCALAR_BYTES;
  e.options.params_dir = params_dir;
  return e;
}

static void free_expected(expected *e) {
  free(e->r.data);
  free(e->s.data);
  free(e->proof.data);
}

/* Finishes `job` and checks its bytes against `want`; frees the job. */
static void finish_and_compare(cuzk_job *job, const blob *want, const char *kind) {
  size_t n = 0;
  EXPECT(cuzk_job_proof_bytes(job, &n), CUZK_STATUS_OK, NULL);
  CHECK(n == want->len);
  uint8_t *buf = malloc(n ? n : 1);
  EXPECT(cuzk_prove_finish(job, CUZK_WAIT_FOREVER, buf, n), CUZK_STATUS_OK, NULL);
  int same = n == want->len && memcmp(buf, want->data, n) == 0;
  if (!same) fprintf(stderr, "%s: proof bytes differ from the verified ones\n", kind);
  CHECK(same);
  cuzk_job_timings t;
  memset(&t, 0, sizeof t);
  t.size = sizeof t;
  EXPECT(cuzk_job_get_timings(job, &t), CUZK_STATUS_OK, NULL);
  CHECK(t.size == sizeof t);
  CHECK(t.synthesis_ns > 0 && t.device_ns > 0 && t.total_ns >= t.device_ns);
  printf("%s: %zu bytes, synthesis %.3f s, device %.3f s, total %.3f s\n", kind, n,
         (double)t.synthesis_ns / 1e9, (double)t.device_ns / 1e9, (double)t.total_ns / 1e9);
  free(buf);
  cuzk_job_free(job);
}

static void porep(cuzk_engine *engine) {
  blob c1 = read_blob(dir, "porep_c1.json");
  uint8_t prover[32];
  hex32("porep.txt", "prover_id", prover);
  uint64_t sector = number("porep.txt", "sector_id");
  expected e = read_expected("porep");
  cuzk_job *job = NULL;
  EXPECT(cuzk_prove_porep_c2_start(engine, c1.data, c1.len, sector, prover, &e.options, &job),
         CUZK_STATUS_OK, NULL);
  if (job) finish_and_compare(job, &e.proof, "PoRep C2");

  /* Bad C1 outputs: each refused with its status; the job pointer is NULL after. */
  job = (cuzk_job *)&job;
  EXPECT(cuzk_prove_porep_c2_start(engine, c1.data, c1.len / 2, sector, prover, &e.options, &job),
         CUZK_STATUS_INVALID_INPUT, "C1 output");
  CHECK(job == NULL);
  static const uint8_t garbled[] = "{\"registered_proof\":\"StackedDrg2KiBV1_1\",\"vanilla_proofs\":";
  EXPECT(cuzk_prove_porep_c2_start(engine, garbled, sizeof garbled - 1, sector, prover, NULL, &job),
         CUZK_STATUS_INVALID_INPUT, "C1 output");
  EXPECT(cuzk_prove_porep_c2_start(engine, NULL, 10, sector, prover, NULL, &job),
         CUZK_STATUS_INVALID_ARGUMENT, "c1_output");
  EXPECT(cuzk_prove_porep_c2_start(engine, c1.data, c1.len, sector, NULL, NULL, &job),
         CUZK_STATUS_INVALID_ARGUMENT, "prover_id");
  EXPECT(cuzk_prove_porep_c2_start(engine, c1.data, c1.len, sector + 1, prover, NULL, &job),
         CUZK_STATUS_INVALID_INPUT, "replica id");
  EXPECT(cuzk_prove_porep_c2_start(NULL, c1.data, c1.len, sector, prover, NULL, &job),
         CUZK_STATUS_INVALID_ARGUMENT, "engine");
  EXPECT(cuzk_prove_porep_c2_start(engine, c1.data, c1.len, sector, prover, NULL, NULL),
         CUZK_STATUS_INVALID_ARGUMENT, "job");
  /* The registered proof says 8MiB while the vanilla proofs are a 2KiB sector's. */
  char *text = malloc(c1.len + 1);
  memcpy(text, c1.data, c1.len);
  text[c1.len] = 0;
  char *at = strstr(text, "\"StackedDrg2KiBV1_1\"");
  CHECK(at != NULL);
  if (at) {
    memcpy(at, "\"StackedDrg8MiBV1_1\"", strlen("\"StackedDrg8MiBV1_1\""));
    EXPECT(cuzk_prove_porep_c2_start(engine, (const uint8_t *)text, c1.len, sector, prover, NULL,
                                     &job),
           CUZK_STATUS_SECTOR_SIZE_MISMATCH, "sector");
  }
  free(text);
  /* r and s for two partitions where the C2 has one. */
  cuzk_prove_options two = e.options;
  two.rs_len = 2;
  blob r2 = {malloc(64), 64};
  memset(r2.data, 1, 64);
  two.r = two.s = r2.data;
  EXPECT(cuzk_prove_porep_c2_start(engine, c1.data, c1.len, sector, prover, &two, &job),
         CUZK_STATUS_INVALID_ARGUMENT, "rs_len");
  free(r2.data);
  free_expected(&e);
  free(c1.data);
}

static void winning(cuzk_engine *engine) {
  uint8_t prover[32], randomness[32];
  hex32("winning.txt", "prover_id", prover);
  hex32("winning.txt", "randomness", randomness);
  uint64_t proof = number("winning.txt", "registered_post_proof");
  vanillas v = read_vanillas("winning.txt", "winning");
  expected e = read_expected("winning");
  cuzk_job *job = NULL;
  EXPECT(cuzk_prove_winning_post_start(engine, proof, randomness, 32, prover, v.views, v.n,
                                       &e.options, &job),
         CUZK_STATUS_OK, NULL);
  if (job) finish_and_compare(job, &e.proof, "WinningPoSt");

  EXPECT(cuzk_prove_winning_post_start(engine, proof, randomness, 0, prover, v.views, v.n,
                                       &e.options, &job),
         CUZK_STATUS_INVALID_INPUT, "randomness");
  EXPECT(cuzk_prove_winning_post_start(engine, proof, randomness, 32, prover, v.views, 0,
                                       &e.options, &job),
         CUZK_STATUS_INVALID_INPUT, "vanilla");
  EXPECT(cuzk_prove_winning_post_start(engine, 99, randomness, 32, prover, v.views, v.n,
                                       &e.options, &job),
         CUZK_STATUS_INVALID_ARGUMENT, "99");
  cuzk_bytes cut = v.views[0];
  cut.len /= 3;
  EXPECT(cuzk_prove_winning_post_start(engine, proof, randomness, 32, prover, &cut, 1, &e.options,
                                       &job),
         CUZK_STATUS_INVALID_INPUT, "vanilla proof 0");
  cuzk_bytes null_data = {NULL, 5};
  EXPECT(cuzk_prove_winning_post_start(engine, proof, randomness, 32, prover, &null_data, 1,
                                       &e.options, &job),
         CUZK_STATUS_INVALID_ARGUMENT, "vanilla_proofs[0]");
  /* No params where the options say: the path is named. */
  cuzk_prove_options elsewhere = e.options;
  char missing[4096];
  snprintf(missing, sizeof missing, "%s/no-such-params", dir);
  elsewhere.params_dir = missing;
  EXPECT(cuzk_prove_winning_post_start(engine, proof, randomness, 32, prover, v.views, v.n,
                                       &elsewhere, &job),
         CUZK_STATUS_PARAMS_NOT_FOUND, "no-such-params");
  free_expected(&e);
  free_vanillas(&v);
}

static void window(cuzk_engine *engine) {
  uint8_t prover[32], randomness[32];
  hex32("window.txt", "prover_id", prover);
  hex32("window.txt", "randomness", randomness);
  uint64_t proof = number("window.txt", "registered_post_proof");
  vanillas v = read_vanillas("window.txt", "window");
  expected e = read_expected("window");
  cuzk_job *job = NULL;
  EXPECT(cuzk_prove_window_post_start(engine, proof, randomness, 32, prover, v.views, v.n,
                                      CUZK_WHOLE_WINDOW, &e.options, &job),
         CUZK_STATUS_OK, NULL);
  if (job) finish_and_compare(job, &e.proof, "WindowPoSt (whole window)");
  /* Partition 0 alone with the first (r, s) gives the whole window's first 192 bytes. */
  size_t per = (size_t)number("window.txt", "sectors_per_partition");
  cuzk_prove_options first = e.options;
  first.rs_len = 1;
  blob want = {e.proof.data, CUZK_PROOF_BYTES};
  EXPECT(cuzk_prove_window_post_start(engine, proof, randomness, 32, prover, v.views,
                                      v.n < per ? v.n : per, 0, &first, &job),
         CUZK_STATUS_OK, NULL);
  if (job) finish_and_compare(job, &want, "WindowPoSt (partition 0)");
  /* A WinningPoSt proof type for WindowPoSt inputs. */
  EXPECT(cuzk_prove_window_post_start(engine, 0, randomness, 32, prover, v.views, v.n,
                                      CUZK_WHOLE_WINDOW, &e.options, &job),
         CUZK_STATUS_INVALID_INPUT, "Window");
  free_expected(&e);
  free_vanillas(&v);
}

static void snap(cuzk_engine *engine) {
  uint8_t r_old[32], r_new[32], d_new[32];
  hex32("snap.txt", "comm_r_old", r_old);
  hex32("snap.txt", "comm_r_new", r_new);
  hex32("snap.txt", "comm_d_new", d_new);
  uint64_t proof = number("snap.txt", "registered_update_proof");
  vanillas v = read_vanillas("snap.txt", "snap");
  expected e = read_expected("snap");
  cuzk_job *job = NULL;
  EXPECT(cuzk_prove_snap_start(engine, proof, v.views, v.n, r_old, r_new, d_new, &e.options, &job),
         CUZK_STATUS_OK, NULL);
  if (job) finish_and_compare(job, &e.proof, "SnapDeals");
  EXPECT(cuzk_prove_snap_start(engine, proof, v.views, v.n, NULL, r_new, d_new, &e.options, &job),
         CUZK_STATUS_INVALID_ARGUMENT, "comm_r_old");
  /* WinningPoSt vanilla proofs where update partition proofs belong. */
  vanillas w = read_vanillas("winning.txt", "winning");
  EXPECT(cuzk_prove_snap_start(engine, proof, w.views, w.n, r_old, r_new, d_new, &e.options, &job),
         CUZK_STATUS_INVALID_INPUT, "vanilla proof 0");
  free_vanillas(&w);
  free_expected(&e);
  free_vanillas(&v);
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s FIXTURE_DIR PARAMS_DIR\n", argv[0]);
    return 2;
  }
  dir = argv[1];
  params_dir = argv[2];
  cuzk_config config;
  memset(&config, 0, sizeof config);
  config.size = sizeof config;
  config.synthesis_threads = 2;
  cuzk_engine *engine = NULL;
  EXPECT(cuzk_engine_new(&config, &engine), CUZK_STATUS_OK, NULL);
  if (!engine) return 1;
  winning(engine);
  window(engine);
  snap(engine);
  porep(engine);
  /* The engine is still good after every refusal: the WinningPoSt again. */
  winning(engine);

  cuzk_stats s;
  memset(&s, 0, sizeof s);
  s.size = sizeof s;
  EXPECT(cuzk_get_stats(engine, &s), CUZK_STATUS_OK, NULL);
  /* kinds[]: PoRep, SnapDeals, WindowPoSt, WinningPoSt, other. */
  CHECK(s.kinds[0].jobs_finished == 1 && s.kinds[0].partitions_proved == 1);
  CHECK(s.kinds[1].jobs_finished == 1);
  CHECK(s.kinds[2].jobs_finished == 2);
  CHECK(s.kinds[3].jobs_finished == 2);
  CHECK(s.synthesis.count >= 6 && s.synthesis_threads == 2);
  CHECK(s.params_load.count == 4); /* once per circuit */

  /* The params of a circuit by name; evicted, then preloaded again. */
  char path[4096];
  size_t need = 0;
  EXPECT(cuzk_params_path(CUZK_CIRCUIT_POST, 0, params_dir, NULL, 0, &need),
         CUZK_STATUS_BUFFER_TOO_SMALL, "buf");
  CHECK(need > strlen(params_dir));
  EXPECT(cuzk_params_path(CUZK_CIRCUIT_POST, 0, params_dir, path, sizeof path, &need),
         CUZK_STATUS_OK, NULL);
  CHECK(strncmp(path, params_dir, strlen(params_dir)) == 0 && strstr(path, ".params") != NULL);
  EXPECT(cuzk_params_path(7, 0, params_dir, path, sizeof path, &need), CUZK_STATUS_INVALID_ARGUMENT,
         "circuit");
  bool evicted = false;
  EXPECT(cuzk_params_evict(engine, CUZK_CIRCUIT_POST, 0, params_dir, &evicted), CUZK_STATUS_OK, NULL);
  CHECK(evicted);
  EXPECT(cuzk_params_evict(engine, CUZK_CIRCUIT_POST, 0, params_dir, &evicted), CUZK_STATUS_OK, NULL);
  CHECK(!evicted);
  EXPECT(cuzk_params_preload(engine, CUZK_CIRCUIT_POST, 0, params_dir), CUZK_STATUS_OK, NULL);
  char missing[4096];
  snprintf(missing, sizeof missing, "%s/no-such-params", dir);
  EXPECT(cuzk_params_preload(engine, CUZK_CIRCUIT_SEAL, 5, missing), CUZK_STATUS_PARAMS_NOT_FOUND,
         "no-such-params");
  memset(&s, 0, sizeof s);
  s.size = sizeof s;
  EXPECT(cuzk_get_stats(engine, &s), CUZK_STATUS_OK, NULL);
  CHECK(s.params_load.count == 5);
  cuzk_engine_free(engine);
  printf("C filecoin host: %d passed, %d failed\n", checks_passed, checks_failed);
  return checks_failed == 0 ? 0 : 1;
}
