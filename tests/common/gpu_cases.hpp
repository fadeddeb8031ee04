// The GPU engine tests' harness: batches of cases of one elementwise op (any inputs and outputs,
// each with its element type) laid out in a guarded arena at chosen element offsets, inputs filled
// from the hash, the expected outputs computed by the one-thread-per-element reference kernel, the
// outputs poisoned; then every case's call (a public entry, or elementwise_kernel launched
// directly with its own grid and vectors per thread, on one of three streams), and the checks:
// the call's status, no error left behind, the guard bytes around every array, unchanged inputs,
// and every output element equal to the reference (same_result).
#pragma once

#include <cuda_runtime.h>

#include <cuda/std/tuple>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <cuact/cuact.cuh>

#include "catch.hpp"
#include "device.hpp"
#include "ops.hpp"
#include "support.hpp"

namespace cuact_test {

/// How a case is launched: through the public entry (direct = false), or elementwise_kernel
/// launched directly with a grid from `grid_choice` / `block_choice` and `vectors_per_thread`.
struct launch_setup {
  bool direct = false;
  unsigned grid_choice = 0, block_choice = 0;
  unsigned vectors_per_thread = 1;
  int stream = 0;  ///< 0: the legacy default stream, 1: a blocking stream, 2: a non-blocking one
};

/// One case: n elements, each array at an element offset from a 256-byte boundary, output 0 in
/// place over input `in_place` (-1: out of place; `in_place_overload`: forward's one-pointer form).
struct gpu_case {
  std::size_t n = 0;
  std::size_t in_offset[4] = {};
  std::size_t out_offset[4] = {};
  int in_place = -1;
  bool in_place_overload = false;
  int width = cuact::auto_width;
  launch_setup launch;
  std::uint64_t seed = 0;
  // set by the batch
  std::size_t in_slot[4] = {}, out_slot[4] = {}, expected_slot[4] = {};
  cudaError_t status = cudaSuccess;
  unsigned grid = 0, block = 0;  ///< of a direct launch
};

inline std::string describe_case(const gpu_case& c, int inputs, int outputs) {
  std::string s =
      "n=" + std::to_string(c.n) + " width=" + std::to_string(c.width) + " in_offsets=(";
  for (int k = 0; k < inputs; ++k) s += (k ? "," : "") + std::to_string(c.in_offset[k]);
  s += ") out_offsets=(";
  for (int m = 0; m < outputs; ++m) s += (m ? "," : "") + std::to_string(c.out_offset[m]);
  s += ") in_place=" + std::to_string(c.in_place) +
       (c.in_place_overload ? " (one-pointer overload)" : "");
  s += c.launch.direct
           ? " direct launch grid=" + std::to_string(c.grid) + "x" + std::to_string(c.block) +
                 " vectors_per_thread=" + std::to_string(c.launch.vectors_per_thread)
           : std::string(" public entry");
  return s + " stream=" + std::to_string(c.launch.stream) + " seed=" + std::to_string(c.seed);
}

/// The three streams cases run on.
struct test_streams {
  cudaStream_t s[3] = {nullptr, nullptr, nullptr};
  test_streams() {
    CUACT_CUDA_REQUIRE(cudaStreamCreate(&s[1]));
    CUACT_CUDA_REQUIRE(cudaStreamCreateWithFlags(&s[2], cudaStreamNonBlocking));
  }
  ~test_streams() {
    cudaStreamDestroy(s[1]);
    cudaStreamDestroy(s[2]);
  }
  test_streams(const test_streams&) = delete;
  test_streams& operator=(const test_streams&) = delete;
};

/// Grid and block of a direct launch of `kernel` over `work` items: block from a list (clamped to
/// what the kernel allows); grid one block, a few, exactly enough, more than enough, or a random
/// count, and never so few that a thread loops more than 2048 times.
template <class Kernel>
void choose_grid(gpu_case& c, Kernel kernel, std::size_t work) {
  static const unsigned blocks[] = {1, 32, 33, 64, 96, 128, 255, 256, 512, 1024};
  cudaFuncAttributes attributes{};
  CUACT_CUDA_REQUIRE(cudaFuncGetAttributes(&attributes, kernel));
  const unsigned block = std::min<unsigned>(blocks[c.launch.block_choice % 10],
                                            static_cast<unsigned>(attributes.maxThreadsPerBlock));
  const std::size_t enough = std::max<std::size_t>(1, (work + block - 1) / block);
  const unsigned g = c.launch.grid_choice;
  std::size_t grid = g % 5 == 0   ? 1
                     : g % 5 == 1 ? 1 + (g / 5) % 8
                     : g % 5 == 2 ? enough
                     : g % 5 == 3 ? 2 * enough + 3
                                  : 1 + (g / 5) % enough;
  grid = std::max(grid, (work + std::size_t(block) * 2048 - 1) / (std::size_t(block) * 2048));
  c.grid = static_cast<unsigned>(std::min<std::size_t>(grid, 0x7FFFFFFF));
  c.block = block;
}

/// elementwise_kernel<<<grid, block>>> for `op` at width V over the case's arrays.
template <int V, class Op, class... Out, class... In>
cudaError_t launch_direct(gpu_case& c, const Op& op, const cuda::std::tuple<Out*...>& out,
                          const cuda::std::tuple<const In*...>& in, cudaStream_t stream) {
  const auto params = cuact::make_elementwise_params<V>(
      op, cuda::std::apply([](Out*... p) { return cuact::outputs(p...); }, out), c.n,
      cuda::std::apply([](const In*... p) { return cuact::inputs(p...); }, in),
      c.launch.vectors_per_thread);
  choose_grid(c, cuact::elementwise_kernel<decltype(params)>, params.work_items());
  if (c.n == 0) return cudaSuccess;
  cuact::elementwise_kernel<<<c.grid, c.block, 0, stream>>>(params);
  return cudaGetLastError();
}

template <class Op, class Outputs, class Inputs>
class case_batch;

/// Cases of one op over outputs Out... and inputs In..., run in batches of bounded arena size.
/// launch(gpu_case&, tuple<Out*...>, tuple<const In*...>, cudaStream_t) -> cudaError_t makes the
/// call under test.
template <class Op, class... Out, class... In>
class case_batch<Op, cuact::detail::type_list<Out...>, cuact::detail::type_list<In...>> {
  static constexpr std::size_t num_in = sizeof...(In), num_out = sizeof...(Out);
  template <std::size_t K>
  using in_t = std::tuple_element_t<K, std::tuple<In...>>;
  template <std::size_t M>
  using out_t = std::tuple_element_t<M, std::tuple<Out...>>;

