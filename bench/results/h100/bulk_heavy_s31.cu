// Session 31 prototype: why heavy one-input forwards lost as the library's bulk tiles on the H100
// (h100/bulk_tiles_ab.txt: fp32 gelu -9%, softplus -1%, mish -0.7%; silu/sigmoid/tanh +0.5-0.8%)
// while CUB's bulk-copy kernel, with the same functor, runs them 0.1-0.9% ahead of cuact's
// elementwise_kernel (h100/family.txt: 27 heavy rows below CUB), and session 25's bare bulk-copy
// prototype ran bf16 silu at 1.010 x memcpy where the library's bulk tiles ran 1.003-1.004.
// Contestants per op, round-robin: cuact's entry (the model's launch), CUB, the library's
// bulk_tile_kernel over the entry's params on a grid of one block per tile ("lib bulk"), "lean":
// one tile per block, one mbarrier, nothing else (the library's compute_staged_vector, so the same
// math), and variants between the two (tile_body: a one-stage loop over tiles, the scalar head and
// tail inline or out of line; once_rest: plain-load steps for vectors past the grid). Runs b-e of
// h100/bulk_heavy_s31.txt had further contestants (lane-by-lane math, one- and two-stage shared
// memory, 128-thread tiles); their code is in this file's history (session 31). Every output
// checked bit-identical to the entry's.
// Built on the CPU machine (helpers: ../proto_common.cuh):
//   nvcc -O3 -std=c++17 -arch=sm_90 -I include -I bench/results bench/results/h100/bulk_heavy_s31.cu
#include <cub/device/device_transform.cuh>

#include <cstring>
#include <string>
#include <vector>

#include "proto_common.cuh"

using bf16 = __nv_bfloat16;
namespace ptx = cuda::ptx;

/// The tile of up to tile_vectors vectors from vector first_vector (< params.vectors) on (the
/// library's bulk_tile_at before session 31).
template <class Params>
__device__ cd::bulk_tile tile_at(const Params& params, unsigned tile_vectors,
                                 std::size_t first_vector) {
  const std::size_t left = params.vectors - first_vector;
  return {first_vector, static_cast<unsigned>(left < tile_vectors ? left : tile_vectors)};
}

/// Lean's body: block b's tile is vectors [b x T, b x T + T) for T threads per block (b x T below
/// params.vectors); one stage, one mbarrier.
template <class Params>
__device__ __forceinline__ void one_tile(const Params& params, std::uint64_t* staged) {
  const unsigned tile_vectors = blockDim.x;
  const cd::bulk_tile tile = tile_at(params, tile_vectors, std::size_t(blockIdx.x) * tile_vectors);
  if (threadIdx.x == 0) {
    ptx::mbarrier_init(staged, 1);
    ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);
    cd::issue_bulk_tile(params, tile, tile_vectors, cd::bulk_tile_staging(), staged,
                        std::make_index_sequence<Params::num_inputs>{});
  }
  __syncthreads();
  while (!ptx::mbarrier_try_wait_parity(staged, 0u)) {
  }
  if (threadIdx.x < tile.vectors) {
    cd::compute_staged_vector(params, tile, tile_vectors, threadIdx.x, cd::bulk_tile_staging(),
                              cd::global_memory_access{});
  }
}

/// Lean bulk tile: one_tile and nothing else. Run with 256 threads (CUB's and the library's tile)
/// and, in runs a-c, 128 ("lean128").
template <class Params>
__global__ void __launch_bounds__(512) lean_tile(const Params params) {
  __shared__ std::uint64_t staged;
  one_tile(params, &staged);
}

/// The scalar head and tail kept out of line (a call), for the variants that ask for it.
template <class Params>
__device__ __noinline__ void scalars_out_of_line(const Params& params) {
  cd::scalar_steps(params, std::size_t(blockIdx.x) * blockDim.x + threadIdx.x,
                   std::size_t(gridDim.x) * blockDim.x, cd::global_memory_access{});
}

