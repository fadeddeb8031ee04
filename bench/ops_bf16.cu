// The entries of one dtype; one dtype per file, so CUB's instantiations compile in parallel.
#include "ops_impl.cuh"

namespace bench {
void add_table_entries_bf16(std::vector<entry>& out) {
  ops_detail::add_table_entries<__nv_bfloat16>(out);
}
}  // namespace bench
