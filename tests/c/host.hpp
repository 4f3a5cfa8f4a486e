// C++17 wrappers over the cuzk C ABI, as a C++ host would write them: RAII handles with the
// library's free functions as deleters, and an exception that carries the status and the
// message. Included from two translation units (host.cpp, host_util.cpp) so the header is
// known to compile twice into one C++ program.
#ifndef CUZK_TEST_HOST_HPP
#define CUZK_TEST_HOST_HPP

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuzk.h"

namespace cuzk_test {

struct EngineFree {
  void operator()(cuzk_engine *e) const noexcept { cuzk_engine_free(e); }
};
struct SrsFree {
  void operator()(cuzk_srs *s) const noexcept { cuzk_srs_free(s); }
};
struct JobFree {
  void operator()(cuzk_job *j) const noexcept { cuzk_job_free(j); }
};
using Engine = std::unique_ptr<cuzk_engine, EngineFree>;
using Srs = std::unique_ptr<cuzk_srs, SrsFree>;
using Job = std::unique_ptr<cuzk_job, JobFree>;

// A failed call: its status and cuzk_last_error(), copied at once (the library's string is
// only valid until the next call on this thread).
class Error : public std::runtime_error {
 public:
  Error(cuzk_status status, const std::string &what) : std::runtime_error(what), status(status) {}
  cuzk_status status;
};

// Throws Error unless `status` is CUZK_STATUS_OK.
void ok(cuzk_status status);

using Bytes = std::vector<std::uint8_t>;
Bytes read_file(const std::string &path);

// One partition's buffers, owned, and the cuzk_partition view of them.
struct Partition {
  Bytes a, b, c, input, aux, public_inputs;
  std::vector<std::uint64_t> a_aux_density, b_input_density, b_aux_density;
  std::size_t inputs = 0, aux_vars = 0;
  cuzk_partition view() const;
};

struct Fixture {
  std::size_t partitions = 0, inputs = 0, aux = 0;
  Bytes params, vk, r, s, proofs;
  std::vector<Partition> parts;
  std::vector<cuzk_partition> views() const;
};
Fixture load_fixture(const std::string &dir);

}  // namespace cuzk_test

#endif