 public:
  case_batch(Op op, std::string name, guarded_arena& arena, const test_streams& streams,
             tally& total)
      : op_(op), name_(std::move(name)), arena_(arena), streams_(streams), total_(total) {}

  template <class Launch>
  void add(const gpu_case& c, Launch&& launch) {
    const std::size_t bytes = c.n * (2 * (sizeof(Out) + ...) + (sizeof(In) + ...)) + 4096;
    if (!cases_.empty() && (bytes_ + bytes > (std::size_t(256) << 20) || cases_.size() >= 512)) {
      flush(launch);
    }
    cases_.push_back(c);
    bytes_ += bytes;
  }

  template <class Launch>
  void flush(Launch&& launch) {
    if (cases_.empty()) return;
    static constexpr std::size_t in_size[] = {sizeof(In)...};
    static constexpr std::size_t out_size[] = {sizeof(Out)...};
    arena_.clear();
    for (gpu_case& c : cases_) {
      for (std::size_t k = 0; k < num_in; ++k)
        c.in_slot[k] = arena_.add(c.n * in_size[k], c.in_offset[k] * in_size[k]);
      for (std::size_t m = 0; m < num_out; ++m) {
        c.out_slot[m] = m == 0 && c.in_place >= 0
                            ? c.in_slot[c.in_place]
                            : arena_.add(c.n * out_size[m], c.out_offset[m] * out_size[m]);
        c.expected_slot[m] = arena_.add(c.n * out_size[m], 0);
      }
    }
    arena_.prepare();
    for (const gpu_case& c : cases_) prepare_case(c);
    CUACT_CUDA_REQUIRE(cudaDeviceSynchronize());  // cases on non-blocking streams do not wait
    for (gpu_case& c : cases_) {
      c.status = launch(c, outputs(c), inputs(c), streams_.s[c.launch.stream]);
    }
    CUACT_CUDA_REQUIRE(cudaDeviceSynchronize());
    CUACT_CUDA_REQUIRE(cudaGetLastError());
    arena_.download();
    for (const gpu_case& c : cases_) check_case(c);
    cases_.clear();
    bytes_ = 0;
  }

