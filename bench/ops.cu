#include "ops.cuh"

namespace bench {

const char* name(op o) {
  switch (o) {
    case op::relu:
      return "relu";
    case op::selu:
      return "selu";
    case op::relu_backward:
      return "relu_backward";
    case op::selu_backward:
      return "selu_backward";
    case op::relu_backward_from_output:
      return "relu_backward_from_output";
    case op::selu_backward_from_output:
      return "selu_backward_from_output";
    case op::relu_forward_mask:
      return "relu_forward_mask";
    case op::relu_backward_mask:
      return "relu_backward_mask";
  }
  return "?";
}

bool is_forward(op o) { return o == op::relu || o == op::selu; }

const char* name(impl i) {
  switch (i) {
    case impl::memcpy:
      return "memcpy";
    case impl::cub:
      return "cub";
    case impl::cuact:
      return "cuact";
  }
  return "?";
}

launch_fn find_launcher(impl i, op o, dtype t) {
  switch (t) {
    case dtype::f32:
      return find_launcher_f32(i, o);
    case dtype::f16:
      return find_launcher_f16(i, o);
    case dtype::bf16:
      return find_launcher_bf16(i, o);
    case dtype::f64:
      return find_launcher_f64(i, o);
  }
  return nullptr;
}

double bytes_moved(op o, dtype t, std::size_t n) {
  const double array = static_cast<double>(n) * static_cast<double>(size_of(t));
  const double mask = static_cast<double>(n) / 8;
  switch (o) {
    case op::relu:
    case op::selu:
      return 2 * array;  // in place still reads and writes every element
    case op::relu_backward:
    case op::selu_backward:
    case op::relu_backward_from_output:
    case op::selu_backward_from_output:
      return 3 * array;  // x (or y) and dy read, dx written
    case op::relu_forward_mask:
      return 2 * array + mask;
    case op::relu_backward_mask:
      return mask + 2 * array;  // mask and dy read, dx written
  }
  return 0;
}

}  // namespace bench