/// Variants between the library's kernel and lean's: Loop: the block steps over its tiles
/// grid-stride through one stage (refilled after a barrier); Scalars: 0 none, 1 the library's
/// scalar_steps inline, 2 out of line (scalars_out_of_line).
template <class Params, bool Loop, int Scalars>
__device__ __forceinline__ void tile_body(const Params& params) {
  __shared__ std::uint64_t staged;
  const unsigned tile_vectors = blockDim.x;
  std::size_t first = std::size_t(blockIdx.x) * tile_vectors;
  const std::size_t step = std::size_t(gridDim.x) * tile_vectors;
  constexpr auto inputs = std::make_index_sequence<Params::num_inputs>{};
  if (threadIdx.x == 0) {
    ptx::mbarrier_init(&staged, 1);
    ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);
    if (first < params.vectors) {
      cd::issue_bulk_tile(params, tile_at(params, tile_vectors, first), tile_vectors,
                          cd::bulk_tile_staging(), &staged, inputs);
    }
  }
  __syncthreads();
  for (unsigned parity = 0; first < params.vectors; parity ^= 1u) {
    const cd::bulk_tile tile = tile_at(params, tile_vectors, first);
    while (!ptx::mbarrier_try_wait_parity(&staged, parity)) {
    }
    if (threadIdx.x < tile.vectors) {
      cd::compute_staged_vector(params, tile, tile_vectors, threadIdx.x, cd::bulk_tile_staging(),
                                cd::global_memory_access{});
    }
    if constexpr (!Loop) break;
    first += step;
    if (first < params.vectors) {
      __syncthreads();
      if (threadIdx.x == 0) {
        ptx::fence_proxy_async(ptx::space_shared);
        cd::issue_bulk_tile(params, tile_at(params, tile_vectors, first), tile_vectors,
                            cd::bulk_tile_staging(), &staged, inputs);
      }
    }
  }
  if constexpr (Scalars == 1) {
    cd::scalar_steps(params, std::size_t(blockIdx.x) * blockDim.x + threadIdx.x,
                     std::size_t(gridDim.x) * blockDim.x, cd::global_memory_access{});
  } else if constexpr (Scalars == 2) {
    scalars_out_of_line(params);
  }
}
template <class Params, bool Loop, int Scalars>
__global__ void __launch_bounds__(512) tile_bounded(const Params params) {
  tile_body<Params, Loop, Scalars>(params);
}
template <class Params, bool Loop, int Scalars>
__global__ void tile_unbounded(const Params params) {
  tile_body<Params, Loop, Scalars>(params);
}

/// Lean's one tile per block, then the vectors a grid that does not cover the tiles leaves (from
/// the grid's threads on, one plain 16-byte load each, grid-stride), then the scalars: correct for
/// any grid; a covering grid never enters the middle loop.
template <class Params>
__global__ void __launch_bounds__(512) once_rest(const Params params) {
  __shared__ std::uint64_t staged;
  const unsigned tile_vectors = blockDim.x;
  const std::size_t first = std::size_t(blockIdx.x) * tile_vectors;
  const std::size_t grid_threads = std::size_t(gridDim.x) * tile_vectors;
  if (first < params.vectors) one_tile(params, &staged);
  constexpr int W = Params::vec_width;
  const auto inputs = std::make_index_sequence<Params::num_inputs>{};
  const auto outputs = std::make_index_sequence<Params::num_outputs>{};
  for (std::size_t v = grid_threads + first + threadIdx.x; v < params.vectors; v += grid_threads) {
    const std::size_t at = params.head + v * W;
    cd::compute_and_store<W>(params, at,
                             cd::load_inputs<W>(params, at, cd::global_memory_access{}, inputs),
                             cd::no_vector_state{}, cd::global_memory_access{}, inputs, outputs);
  }
  cd::scalar_steps(params, first + threadIdx.x, grid_threads, cd::global_memory_access{});
}

/// Lean's structure, the op applied lane by lane (storage -> float -> op -> storage).
template <class Op, class T>
__global__ void __launch_bounds__(256) lane_tile(Op op, T* out, const T* in) {
  constexpr int lanes = 16 / sizeof(T);
  __shared__ std::uint64_t staged;
  extern __shared__ __align__(128) uint4 smem[];
  const std::size_t base = std::size_t(blockIdx.x) * 256 * lanes;
  if (threadIdx.x == 0) {
    ptx::mbarrier_init(&staged, 1);
    ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);
    ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, &staged,
                                   256u * 16u);
    ptx::cp_async_bulk(ptx::space_cluster, ptx::space_global, smem, in + base, 256u * 16u, &staged);
  }
  __syncthreads();
  while (!ptx::mbarrier_try_wait_parity(&staged, 0u)) {
  }
  const uint4 v = smem[threadIdx.x];
  uint4 r;
  const T* a = reinterpret_cast<const T*>(&v);
  T* o = reinterpret_cast<T*>(&r);