 private:
  cuda::std::tuple<Out*...> outputs(const gpu_case& c) const {
    return outputs(c, std::index_sequence_for<Out...>{});
  }
  template <std::size_t... M>
  cuda::std::tuple<Out*...> outputs(const gpu_case& c, std::index_sequence<M...>) const {
    return cuda::std::tuple<Out*...>(arena_.template device<Out>(c.out_slot[M])...);
  }
  template <std::size_t... M>
  cuda::std::tuple<Out*...> expected(const gpu_case& c, std::index_sequence<M...>) const {
    return cuda::std::tuple<Out*...>(arena_.template device<Out>(c.expected_slot[M])...);
  }
  cuda::std::tuple<const In*...> inputs(const gpu_case& c) const {
    return inputs(c, std::index_sequence_for<In...>{});
  }
  template <std::size_t... K>
  cuda::std::tuple<const In*...> inputs(const gpu_case& c, std::index_sequence<K...>) const {
    return cuda::std::tuple<const In*...>(arena_.template device<In>(c.in_slot[K])...);
  }

  void prepare_case(const gpu_case& c) {
    fill_inputs(c, std::index_sequence_for<In...>{});
    compute_reference(op_, c.n, expected(c, std::index_sequence_for<Out...>{}), inputs(c));
    poison_outputs(c, std::index_sequence_for<Out...>{});
    CUACT_CUDA_REQUIRE(cudaGetLastError());
  }
  template <std::size_t... K>
  void fill_inputs(const gpu_case& c, std::index_sequence<K...>) {
    (fill_hash(arena_.template device<In>(c.in_slot[K]), c.n, c.seed + K), ...);
  }
  template <std::size_t... M>
  void poison_outputs(const gpu_case& c, std::index_sequence<M...>) {
    ((M == 0 && c.in_place >= 0 ? void()
                                : poison(arena_.template device<Out>(c.expected_slot[M]),
                                         arena_.template device<Out>(c.out_slot[M]), c.n)),
     ...);
  }

