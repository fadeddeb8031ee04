// NVRTC compiles the headers that claim run-time compilation support (docs/nvrtc.md) to PTX for
// sm_90: a user functor through cuact::elementwise_thread, the kernel template, every built-in
// activation's forward and gradient, and the fused bodies. No GPU: NVRTC is a library.
#include <nvrtc.h>

#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

// A plain program (no Catch2): it needs only the toolkit's libnvrtc, so it runs wherever NVRTC is.
namespace {

int failures = 0;
std::string current_case;
std::string current_log;

void check(bool ok, const char* what, int line) {
  if (ok) return;
  ++failures;
  std::fprintf(stderr, "FAILED [%s] line %d: %s\n%s\n", current_case.c_str(), line, what,
               current_log.c_str());
}
#define CHECK(...) check((__VA_ARGS__), #__VA_ARGS__, __LINE__)

struct compiled {
  nvrtcResult status;
  std::string log;
  std::string ptx;
};

// CUACT_NVRTC_INCLUDES: the repository's include/ and the CUDA toolkit's include directories
// (with CCCL's cuda/std), separated by '|' (tests/cpu_tests.cmake).
std::vector<std::string> include_options() {
  std::vector<std::string> options;
  std::stringstream dirs(CUACT_NVRTC_INCLUDES);
  for (std::string dir; std::getline(dirs, dir, '|');) {
    if (!dir.empty()) options.push_back("-I" + dir);
  }
  return options;
}

// The options docs/nvrtc.md requires: C++17 and -default-device (the headers' unannotated
// lambdas and constexpr helpers are device code under NVRTC).
compiled compile(const std::string& source) {
  nvrtcProgram program = nullptr;
  CHECK(nvrtcCreateProgram(&program, source.c_str(), "user.cu", 0, nullptr, nullptr) ==
        NVRTC_SUCCESS);
  std::vector<std::string> options = {"--gpu-architecture=compute_90", "-std=c++17",
                                      "-default-device"};
  for (const std::string& option : include_options()) options.push_back(option);
  std::vector<const char*> pointers;
  for (const std::string& option : options) pointers.push_back(option.c_str());
  compiled result;
  result.status = nvrtcCompileProgram(program, static_cast<int>(pointers.size()), pointers.data());
  std::size_t size = 0;
  nvrtcGetProgramLogSize(program, &size);
  result.log.resize(size);
  nvrtcGetProgramLog(program, &result.log[0]);
  if (result.status == NVRTC_SUCCESS) {
    nvrtcGetPTXSize(program, &size);
    result.ptx.resize(size);
    nvrtcGetPTX(program, &result.ptx[0]);
  }
  nvrtcDestroyProgram(&program);
  return result;
}

// Kernels over elementwise_thread, instantiated by the sources below for their ops.
const char* const kernel_prelude = R"(
template <class Op, int W, class... Out>
struct outputs_of {
  template <class... In>
  using params = cuact::elementwise_params<Op, W, cuact::detail::type_list<Out...>,
                                           cuact::detail::type_list<In...>>;
};
template <class Params>
__global__ void run(const Params p) {
  const cuda::std::size_t thread = blockIdx.x * cuda::std::size_t(blockDim.x) + threadIdx.x;
  cuact::elementwise_thread(p, thread, cuda::std::size_t(gridDim.x) * blockDim.x);
}
using bf16 = __nv_bfloat16;
)";

void require_compiles(const std::string& source, const std::string& kernel) {
  const compiled result = compile(source);
  current_log = result.log;
  CHECK(result.status == NVRTC_SUCCESS);
  CHECK(result.ptx.find(".target sm_90") != std::string::npos);
  CHECK(result.ptx.find(kernel) != std::string::npos);
  CHECK(result.ptx.find("st.global") != std::string::npos);
}

void user_functor() {
  require_compiles(R"(
#include <cuact/elementwise.cuh>
struct my_swish {
  template <class C>
  __device__ C operator()(C x) const { return x / (C(1) + exp(-x)); }
};
using params = cuact::elementwise_params<my_swish, 4, cuact::detail::type_list<float>,
                                         cuact::detail::type_list<float>>;
extern "C" __global__ void my_swish_f32(const params p) {
  const cuda::std::size_t thread = blockIdx.x * cuda::std::size_t(blockDim.x) + threadIdx.x;
  cuact::elementwise_thread(p, thread, cuda::std::size_t(gridDim.x) * blockDim.x);
}
)",
                   "my_swish_f32");
}

void kernel_template_and_user_activation() {
  require_compiles(R"(
#include <cuact/activation.cuh>
#include <cuact/elementwise.cuh>
struct square {
  template <class C>
  __device__ C operator()(C x) const { return x * x; }
  template <class C>
  __device__ C derivative(C x) const { return C(2) * x; }
};
template __global__ void cuact::detail::elementwise_kernel(
    cuact::elementwise_params<cuact::forward_op<square, __nv_bfloat16>, 8,
                              cuact::detail::type_list<__nv_bfloat16>,
                              cuact::detail::type_list<__nv_bfloat16>>);
template __global__ void cuact::detail::elementwise_kernel(
    cuact::elementwise_params<cuact::gradient_op<square, float>, 4,
                              cuact::detail::type_list<float>,
                              cuact::detail::type_list<float, float>>);
)",
                   "elementwise_kernel");
}