#pragma unroll
  for (int j = 0; j < lanes; ++j) o[j] = cd::from_compute<T>(op(cd::to_compute(a[j])));
  reinterpret_cast<uint4*>(out + base)[threadIdx.x] = r;
}

template <class T>
const char* type_name() {
  return std::is_same_v<T, float> ? "fp32" : "bf16";
}

template <class A, class T>
void run(const char* name, T* x, T* out, T* copy_dst, std::size_t n, int reps) {
  using op_t = cuact::forward_op<A, T>;
  const op_t op{{}, A{}};
  constexpr int width = 16 / sizeof(T);
  using params_t =
      decltype(cd::make_params<width>(op, cuact::outputs(out), n, cuact::inputs<T>(x)));
  const params_t params = cd::make_params<width>(op, cuact::outputs(out), n, cuact::inputs<T>(x));
  const unsigned tiles = unsigned((params.vectors + 255) / 256);
  const std::size_t staging = cd::bulk_tile_staging_bytes<params_t>(256);
  std::vector<V> vs = forward_references<A>(x, out, copy_dst, n);
  const auto lib = cd::bulk_tile_kernel<params_t>;
  vs.push_back({"lib bulk", [=] { lib<<<tiles, 256, staging>>>(params); }, {}});
  const auto lean = lean_tile<params_t>;
  vs.push_back({"lean", [=] { lean<<<tiles, 256, 256 * 16>>>(params); }, {}});
  const auto add = [&](const char* label, void (*kernel)(params_t)) {
    vs.push_back({label, [=] { kernel<<<tiles, 256, 256 * 16>>>(params); }, {}});
  };
  add("once+scal", tile_bounded<params_t, false, 1>);
  add("once+rest", once_rest<params_t>);
  check_contestants(vs, 1, 2, out, n * sizeof(T), std::size_t(8) << 20,
                    std::string(name) + " " + type_name<T>());
  time_round_robin(vs, reps);
  const double copy = med(vs[0].ms);
  const double cub = med(vs[2].ms);
  std::printf("%-12s %s", name, type_name<T>());
  for (std::size_t i = 1; i < vs.size(); ++i) {
    std::printf("  %s %.3f", vs[i].name.c_str(), copy / med(vs[i].ms));
  }
  std::printf("  | x CUB:");
  for (std::size_t i = 3; i < vs.size(); ++i)
    std::printf(" %s %.3f", vs[i].name.c_str(), cub / med(vs[i].ms));
  std::printf("  | cuact %.3f\n", cub / med(vs[1].ms));
}

/// run<A, T> for each activation A in turn, named by `names` (one per activation).
template <class T, class... A, class... Names>
void run_each(T* x, T* out, T* copy_dst, std::size_t n, int reps, Names... names) {
  (run<A, T>(names, x, out, copy_dst, n, reps), ...);
}

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 11;
  const std::size_t n = std::size_t(4096) * 393216;
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf("%s, n = 4096 x 393216, %d round-robin rounds, medians; x memcpy (same bytes)\n",
              prop.name, reps);
  float *xf, *of, *cf;
  CK(cudaMalloc(&xf, n * 4));
  CK(cudaMalloc(&of, n * 4));
  CK(cudaMalloc(&cf, n * 4));
  fill_normal<<<4096, 256>>>(xf, n, 1);
  bf16* xb = reinterpret_cast<bf16*>(cf);  // bf16 arrays in the first half of fp32 buffers
  bf16* ob = reinterpret_cast<bf16*>(of);
  CK(cudaDeviceSynchronize());
  run_each<float, cuact::relu, cuact::silu, cuact::sigmoid, cuact::tanh, cuact::softsign,
           cuact::selu, cuact::elu, cuact::mish, cuact::softplus, cuact::gelu_tanh>(
      xf, of, cf, n, reps, "relu", "silu", "sigmoid", "tanh", "softsign", "selu", "elu", "mish",
      "softplus", "gelu_tanh");
  // bf16: fresh normals in a buffer the fp32 rows no longer need
  fill_normal<<<4096, 256>>>(reinterpret_cast<bf16*>(cf), n, 2);
  CK(cudaDeviceSynchronize());
  run_each<bf16, cuact::relu, cuact::silu, cuact::sigmoid, cuact::tanh, cuact::mish,
           cuact::gelu_tanh, cuact::selu>(xb, ob, reinterpret_cast<bf16*>(xf), n, reps, "relu",
                                          "silu", "sigmoid", "tanh", "mish", "gelu_tanh", "selu");
}