  void check_case(const gpu_case& c) {
    ++total_.cases;
    total_.elements += c.n;
    std::string problems;
    std::size_t bad = 0;
    if (c.status != cudaSuccess)
      problems += std::string("call returned ") + cudaGetErrorName(c.status) + "; ";
    for (std::size_t k = 0; k < num_in; ++k) {
      if (!arena_.guards_intact(c.in_slot[k]))
        problems += "write outside [0, n) around input " + std::to_string(k) + "; ";
    }
    for (std::size_t m = 0; m < num_out; ++m) {
      if (!arena_.guards_intact(c.out_slot[m]))
        problems += "write outside [0, n) around output " + std::to_string(m) + "; ";
    }
    check_inputs(c, problems, std::index_sequence_for<In...>{});
    check_outputs(c, problems, bad, std::index_sequence_for<Out...>{});
    total_.bad_elements += bad;
    if (!problems.empty()) {
      ++total_.failed_cases;
      if (total_.failed_cases <= 10) {
        const std::string what =
            name_ + ": " + describe_case(c, static_cast<int>(num_in), static_cast<int>(num_out));
        INFO(what);
        FAIL_CHECK(problems);
      }
    }
  }
  template <std::size_t... K>
  void check_inputs(const gpu_case& c, std::string& problems, std::index_sequence<K...>) {
    ((static_cast<int>(K) == c.in_place ? void() : check_input<K>(c, problems)), ...);
  }
  template <std::size_t K>
  void check_input(const gpu_case& c, std::string& problems) {
    const in_t<K>* p = arena_.template host<in_t<K>>(c.in_slot[K]);
    for (std::size_t i = 0; i < c.n; ++i) {
      if (bits_of(p[i]) != hash_bits<in_t<K>>(c.seed + K, i)) {
        problems += "input " + std::to_string(K) + " modified at " + std::to_string(i) + "; ";
        return;
      }
    }
  }
  template <std::size_t... M>
  void check_outputs(const gpu_case& c, std::string& problems, std::size_t& bad,
                     std::index_sequence<M...>) {
    (check_output<M>(c, problems, bad), ...);
  }
  template <std::size_t M>
  void check_output(const gpu_case& c, std::string& problems, std::size_t& bad) {
    const out_t<M>* got = arena_.template host<out_t<M>>(c.out_slot[M]);
    const out_t<M>* want = arena_.template host<out_t<M>>(c.expected_slot[M]);
    for (std::size_t i = 0; i < c.n; ++i) {
      if (same_result(got[i], want[i])) continue;
      if (bad++ < 4) {
        problems += "output " + std::to_string(M) + " element " + std::to_string(i) + " is " +
                    describe(got[i]) + ", expected " + describe(want[i]) + "; ";
      }
    }
  }

