// C++17 host test of the cuzk C ABI: params from memory, one engine shared by several
// threads proving at once, a job waited on with polling and zero-timeout finishes, a
// cancel racing a waiting finish, admission refusals, stats, and verification. Linked
// against the static library (libcuzk.a), where the C host uses the shared one.
//
// Usage: host_cpp FIXTURE_DIR. Built and run under AddressSanitizer by tests/ffi_hosts.rs.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "cuzk.h"
#include "host.hpp"

using namespace cuzk_test;

static int passed = 0, failed = 0;
#define CHECK(cond)                                                        \
  do {                                                                     \
    if (cond) {                                                            \
      passed++;                                                            \
    } else {                                                               \
      failed++;                                                            \
      std::fprintf(stderr, "FAILED %s:%d: %s\n", __FILE__, __LINE__, #cond); \
    }                                                                      \
  } while (0)

// Runs `f`, expecting it to throw an Error of `want` whose message contains `needle`.
template <class F>
static void expect_error(F f, cuzk_status want, const char *needle, int line) {
  try {
    f();
    failed++;
    std::fprintf(stderr, "FAILED line %d: no error, want %s\n", line, cuzk_status_name(want));
  } catch (const Error &e) {
    if (e.status == want && std::string(e.what()).find(needle) != std::string::npos) {
      passed++;
    } else {
      failed++;
      std::fprintf(stderr, "FAILED line %d: got \"%s\", want %s containing \"%s\"\n", line,
                   e.what(), cuzk_status_name(want), needle);
    }
  }
}
#define EXPECT_ERROR(body, want, needle) expect_error([&] { body; }, want, needle, __LINE__)

static Job start(const Engine &engine, const Srs &srs, const Fixture &f, bool fixed_rs,
                 std::uint32_t priority = CUZK_PRIORITY_DEFAULT) {
  std::vector<cuzk_partition> parts = f.views();
  cuzk_prove_options o{};
  o.size = sizeof o;
  o.priority = priority;
  if (fixed_rs) {
    o.r = f.r.data();
    o.s = f.s.data();
    o.rs_len = f.partitions;
  }
  cuzk_job *raw = nullptr;
  ok(cuzk_prove_start(engine.get(), srs.get(), parts.data(), parts.size(), &o, &raw));
  return Job(raw);
}

static Bytes finish(const Job &job, std::uint64_t timeout_ms, std::size_t n) {
  Bytes proofs(n * CUZK_PROOF_BYTES);
  ok(cuzk_prove_finish(job.get(), timeout_ms, proofs.data(), proofs.size()));
  return proofs;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s FIXTURE_DIR\n", argv[0]);
    return 2;
  }
  try {
    Fixture f = load_fixture(argv[1]);
    const std::size_t n = f.partitions;

    // Params from a memory buffer, freed right after: the handle owns its decoded copy.
    Srs srs;
    {
      Bytes params = f.params;
      cuzk_srs *raw = nullptr;
      ok(cuzk_srs_from_bytes(params.data(), params.size(), false, &raw));
      srs.reset(raw);
      std::memset(params.data(), 0, params.size());
    }
    cuzk_circuit_shape shape{};
    ok(cuzk_srs_shape(srs.get(), &shape));
    CHECK(shape.num_inputs == f.inputs && shape.num_aux == f.aux);

    cuzk_config config{};
    config.size = sizeof config;
    config.cpu_devices = 2;
    config.finalizers = 2;
    Engine engine;
    {
      cuzk_engine *raw = nullptr;
      ok(cuzk_engine_new(&config, &raw));
      engine.reset(raw);
    }

    // Four threads prove the fixture at once on the one engine; each gets the exact bytes.
    const int threads = 4;
    std::atomic<int> matches{0};
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; t++) {
      pool.emplace_back([&, t] {
        try {
          Job job = start(engine, srs, f, true,
                          t % 2 ? CUZK_PRIORITY_WINDOW_POST : CUZK_PRIORITY_POREP_SNAP);
          Bytes proofs = finish(job, CUZK_WAIT_FOREVER, n);
          if (proofs == f.proofs) matches++;
        } catch (const Error &e) {
          std::fprintf(stderr, "thread %d: %s\n", t, e.what());
        }
      });
    }
    for (auto &th : pool) th.join();
    CHECK(matches == threads);

    // Polling: zero-timeout finishes return TIMEOUT (or the proofs) until the job is done.
    {
      Job job = start(engine, srs, f, true);
      Bytes proofs(n * CUZK_PROOF_BYTES);
      int timeouts = 0;
      for (;;) {
        cuzk_status st = cuzk_prove_finish(job.get(), 0, proofs.data(), proofs.size());
        if (st == CUZK_STATUS_OK) break;
        CHECK(st == CUZK_STATUS_TIMEOUT);
        if (st != CUZK_STATUS_TIMEOUT) break;
        CHECK(std::string(cuzk_last_error()).find("not finished") != std::string::npos);
        timeouts++;
        cuzk_job_state state;
        std::size_t proved = 0, total = 0;
        ok(cuzk_job_poll(job.get(), &state, &proved, &total));
        CHECK(total == n && proved <= n);
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      CHECK(proofs == f.proofs);
      std::printf("zero-timeout finishes before done: %d\n", timeouts);
    }

    // A cancel from another thread wakes a finish that waits forever.
    {
      std::vector<Job> blockers;
      for (int b = 0; b < 3; b++) blockers.push_back(start(engine, srs, f, false, CUZK_PRIORITY_WINNING_POST));
      Job victim = start(engine, srs, f, false, CUZK_PRIORITY_OTHER);
      std::atomic<bool> did_cancel{false};
      std::thread canceller([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        bool c = false;
        ok(cuzk_job_cancel(victim.get(), &c));
        did_cancel = c;
      });
      Bytes proofs(n * CUZK_PROOF_BYTES);
      cuzk_status st = cuzk_prove_finish(victim.get(), CUZK_WAIT_FOREVER, proofs.data(), proofs.size());
      canceller.join();
      CHECK(did_cancel ? st == CUZK_STATUS_CANCELLED : st == CUZK_STATUS_OK);
      for (auto &b : blockers) finish(b, CUZK_WAIT_FOREVER, n);
    }

    // Admission: an engine whose budget can never hold the job refuses it at once.
    {
      cuzk_config small{};
      small.size = sizeof small;
      small.memory_budget_bytes = 1000;
      cuzk_engine *raw = nullptr;
      ok(cuzk_engine_new(&small, &raw));
      Engine tiny(raw);
      EXPECT_ERROR(start(tiny, srs, f, true), CUZK_STATUS_RESOURCE_EXHAUSTED, "");
      cuzk_stats s{};
      s.size = sizeof s;
      ok(cuzk_get_stats(tiny.get(), &s));
      CHECK(s.jobs_rejected == 1 && s.jobs_admitted == 0 && s.memory_budget_bytes == 1000);
    }

    // Stats of the shared engine: 4 + 1 + 3 + 1 jobs admitted, all partitions accounted for.
    cuzk_stats s{};
    s.size = sizeof s;
    ok(cuzk_get_stats(engine.get(), &s));
    CHECK(s.jobs_admitted == 9);
    CHECK(s.jobs_finished + s.jobs_cancelled == 9);
    CHECK(s.partitions_proved + s.partitions_dropped >= 8 * n);
    CHECK(s.device_count == 2 && s.devices[0].partitions + s.devices[1].partitions >= 8 * n);
    CHECK(s.queue_depth[0] == 0);
    // Every proved partition's start phase timed its stages (cancelled ones may add more).
    CHECK(s.start_ntt.count >= s.partitions_proved && s.start_msm_h.count >= s.partitions_proved);
    for (int d = 0; d < 2; d++) {
      CHECK(s.device_backends[d].backend == CUZK_BACKEND_CPU);
      CHECK(s.device_backends[d].gpu_ordinal == CUZK_NO_GPU_ORDINAL);
    }
    // Memory comes back just after each proof is stored: wait for it (up to 10 s).
    for (int i = 0; i < 10000 && s.memory_reserved_bytes != 0; i++) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      ok(cuzk_get_stats(engine.get(), &s));
    }
    CHECK(s.memory_reserved_bytes == 0);
    std::size_t needed = 0;
    cuzk_stats_prometheus(engine.get(), nullptr, 0, &needed);
    std::string text(needed + 1024, '\0');
    ok(cuzk_stats_prometheus(engine.get(), &text[0], text.size(), &needed));
    CHECK(text.find("cuzk_jobs_admitted_total 9\n") != std::string::npos);

    // Verification, against the key from the handle and against raw bytes.
    std::size_t vk_len = 0;
    cuzk_srs_verifying_key(srs.get(), nullptr, 0, &vk_len);
    Bytes vk(vk_len);
    ok(cuzk_srs_verifying_key(srs.get(), vk.data(), vk.size(), &vk_len));
    CHECK(vk == f.vk);
    for (std::size_t i = 0; i < n; i++) {
      const Bytes &pub = f.parts[i].public_inputs;
      bool good = false;
      ok(cuzk_verify(vk.data(), vk.size(), f.proofs.data() + i * CUZK_PROOF_BYTES,
                     CUZK_PROOF_BYTES, pub.data(), pub.size() / CUZK_SCALAR_BYTES, &good));
      CHECK(good);
    }
    EXPECT_ERROR(ok(cuzk_srs_verify(srs.get(), f.proofs.data(), 100, nullptr, 0, nullptr)),
                 CUZK_STATUS_INVALID_ARGUMENT, "proof_len");

    // Tracing can be switched on and its filter changed.
    ok(cuzk_tracing_init("cuzk=warn"));
    ok(cuzk_tracing_init("cuzk=error"));
  } catch (const std::exception &e) {
    std::fprintf(stderr, "FAILED: %s\n", e.what());
    failed++;
  }
  std::printf("C++ host: %d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
