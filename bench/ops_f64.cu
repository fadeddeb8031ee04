// The launchers for double; one element type per file so that CUB's instantiations compile in parallel.
#include "ops_impl.cuh"

namespace bench {
launch_fn find_launcher_f64(impl i, op o) { return ops_detail::find_launcher<double>(i, o); }
}  // namespace bench
