// The launchers for one element type; one type per file, so CUB's instantiations compile in
// parallel.
#include "ops_impl.cuh"

namespace bench {
launch_fn find_launcher_bf16(impl i, op o) {
  return ops_detail::find_launcher<__nv_bfloat16>(i, o);
}
}  // namespace bench
