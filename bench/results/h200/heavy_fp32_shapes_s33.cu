// Session 33 prototype: the H200's fp32 heavy forwards by launch shape. --family on the H200
// (h200/family.txt, session 31) has the fp32 heavy forwards that the model runs at two vectors per
// thread (sigmoid, silu, mish, logsigmoid, softplus: 4236-4248 GB/s, 0.996-0.999 x memcpy) behind
// those the registers rule runs at one (elu, selu, celu, tanh, tanhshrink: 4254-4295 GB/s,
// 1.000-1.009), and PyTorch's timing has torch.compile 0.4-0.6% ahead of cuact on fp32 silu, gelu,
// gelu_tanh and softplus there (h200/torch_timing_s32.txt). Session 17's one-vector A/B on the
// H200 (h200/heavy_one_vector.txt, run 1) read softplus, mish and logsigmoid 5-9% slower at one
// vector, but on a fresh machine's first calls, where every compute-heavy row read low and
// spread widely. Contestants per op, 128-thread blocks: cuact's entry (the model's launch; again
// last, "cuact#2"), CUB, the entry's plan launched directly ("planEx" as the entry launches it,
// "plan<<<>>>"), and elementwise_kernel at v vectors per thread in p passes ("vVpP": v = 1 runs
// the op as one_vector_op, as the library launches one vector; "f1pP": the op's own kernel at one).
// Every output is checked bit-identical to the entry's. Run as `a.out REPS [seq]`: REPS
// round-robin rounds, or with `seq` each contestant's REPS calls in a row (the bench's method).
// Built on the CPU machine (helpers: ../proto_common.cuh):
//   nvcc -O3 -std=c++17 -arch=sm_90 -I include -I bench/results bench/results/h200/heavy_fp32_shapes_s33.cu
#include <cub/device/device_transform.cuh>

#include <climits>
#include <cstring>
#include <string>
#include <vector>

#include "proto_common.cuh"

/// elementwise_kernel over params at `passes` grid-stride passes of 128-thread blocks.
template <class Params>
void launch_direct(const Params& params, int passes) {
  const std::size_t per_pass = std::size_t(128) * passes;
  const std::size_t grid = (params.work_items() + per_pass - 1) / per_pass;
  cuact::elementwise_kernel<<<unsigned(grid), 128>>>(params);
}

/// v vectors per thread in p passes; `full`: at v = 1, the op's own kernel (compiled for its
/// max_vectors_per_thread) rather than one_vector_op's.
struct shape {
  unsigned vectors;
  int passes;
  bool full = false;
};

/// Round-robin unless `sequential` (argv[2] = "seq").
inline bool sequential = false;

