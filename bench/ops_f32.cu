// The launchers for one element type; one type per file, so CUB's instantiations compile in
// parallel.
#include "ops_impl.cuh"

namespace bench {
launch_fn find_launcher_f32(impl i, op o) { return ops_detail::find_launcher<float>(i, o); }
}  // namespace bench
