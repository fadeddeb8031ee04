// User functors as a user would write them (tests/common/plain_functors.hpp): no cost hint,
// no accuracy tag, plain math functions. cuact's launch model estimates their cost from the
// kernel's register count; the --user mode reports what it estimated. fp32 and bf16, forward and
// backward (their derivatives are written as plainly).
#include <cuda_bf16.h>

#include "ops_impl.cuh"
#include "plain_functors.hpp"

namespace bench {
namespace {

template <class T>
void add_users(std::vector<entry>& out) {
  namespace plain = cuact_test::plain;
  ops_detail::add_activation<T>(out, "user_softplus", plain::softplus{}, false, 0);
  ops_detail::add_activation<T>(out, "user_elu", plain::elu{}, false, 1);
  ops_detail::add_activation<T>(out, "user_sigmoid", plain::sigmoid{}, false, 2);
  ops_detail::add_activation<T>(out, "user_silu", plain::silu{}, false, 3);
  ops_detail::add_activation<T>(out, "user_gelu_tanh", plain::gelu_tanh{}, false, 4);
}

}  // namespace

void add_user_entries(std::vector<entry>& out) {
  add_users<float>(out);
  add_users<__nv_bfloat16>(out);
}

}  // namespace bench