  Op op_;
  std::string name_;
  guarded_arena& arena_;
  const test_streams& streams_;
  tally& total_;
  std::vector<gpu_case> cases_;
  std::size_t bytes_ = 0;
};

// ---- the table's passes ---------------------------------------------------------------------

/// The call of pass P of `act` on T at width W: the public entry, or a direct launch.
template <pass P, int W, class T, class A>
auto pass_launcher(const A& act) {
  return [act](gpu_case& c, const auto& out, const auto& in, cudaStream_t stream) -> cudaError_t {
    constexpr int V = resolved_width(W, sizeof(T));
    if (c.launch.direct) return launch_direct<V>(c, pass_op<P, T>(act), out, in, stream);
    const T* in1 = nullptr;
    if constexpr (pass_inputs(P) == 2) in1 = cuda::std::get<1>(in);
    return call_entry<P, W>(act, cuda::std::get<0>(in), in1, cuda::std::get<0>(out), c.n,
                            c.in_place_overload, stream);
  };
}

template <pass P, class T, class A>
using pass_batch =
    case_batch<decltype(pass_op<P, T>(std::declval<A>())), cuact::detail::type_list<T>,
               std::conditional_t<pass_inputs(P) == 1, cuact::detail::type_list<T>,
                                  cuact::detail::type_list<T, T>>>;

/// The layouts of the matrix tests for n: every offset 0..15 with all pointers equal (vectors
/// after a head), in place, and with one pointer at another offset (scalars only); for large n a
/// few representative ones. In place is over the last input (forward: x; backward: dy), with the
/// forward's one-pointer overload every other time.
inline std::vector<gpu_case> matrix_layouts(int inputs, std::size_t n, bool quick) {
  std::vector<gpu_case> cases;
  const auto same = [&](std::size_t k) {
    gpu_case c;
    c.n = n;
    std::fill(std::begin(c.in_offset), std::end(c.in_offset), k);
    std::fill(std::begin(c.out_offset), std::end(c.out_offset), k);
    cases.push_back(c);
  };
  const auto in_place = [&](std::size_t k, std::size_t other) {
    same(k);
    gpu_case& c = cases.back();
    c.in_place = inputs - 1;
    c.in_offset[0] = inputs == 2 ? other : k;
    c.in_place_overload = inputs == 1 && k % 2 == 1;
  };
  const auto different = [&](std::size_t k) {
    same(k);
    gpu_case& c = cases.back();
    const std::size_t d = (k + 1 + k % 7) % 16;  // != k
    switch (inputs == 1 ? k % 2 : k % 3) {
      case 0:
        c.out_offset[0] = d;
        break;
      case 1:
        c.in_offset[0] = d;
        break;
      default:
        c.in_offset[1] = d;
        break;
    }
  };
  if (quick) {
    same(0);
    same(3);
    in_place(1, 1);
    in_place(2, 5);
    different(0);
    different(3);
  } else if (n <= 4099) {
    for (std::size_t k = 0; k < 16; ++k) {
      same(k);
      in_place(k, k);
      if (inputs == 2) in_place(k, (k + 5) % 16);
      different(k);
    }
  } else {
    same(0);
    same(1);
    same(7);
    in_place(0, 0);
    in_place(3, 3);
    if (inputs == 2) in_place(2, 9);
    different(0);
    different(5);
    different(2);
  }
  return cases;
}

/// n in {0, 1, 2, V-1, V, V+1, 31, 32, 33, 1000, 4099, 65537, 2^20 + 3}.
inline std::vector<std::size_t> matrix_sizes(int vec, bool quick) {
  const std::size_t v = static_cast<std::size_t>(vec);
  std::vector<std::size_t> sizes = quick ? std::vector<std::size_t>{0, 1, v + 1, 33, 4099}
                                         : std::vector<std::size_t>{0,
                                                                    1,
                                                                    2,
                                                                    v - 1,
                                                                    v,
                                                                    v + 1,
                                                                    31,
                                                                    32,
                                                                    33,
                                                                    1000,
                                                                    4099,
                                                                    65537,
                                                                    (std::size_t(1) << 20) + 3};
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  return sizes;
}

/// Pass P of a table row on T at width W through its public entry: every size and layout of the
/// matrix; with `deep`, also 2^24 + 5 elements (enough that the launch model gives several
/// vectors or passes per thread) and direct launches with every vectors_per_thread and grid.
template <pass P, int W, class T, class Row>
void run_pass_matrix(const Row& row, guarded_arena& arena, const test_streams& streams,
                     tally& total, std::uint64_t& seed, bool deep) {
  using A = typename Row::activation_type;
  constexpr int V = resolved_width(W, sizeof(T));
  constexpr int inputs = pass_inputs(P);
  const bool quick = quick_mode();
  const std::string name =
      type_name<T>() + " " + row.name + " " + pass_name(P) + " W=" + std::to_string(W);
  pass_batch<P, T, A> batch(pass_op<P, T>(row.act), name, arena, streams, total);
  const auto launch = pass_launcher<P, W, T>(row.act);
  std::vector<std::size_t> sizes = matrix_sizes(V, quick);
  if (quick && !deep_row_v<A>)
    sizes = {std::size_t(V + 1), 4099};  // sanitizers: a taste of every row
  if (deep && !quick) sizes.push_back((std::size_t(1) << 24) + 5);
  for (std::size_t n : sizes) {
    for (gpu_case c : matrix_layouts(inputs, n, quick)) {
      c.width = W;
      c.seed = seed += 8;
      batch.add(c, launch);
    }
  }
  if (deep) {
    using params_t = decltype(cuact::make_elementwise_params<V>(
        pass_op<P, T>(row.act), static_cast<T*>(nullptr), 0, static_cast<const T*>(nullptr)));
    constexpr unsigned max_k = static_cast<unsigned>(params_t::max_vectors_per_thread);
    for (unsigned k = 1; k <= max_k; k = quick && k < max_k ? max_k : k + 1) {
      std::vector<std::size_t> direct_sizes{
          1, V + 1, 1000, k * V * 128 * 3 - 1, k * V * 128 * 3 + V + 1, 65537};
      if (quick) direct_sizes = {V + 1, k * V * 128 * 3 + V + 1};
      for (std::size_t n : direct_sizes) {
        for (unsigned g = 0; g < (quick ? 2u : 5u); ++g) {
          for (gpu_case c : matrix_layouts(inputs, n, true)) {
            c.width = W;
            c.seed = seed += 8;
            c.in_place_overload = false;
            c.launch.direct = true;
            c.launch.vectors_per_thread = k;
            c.launch.grid_choice = g;
            c.launch.block_choice = static_cast<unsigned>(seed / 8);
            c.launch.stream = static_cast<int>(g % 3);
            batch.add(c, launch);
          }
        }
      }
    }
  }
  batch.flush(launch);
}

/// Pass P of every row of the table on T: the matrix at the automatic width for every row; every
/// explicit width, direct launches and large n for relu and selu.
template <pass P, class T>
void run_table_pass(const char* what) {
  guarded_arena arena;
  test_streams streams;
  tally total;
  std::uint64_t seed = static_cast<std::uint64_t>(P) << 40;
  for_each_activation([&](const auto& row) {
    using A = typename std::decay_t<decltype(row)>::activation_type;
    if constexpr (pass_applies_v<P, A>) {
      if constexpr (deep_row_v<A>) {
        for_each_width<T>([&](auto w) {
          run_pass_matrix<P, decltype(w)::value, T>(row, arena, streams, total, seed,
                                                    decltype(w)::value == cuact::auto_width);
        });
      } else {
        run_pass_matrix<P, cuact::auto_width, T>(row, arena, streams, total, seed, false);
      }
    }
  });
  total.print(std::string(what) + " " + type_name<T>());
  CHECK(total.failed_cases == 0);
  CHECK(total.cases > 0);
}

}  // namespace cuact_test