template <class A>
void run(const char* name, float* x, float* out, float* copy_dst, std::size_t n, int reps,
         const std::vector<shape>& shapes) {
  using op_t = cuact::forward_op<A, float>;
  const op_t op{{}, A{}};
  std::vector<V> vs = forward_references<A>(x, out, copy_dst, n);
  std::string registers;  // of each direct contestant's kernel
  const auto add = [&](const std::string& label, const auto& params, int passes) {
    cudaFuncAttributes attributes{};
    CK(cudaFuncGetAttributes(&attributes,
                             cuact::elementwise_kernel<std::decay_t<decltype(params)>>));
    registers += " " + label + ":" + std::to_string(attributes.numRegs);
    vs.push_back({label, [=] { launch_direct(params, passes); }, {}});
  };
  {  // what cuact::forward launches (dispatch.cuh: with_launched_params, then plan_launch),
     // reported and launched as the entry does (cudaLaunchKernelEx) and by <<<>>>
    const auto params =
        cuact::make_elementwise_params<4>(op, cuact::outputs(out), n, cuact::inputs<float>(x));
    CK(cd::with_launched_params(params, 0, cd::forward_cost<A>, [&](const auto& launched) {
      auto planned = launched;
      cd::launch_plan plan{};
      CK(cd::plan_launch(planned, 0, cd::forward_cost<A>, true, plan));
      constexpr bool one = std::decay_t<decltype(launched)>::max_vectors_per_thread == 1;
      registers +=
          std::string(" | entry: ") + (one ? "one_vector_op" : "own kernel") + " " +
          std::to_string(plan.shape.blocks) + " x " + std::to_string(plan.shape.threads_per_block) +
          " vpt " + std::to_string(plan.shape.vectors_per_thread) + " passes " +
          std::to_string(plan.shape.passes) + " shared " +
          std::to_string(plan.shape.dynamic_shared_bytes) + (plan.bulk_tiles ? " bulk" : "");
      if (!plan.bulk_tiles) {
        const auto kernel = cuact::elementwise_kernel<std::decay_t<decltype(planned)>>;
        vs.push_back(
            {"planEx", [=] { CK(cd::launch_kernel(kernel, planned, plan.shape, nullptr)); }, {}});
        vs.push_back({"plan<<<>>>",
                      [=] {
                        kernel<<<plan.shape.blocks, plan.shape.threads_per_block,
                                 plan.shape.dynamic_shared_bytes>>>(planned);
                      },
                      {}});
      }
      return cudaSuccess;
    }));
  }
  for (const shape s : shapes) {
    const std::string label =
        (s.full ? "f" : "v") + std::to_string(s.vectors) + "p" + std::to_string(s.passes);
    if (s.vectors == 1 && !s.full) {
      add(label,
          cuact::make_elementwise_params<4>(cd::one_vector_op<op_t>{op}, cuact::outputs(out), n,
                                            cuact::inputs<float>(x), 1),
          s.passes);
    } else {
      add(label,
          cuact::make_elementwise_params<4>(op, cuact::outputs(out), n, cuact::inputs<float>(x),
                                            s.vectors),
          s.passes);
    }
  }
  vs.push_back({"cuact#2", [=] { CK(cuact::forward(A{}, x, out, n)); }, {}});
  check_contestants(vs, 1, 2, out, n * sizeof(float), std::size_t(16) << 20, name);
  time_contestants(vs, reps, !sequential);
  const double copy = med(vs[0].ms);
  std::printf("%-12s memcpy %.3f ms |", name, copy);
  for (std::size_t i = 1; i < vs.size(); ++i) {
    std::printf(" %s %.4f", vs[i].name.c_str(), copy / med(vs[i].ms));
  }
  std::printf(" | registers%s\n", registers.c_str());
}

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 21;
  sequential = argc > 2 && std::strcmp(argv[2], "seq") == 0;
  const std::size_t n = std::size_t(4096) * 393216;
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf(
      "%s, fp32, n = 4096 x 393216, %s, medians; x memcpy (same bytes), 128-thread "
      "blocks\n",
      prop.name,
      sequential ? "each contestant's calls in a row (two warm-up calls, then each timed alone)"
                 : "round-robin rounds (after a three-round warm-up row of relu)");
  std::printf("reps %d\n", reps);
  float *x, *out, *copy_dst;
  CK(cudaMalloc(&x, n * 4));
  CK(cudaMalloc(&out, n * 4));
  CK(cudaMalloc(&copy_dst, n * 4));
  fill_normal<<<4096, 256>>>(x, n, 1);
  CK(cudaDeviceSynchronize());
  const std::vector<shape> light = {{1, 1}, {1, 1, true}, {2, 1}, {1, 2}, {2, 2}};
  const std::vector<shape> longer = {{1, 1}, {2, 1}, {1, 2}, {1, 4}, {1, 6}, {1, 8}};
  run<cuact::relu>("warm-up", x, out, copy_dst, n, 3, light);  // clocks up before the rows
  for (int sweep = 1; sweep <= 2; ++sweep) {  // twice: how far a row moves within one run
    std::printf("## sweep %d\n", sweep);
    run<cuact::relu>("relu", x, out, copy_dst, n, reps, light);
    run<cuact::tanh>("tanh", x, out, copy_dst, n, reps, light);
    run<cuact::softsign>("softsign", x, out, copy_dst, n, reps, light);
    run<cuact::elu>("elu", x, out, copy_dst, n, reps, light);
    run<cuact::celu>("celu", x, out, copy_dst, n, reps, light);
    run<cuact::selu>("selu", x, out, copy_dst, n, reps, light);
    run<cuact::tanhshrink>("tanhshrink", x, out, copy_dst, n, reps, light);
    run<cuact::sigmoid>("sigmoid", x, out, copy_dst, n, reps, light);
    run<cuact::silu>("silu", x, out, copy_dst, n, reps, light);
    run<cuact::mish>("mish", x, out, copy_dst, n, reps, light);
    run<cuact::logsigmoid>("logsigmoid", x, out, copy_dst, n, reps, light);
    run<cuact::softplus>("softplus", x, out, copy_dst, n, reps, longer);
    run<cuact::gelu_tanh>("gelu_tanh", x, out, copy_dst, n, reps, longer);
    run<cuact::gelu>("gelu", x, out, copy_dst, n, reps, longer);
  }
}