void built_in_activations() {
  std::string source = "#include <cuact/activations.cuh>\n#include <cuact/elementwise.cuh>\n";
  source += kernel_prelude;
  for (const char* name :
       {"relu",       "selu",       "hardtanh",   "leaky_relu", "hardsigmoid", "hardswish",
        "softshrink", "hardshrink", "threshold",  "softsign",   "elu",         "celu",
        "sigmoid",    "silu",       "logsigmoid", "softplus",   "mish",        "tanh",
        "tanhshrink", "gelu",       "gelu_tanh"}) {
    const std::string a = std::string("cuact::") + name;
    source += "template __global__ void run(outputs_of<cuact::forward_op<" + a +
              ", float>, 4, float>::params<float>);\n";
    source += "template __global__ void run(outputs_of<cuact::forward_op<" + a +
              ", bf16>, 8, bf16>::params<bf16>);\n";
    source += "template __global__ void run(outputs_of<cuact::gradient_op<" + a +
              ", float>, 4, float>::params<float, float>);\n";
    source += "template __global__ void run(outputs_of<cuact::gradient_op<" + a +
              ", __half>, 8, __half>::params<__half, __half>);\n";
  }
  require_compiles(source, "run");
}

void fused_bodies() {
  std::string source = "#include <cuact/activations.cuh>\n#include <cuact/fused.cuh>\n";
  source += kernel_prelude;
  source += R"(
template __global__ void run(outputs_of<cuact::gated_op<cuact::silu, bf16>, 8, bf16>::params<bf16, bf16>);
template __global__ void run(
    outputs_of<cuact::gated_gradient_op<cuact::silu, bf16>, 8, bf16, bf16>::params<bf16, bf16, bf16>);
template __global__ void run(
    outputs_of<cuact::gate_op<cuact::clamped_swiglu, bf16>, 8, bf16>::params<bf16, bf16>);
template __global__ void run(outputs_of<cuact::gate_gradient_op<cuact::clamped_swiglu, float>, 4, float,
                                        float>::params<float, float, float>);
template __global__ void run(outputs_of<cuact::bias_op<cuact::gelu, float>, 4, float>::params<float, float>);
template __global__ void run(
    outputs_of<cuact::bias_gradient_op<cuact::gelu, float>, 4, float>::params<float, float, float>);
using composed = cuact::composition<cuact::tanh, cuact::affine_activation<cuact::relu>>;
template __global__ void run(outputs_of<cuact::forward_op<composed, float>, 4, float>::params<float>);
template __global__ void run(
    outputs_of<cuact::forward_op<cuact::gelu, __nv_fp8_e4m3>, 16, __nv_fp8_e4m3>::params<bf16>);
)";
  require_compiles(source, "run");
}

// The run-time entry as cuact_torch.activation's sources use it: rtc.cuh first, a user functor,
// the forward kernel, and the quantize kernel over fused.cuh's amax_op.
void rtc_entry() {
  require_compiles(R"(
#include <cuact/rtc.cuh>
#include <cuact/fused.cuh>
#include <cuact/detail/kernels/quantize.cuh>
static_assert(_CCCL_META_UNROLL_LIMIT == 10, "rtc.cuh sets nvcc's unroll depth");
#ifdef __CUDA_FP6_H__
#error "rtc.cuh keeps CCCL from reading cuda_fp6.h"
#endif
struct user_activation {
  double beta = 1.0;
  template <class C>
  __device__ C operator()(C x) const { return x / (C(1) + exp(-C(beta) * x)); }
};
using T = __nv_bfloat16;
using U = __nv_fp8_e4m3;
extern "C" __global__ void user_forward(T* out, const T* x, cuda::std::size_t n, double beta) {
  using op_t = cuact::forward_op<user_activation, T>;
  const cuact::elementwise_params<op_t, 8, cuact::detail::type_list<T>, cuact::detail::type_list<T>>
      p{{out}, {x}, 0, 0, n, 1, op_t{{}, user_activation{beta}}};
  const cuda::std::size_t thread = blockIdx.x * cuda::std::size_t(blockDim.x) + threadIdx.x;
  cuact::elementwise_thread(p, thread, cuda::std::size_t(gridDim.x) * blockDim.x);
}
extern "C" __global__ void user_quantize(U* out, const T* x, cuda::std::size_t n, float* amax,
                                         const float* scale) {
  using op_t = cuact::detail::amax_op<user_activation, U>;
  using params_t = cuact::elementwise_params<op_t, 8, cuact::detail::type_list<U>,
                                             cuact::detail::type_list<T>>;
  const cuact::detail::quantize_params<params_t> q{
      params_t{{out}, {x}, 0, 0, n, 1, op_t{{}, user_activation{}, 1.0f, nullptr}}, amax, scale};
  cuact::detail::quantize_block(q, cuact::detail::global_memory_access{});
}
)",
                   "user_quantize");
}

void error_with_line() {
  const compiled result = compile(R"(#include <cuact/elementwise.cuh>
struct broken {
  __device__ float operator()(float x) const { return x + undefined_name; }
};
)");
  current_log = result.log;
  CHECK(result.status == NVRTC_ERROR_COMPILATION);
  CHECK(result.log.find("user.cu(3)") != std::string::npos);
  CHECK(result.log.find("undefined_name") != std::string::npos);
}

}  // namespace

int main() {
  const struct {
    const char* name;
    void (*run)();
  } cases[] = {
      {"a user functor through cuact::elementwise_thread", user_functor},
      {"elementwise_kernel and a user activation through forward_op",
       kernel_template_and_user_activation},
      {"every built-in activation, forward and gradient (activations.cuh)", built_in_activations},
      {"the fused bodies (fused.cuh)", fused_bodies},
      {"the run-time entry (rtc.cuh), a user forward and quantize", rtc_entry},
      {"an error in user code is reported with its line", error_with_line},
  };
  for (const auto& c : cases) {
    current_case = c.name;
    current_log.clear();
    const int before = failures;
    c.run();
    std::printf("%s: %s\n", failures == before ? "passed" : "FAILED", c.name);
  }
  return failures == 0 ? 0 : 1;
}