namespace cuact_test {

// ---- the ReLU mask round trip ---------------------------------------------------------------

/// relu_forward_mask(x -> out, mask) then relu_backward_mask(mask, dy -> dx): out and dx against
/// the reference kernel's relu forward and relu backward from x (bit for bit), the mask bits
/// against x > 0 with zero bits past n. Arrays at their own element offsets, the mask at a word
/// offset, out over x and dx over dy when in place.
struct mask_case {
  std::size_t n = 0;
  std::size_t x_offset = 0, out_offset = 0, dy_offset = 0, dx_offset = 0, mask_word_offset = 0;
  bool forward_in_place = false, backward_in_place = false;
  int width = cuact::auto_width;
  launch_setup launch;
  std::uint64_t seed = 0;
  enum { x, out, mask, dy, dx, expected_out, expected_dx, slot_count };
  std::size_t slot[slot_count] = {};
  cudaError_t status = cudaSuccess;
};

inline std::string describe_mask_case(const mask_case& c) {
  return "mask round trip n=" + std::to_string(c.n) + " width=" + std::to_string(c.width) +
         " offsets(x,out,dy,dx)=(" + std::to_string(c.x_offset) + "," +
         std::to_string(c.out_offset) + "," + std::to_string(c.dy_offset) + "," +
         std::to_string(c.dx_offset) + ") mask_word_offset=" + std::to_string(c.mask_word_offset) +
         " in_place=(" + std::to_string(c.forward_in_place) + "," +
         std::to_string(c.backward_in_place) + ")" +
         (c.launch.direct ? " direct" : " public entry") +
         " stream=" + std::to_string(c.launch.stream) + " seed=" + std::to_string(c.seed);
}

/// The calls of a mask case at width W: the public entries, or the sign-mask forward kernel and
/// elementwise_kernel launched directly.
template <class T, int W>
cudaError_t launch_mask_case(mask_case& c, const T* x, T* out, std::uint32_t* mask, const T* dy,
                             T* dx, cudaStream_t stream) {
  if (!c.launch.direct) {
    if (const cudaError_t e = cuact::relu_forward_mask(x, out, mask, c.n, stream); e != cudaSuccess)
      return e;
    return cuact::relu_backward_mask<W>(mask, dy, dx, c.n, stream);
  }
  if (c.n == 0) return cudaSuccess;
  constexpr int V = resolved_width(W, sizeof(T));
  const auto forward =
      cuact::detail::make_sign_mask_params(cuact::forward_op<cuact::relu, T>{}, x, out, mask, c.n);
  gpu_case g;
  g.launch = c.launch;
  choose_grid(g, cuact::detail::sign_mask_forward_kernel<T, cuact::forward_op<cuact::relu, T>>,
              cuact::detail::mask_bytes(c.n));
  cuact::detail::sign_mask_forward_kernel<<<g.grid, g.block, 0, stream>>>(forward);
  g.n = c.n;
  return launch_direct<V>(g, cuact::detail::make_masked_gradient<T>(mask, c.n),
                          cuda::std::tuple<T*>(dx), cuda::std::tuple<const T*>(dy), stream);
}

template <class T>
class mask_batch {
 public:
  mask_batch(guarded_arena& arena, const test_streams& streams, tally& total)
      : arena_(arena), streams_(streams), total_(total) {}

