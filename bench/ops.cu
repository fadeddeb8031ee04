#include "ops.cuh"

namespace bench {

const char* name(op_kind k) {
  switch (k) {
    case op_kind::forward:
      return "forward";
    case op_kind::backward:
      return "backward";
    case op_kind::backward_from_output:
      return "backward_from_output";
    case op_kind::relu_forward_mask:
      return "relu_forward_mask";
    case op_kind::relu_backward_mask:
      return "relu_backward_mask";
  }
  return "?";
}

std::string entry::label() const {
  const bool mask = kind == op_kind::relu_forward_mask || kind == op_kind::relu_backward_mask;
  return mask ? std::string(name(kind)) : activation + " " + name(kind);
}

double entry::bytes_moved(std::size_t n) const {
  const double array = static_cast<double>(n) * static_cast<double>(size_of(type));
  // Whole 32-bit words, as cuact::relu_mask_words(n).
  const double mask = static_cast<double>((n + 31) / 32 * 4);
  return (element_inputs + 1) * array + (reads_mask || writes_mask ? mask : 0.0);
}

const std::vector<entry>& table_entries() {
  static const std::vector<entry> entries = [] {
    std::vector<entry> all;
    add_table_entries_f32(all);
    add_table_entries_bf16(all);
    add_table_entries_f16(all);
    add_table_entries_f64(all);
    return all;
  }();
  return entries;
}

const std::vector<entry>& user_entries() {
  static const std::vector<entry> entries = [] {
    std::vector<entry> all;
    add_user_entries(all);
    return all;
  }();
  return entries;
}

const entry* find_entry(const std::vector<entry>& entries, const std::string& activation,
                        op_kind kind, dtype type) {
  for (const entry& e : entries) {
    if (e.activation == activation && e.kind == kind && e.type == type) return &e;
  }
  return nullptr;
}

bool family_built() { return CUACT_BENCH_FAMILY != 0; }

}  // namespace bench
