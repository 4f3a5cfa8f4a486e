/* The second translation unit that includes cuzk.h (the header must be includable twice in
 * one program without duplicate definitions): fixture loading and check helpers. */
#include "fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int checks_passed = 0, checks_failed = 0;

void check(int ok, const char *what, const char *file, int line) {
  if (ok) {
    checks_passed++;
  } else {
    checks_failed++;
    fprintf(stderr, "FAILED %s:%d: %s\n", file, line, what);
  }
}

void expect_status(cuzk_status got, cuzk_status want, const char *needle, const char *what,
                   const char *file, int line) {
  const char *msg = cuzk_last_error();
  int ok = got == want;
  if (ok && want != CUZK_STATUS_OK && needle != NULL) {
    ok = msg != NULL && strstr(msg, needle) != NULL;
  }
  if (ok) {
    checks_passed++;
    return;
  }
  checks_failed++;
  fprintf(stderr, "FAILED %s:%d: %s returned %s, want %s (needle \"%s\"); last error: %s\n", file,
          line, what, cuzk_status_name(got), cuzk_status_name(want), needle ? needle : "",
          msg ? msg : "(null)");
}

blob read_blob(const char *dir, const char *name) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *fp = fopen(path, "rb");
  if (!fp) {
    fprintf(stderr, "cannot open %s\n", path);
    exit(2);
  }
  fseek(fp, 0, SEEK_END);
  long len = ftell(fp);
  fseek(fp, 0, SEEK_SET);
  blob b = {NULL, (size_t)len};
  /* +1 so that an empty file still gets a non-NULL pointer. */
  b.data = malloc((size_t)len + 1);
  if (!b.data || fread(b.data, 1, (size_t)len, fp) != (size_t)len) {
    fprintf(stderr, "cannot read %s\n", path);
    exit(2);
  }
  fclose(fp);
  return b;
}

static size_t manifest_value(const char *dir, const char *key) {
  char path[4096], k[64];
  size_t v;
  snprintf(path, sizeof path, "%s/fixture.txt", dir);
  FILE *fp = fopen(path, "r");
  if (!fp) {
    fprintf(stderr, "cannot open %s\n", path);
    exit(2);
  }
  while (fscanf(fp, "%63s %zu", k, &v) == 2) {
    if (strcmp(k, key) == 0) {
      fclose(fp);
      return v;
    }
  }
  fprintf(stderr, "%s has no %s\n", path, key);
  exit(2);
}

void fixture_load(fixture *f, const char *dir) {
  memset(f, 0, sizeof *f);
  f->partitions = manifest_value(dir, "partitions");
  f->constraints = manifest_value(dir, "constraints");
  f->inputs = manifest_value(dir, "inputs");
  f->aux = manifest_value(dir, "aux");
  f->public_inputs = manifest_value(dir, "public_inputs");
  f->domain_size = manifest_value(dir, "domain_size");
  f->params = read_blob(dir, "params.bin");
  f->vk = read_blob(dir, "vk.bin");
  f->r = read_blob(dir, "r.bin");
  f->s = read_blob(dir, "s.bin");
  f->proofs = read_blob(dir, "proofs.bin");
  f->parts = calloc(f->partitions, sizeof *f->parts);
  f->abi = calloc(f->partitions, sizeof *f->abi);
  for (size_t i = 0; i < f->partitions; i++) {
    char sub[4096];
    fixture_partition *p = &f->parts[i];
    snprintf(sub, sizeof sub, "%s/p%zu", dir, i);
    p->a = read_blob(sub, "a.bin");
    p->b = read_blob(sub, "b.bin");
    p->c = read_blob(sub, "c.bin");
    p->input = read_blob(sub, "input.bin");
    p->aux = read_blob(sub, "aux.bin");
    p->public_inputs = read_blob(sub, "public.bin");
    p->a_aux_density = read_blob(sub, "a_aux_density.bin");
    p->b_input_density = read_blob(sub, "b_input_density.bin");
    p->b_aux_density = read_blob(sub, "b_aux_density.bin");
    cuzk_partition *q = &f->abi[i];
    q->a = p->a.data;
    q->a_len = p->a.len / CUZK_SCALAR_BYTES;
    q->b = p->b.data;
    q->b_len = p->b.len / CUZK_SCALAR_BYTES;
    q->c = p->c.data;
    q->c_len = p->c.len / CUZK_SCALAR_BYTES;
    q->input = p->input.data;
    q->input_len = p->input.len / CUZK_SCALAR_BYTES;
    q->aux = p->aux.data;
    q->aux_len = p->aux.len / CUZK_SCALAR_BYTES;
    q->a_aux_density = (const uint64_t *)(const void *)p->a_aux_density.data;
    q->a_aux_density_words = p->a_aux_density.len / 8;
    q->a_aux_density_bits = f->aux;
    q->b_input_density = (const uint64_t *)(const void *)p->b_input_density.data;
    q->b_input_density_words = p->b_input_density.len / 8;
    q->b_input_density_bits = f->inputs;
    q->b_aux_density = (const uint64_t *)(const void *)p->b_aux_density.data;
    q->b_aux_density_words = p->b_aux_density.len / 8;
    q->b_aux_density_bits = f->aux;
  }
}

void fixture_free(fixture *f) {
  for (size_t i = 0; i < f->partitions; i++) {
    fixture_partition *p = &f->parts[i];
    blob *all[] = {&p->a, &p->b, &p->c, &p->input, &p->aux, &p->public_inputs,
                   &p->a_aux_density, &p->b_input_density, &p->b_aux_density};
    for (size_t j = 0; j < sizeof all / sizeof all[0]; j++) free(all[j]->data);
  }
  free(f->parts);
  free(f->abi);
  free(f->params.data);
  free(f->vk.data);
  free(f->r.data);
  free(f->s.data);
  free(f->proofs.data);
}
