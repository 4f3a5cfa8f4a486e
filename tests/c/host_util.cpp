// The C++ host's second translation unit including cuzk.h: errors and fixture loading.
#include <fstream>
#include <iterator>
#include <map>

#include "host.hpp"

namespace cuzk_test {

void ok(cuzk_status status) {
  if (status != CUZK_STATUS_OK) {
    throw Error(status, std::string(cuzk_status_name(status)) + ": " + cuzk_last_error());
  }
}

Bytes read_file(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  return Bytes(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

static std::vector<std::uint64_t> words(const Bytes &b) {
  std::vector<std::uint64_t> w(b.size() / 8);
  for (std::size_t i = 0; i < w.size(); i++) {
    std::uint64_t v = 0;
    for (int k = 7; k >= 0; k--) v = v << 8 | b[i * 8 + k];
    w[i] = v;
  }
  return w;
}

cuzk_partition Partition::view() const {
  cuzk_partition p{};
  p.a = a.data();
  p.a_len = a.size() / CUZK_SCALAR_BYTES;
  p.b = b.data();
  p.b_len = b.size() / CUZK_SCALAR_BYTES;
  p.c = c.data();
  p.c_len = c.size() / CUZK_SCALAR_BYTES;
  p.input = input.data();
  p.input_len = input.size() / CUZK_SCALAR_BYTES;
  p.aux = aux.data();
  p.aux_len = aux.size() / CUZK_SCALAR_BYTES;
  p.a_aux_density = a_aux_density.data();
  p.a_aux_density_words = a_aux_density.size();
  p.a_aux_density_bits = aux_vars;
  p.b_input_density = b_input_density.data();
  p.b_input_density_words = b_input_density.size();
  p.b_input_density_bits = inputs;
  p.b_aux_density = b_aux_density.data();
  p.b_aux_density_words = b_aux_density.size();
  p.b_aux_density_bits = aux_vars;
  return p;
}

std::vector<cuzk_partition> Fixture::views() const {
  std::vector<cuzk_partition> v;
  for (const auto &p : parts) v.push_back(p.view());
  return v;
}

Fixture load_fixture(const std::string &dir) {
  std::map<std::string, std::size_t> manifest;
  std::ifstream in(dir + "/fixture.txt");
  std::string key;
  std::size_t value;
  while (in >> key >> value) manifest[key] = value;
  Fixture f;
  f.partitions = manifest.at("partitions");
  f.inputs = manifest.at("inputs");
  f.aux = manifest.at("aux");
  f.params = read_file(dir + "/params.bin");
  f.vk = read_file(dir + "/vk.bin");
  f.r = read_file(dir + "/r.bin");
  f.s = read_file(dir + "/s.bin");
  f.proofs = read_file(dir + "/proofs.bin");
  for (std::size_t i = 0; i < f.partitions; i++) {
    std::string p = dir + "/p" + std::to_string(i) + "/";
    Partition part;
    part.a = read_file(p + "a.bin");
    part.b = read_file(p + "b.bin");
    part.c = read_file(p + "c.bin");
    part.input = read_file(p + "input.bin");
    part.aux = read_file(p + "aux.bin");
    part.public_inputs = read_file(p + "public.bin");
    part.a_aux_density = words(read_file(p + "a_aux_density.bin"));
    part.b_input_density = words(read_file(p + "b_input_density.bin"));
    part.b_aux_density = words(read_file(p + "b_aux_density.bin"));
    part.inputs = f.inputs;
    part.aux_vars = f.aux;
    f.parts.push_back(std::move(part));
  }
  return f;
}

}  // namespace cuzk_test