  template <class Launch>
  void add(const mask_case& c, Launch&& launch) {
    const std::size_t bytes = 7 * (c.n * sizeof(T) + 1024);
    if (!cases_.empty() && (bytes_ + bytes > (std::size_t(256) << 20) || cases_.size() >= 512))
      flush(launch);
    cases_.push_back(c);
    bytes_ += bytes;
  }

  /// launch(mask_case&, x, out, mask, dy, dx, stream) -> cudaError_t.
  template <class Launch>
  void flush(Launch&& launch) {
    if (cases_.empty()) return;
    arena_.clear();
    for (mask_case& c : cases_) {
      const std::size_t bytes = c.n * sizeof(T);
      c.slot[mask_case::x] = arena_.add(bytes, c.x_offset * sizeof(T));
      c.slot[mask_case::out] =
          c.forward_in_place ? c.slot[mask_case::x] : arena_.add(bytes, c.out_offset * sizeof(T));
      c.slot[mask_case::mask] = arena_.add(cuact::relu_mask_words(c.n) * 4, c.mask_word_offset * 4);
      c.slot[mask_case::dy] = arena_.add(bytes, c.dy_offset * sizeof(T));
      c.slot[mask_case::dx] =
          c.backward_in_place ? c.slot[mask_case::dy] : arena_.add(bytes, c.dx_offset * sizeof(T));
      c.slot[mask_case::expected_out] = arena_.add(bytes, 0);
      c.slot[mask_case::expected_dx] = arena_.add(bytes, 0);
    }
    arena_.prepare();  // the mask words start as the sentinel: an unwritten word shows
    for (const mask_case& c : cases_) {
      T* const x = dev(c, mask_case::x);
      T* const dy = dev(c, mask_case::dy);
      fill_hash(x, c.n, c.seed);
      fill_hash(dy, c.n, c.seed + 1);
      compute_reference(cuact::forward_op<cuact::relu, T>{}, c.n,
                        cuda::std::tuple<T*>(dev(c, mask_case::expected_out)),
                        cuda::std::tuple<const T*>(x));
      compute_reference(cuact::gradient_op<cuact::relu, T>{}, c.n,
                        cuda::std::tuple<T*>(dev(c, mask_case::expected_dx)),
                        cuda::std::tuple<const T*, const T*>(x, dy));
      if (!c.forward_in_place) poison(dev(c, mask_case::expected_out), dev(c, mask_case::out), c.n);
      if (!c.backward_in_place) poison(dev(c, mask_case::expected_dx), dev(c, mask_case::dx), c.n);
    }
    CUACT_CUDA_REQUIRE(cudaGetLastError());
    CUACT_CUDA_REQUIRE(cudaDeviceSynchronize());
    for (mask_case& c : cases_) {
      c.status = launch(c, static_cast<const T*>(dev(c, mask_case::x)), dev(c, mask_case::out),
                        arena_.template device<std::uint32_t>(c.slot[mask_case::mask]),
                        static_cast<const T*>(dev(c, mask_case::dy)), dev(c, mask_case::dx),
                        streams_.s[c.launch.stream]);
    }
    CUACT_CUDA_REQUIRE(cudaDeviceSynchronize());
    CUACT_CUDA_REQUIRE(cudaGetLastError());
    arena_.download();
    for (const mask_case& c : cases_) check(c);
    cases_.clear();
    bytes_ = 0;
  }

 private:
  T* dev(const mask_case& c, int which) const { return arena_.template device<T>(c.slot[which]); }
  const T* host(const mask_case& c, int which) const {
    return arena_.template host<T>(c.slot[which]);
  }

  void check(const mask_case& c) {
    ++total_.cases;
    total_.elements += c.n;
    std::string problems;
    std::size_t bad = 0;
    if (c.status != cudaSuccess)
      problems += std::string("call returned ") + cudaGetErrorName(c.status) + "; ";
    for (int s : {mask_case::x, mask_case::out, mask_case::mask, mask_case::dy, mask_case::dx}) {
      if (!arena_.guards_intact(c.slot[s]))
        problems += "write outside the array of slot " + std::to_string(s) + "; ";
    }
    const T* x = host(c, mask_case::x);
    const T* dy = host(c, mask_case::dy);
    for (std::size_t i = 0; i < c.n; ++i) {
      if (!c.forward_in_place && bits_of(x[i]) != hash_bits<T>(c.seed, i)) {
        problems += "x modified; ";
        break;
      }
      if (!c.backward_in_place && bits_of(dy[i]) != hash_bits<T>(c.seed + 1, i)) {
        problems += "dy modified; ";
        break;
      }
    }
    const std::uint32_t* mask = arena_.template host<std::uint32_t>(c.slot[mask_case::mask]);
    std::vector<std::uint32_t> expected_mask(cuact::relu_mask_words(c.n), 0);
    for (std::size_t i = 0; i < c.n; ++i) {
      const std::size_t b = cuact::relu_mask_bit<T>(i, c.n);
      if (to_double(hash_value<T>(c.seed, i)) > 0)
        expected_mask[b / 32] |= std::uint32_t(1) << (b % 32);
    }
    for (std::size_t w = 0; w < cuact::relu_mask_words(c.n); ++w) {
      const std::uint32_t expected = expected_mask[w];
      if (mask[w] != expected && bad++ < 4) {
        problems += "mask word " + std::to_string(w) + " is " + std::to_string(mask[w]) +
                    ", expected " + std::to_string(expected) + "; ";
      }
    }
    const T* out = host(c, mask_case::out);
    const T* dx = host(c, mask_case::dx);
    const T* want_out = host(c, mask_case::expected_out);
    const T* want_dx = host(c, mask_case::expected_dx);
    for (std::size_t i = 0; i < c.n; ++i) {
      if (!same_result(out[i], want_out[i]) && bad++ < 4) {
        problems += "out " + std::to_string(i) + " is " + describe(out[i]) + ", expected " +
                    describe(want_out[i]) + "; ";
      }
      if (!same_result(dx[i], want_dx[i]) && bad++ < 4) {
        problems += "dx " + std::to_string(i) + " is " + describe(dx[i]) + ", expected " +
                    describe(want_dx[i]) + "; ";
      }
    }
    total_.bad_elements += bad;
    if (!problems.empty()) {
      ++total_.failed_cases;
      if (total_.failed_cases <= 10) {
        const std::string what = type_name<T>() + " " + describe_mask_case(c);
        INFO(what);
        FAIL_CHECK(problems);
      }
    }
  }

  guarded_arena& arena_;
  const test_streams& streams_;
  tally& total_;
  std::vector<mask_case> cases_;
  std::size_t bytes_ = 0;
};

}  // namespace cuact_test

namespace cuact_test {

/// The call of pass P of `act` on T at the case's run-time width: every explicit width for the deep
/// rows (relu, selu), auto_width for the others.
template <pass P, class T, class A>
auto any_width_launcher(const A& act) {
  return [act](gpu_case& c, const auto& out, const auto& in, cudaStream_t stream) -> cudaError_t {
    cudaError_t status = cudaErrorNotSupported;  // a width that does not fit T
    if constexpr (deep_row_v<A>) {
      for_each_width<T>([&](auto w) {
        if (decltype(w)::value == c.width)
          status = pass_launcher<P, decltype(w)::value, T>(act)(c, out, in, stream);
      });
    } else {
      if (c.width == cuact::auto_width)
        status = pass_launcher<P, cuact::auto_width, T>(act)(c, out, in, stream);
    }
    return status;
  };
}

}  // namespace cuact_test
