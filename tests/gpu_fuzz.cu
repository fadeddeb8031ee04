// Seeded random cases on the device: op (relu/selu/leaky relu forward, relu/selu backward and
// backward_from_output, the ReLU mask round trip) x dtype x vector width x n (mostly small, up to
// 10^7) x each pointer's misalignment x in/out of place x launch path (the public entry, or
// elementwise_kernel / relu_mask_forward_kernel launched directly with a random grid and block) x
// stream (legacy default, a created blocking stream, a created non-blocking stream). Every element,
// the guards around every array and the inputs are checked as in the matrix tests.
//
// CUACT_FUZZ_SEED (default: from the clock) and CUACT_FUZZ_CASES (default 12000; 300 with
// CUACT_TEST_QUICK=1, which also caps n at 20000) steer it; the seed is printed first, so
//     CUACT_FUZZ_SEED=<seed> ./gpu_fuzz
// replays a failure.
#include <chrono>
#include <random>

#include "gpu_support.hpp"

namespace {
using namespace cuact_test;

constexpr int mask_op = static_cast<int>(op_id::count);  // the case kind after the elementwise ops

struct streams {
  cudaStream_t s[3] = {nullptr, nullptr, nullptr};
  streams() {
    CUACT_CUDA_REQUIRE(cudaStreamCreate(&s[1]));
    CUACT_CUDA_REQUIRE(cudaStreamCreateWithFlags(&s[2], cudaStreamNonBlocking));
  }
  ~streams() {
    cudaStreamDestroy(s[1]);
    cudaStreamDestroy(s[2]);
  }
};

/// Grid and block of a direct launch, from the case's random choices: block from a list (clamped
/// to what the kernel allows), grid one block, a few blocks, exactly enough, more than enough, or a
/// random count; at least enough that no thread loops more than 2048 times.
template <class Kernel>
void choose_grid(launch_setup& l, Kernel kernel, std::size_t work) {
  static const unsigned blocks[] = {1, 32, 33, 64, 96, 128, 255, 256, 512, 1024};
  cudaFuncAttributes attributes{};
  CUACT_CUDA_REQUIRE(cudaFuncGetAttributes(&attributes, kernel));
  const unsigned block =
      std::min<unsigned>(blocks[l.block % 10], static_cast<unsigned>(attributes.maxThreadsPerBlock));
  const std::size_t enough = std::max<std::size_t>(1, (work + block - 1) / block);
  std::size_t grid;
  switch (l.grid % 5) {
    case 0:
      grid = 1;
      break;
    case 1:
      grid = 1 + (l.grid / 5) % 8;
      break;
    case 2:
      grid = enough;
      break;
    case 3:
      grid = 2 * enough + 3;
      break;
    default:
      grid = 1 + (l.grid / 5) % enough;
      break;
  }
  grid = std::max(grid, (work + std::size_t(block) * 2048 - 1) / (std::size_t(block) * 2048));
  l.grid = static_cast<unsigned>(std::min<std::size_t>(grid, 0x7FFFFFFF));
  l.block = block;
}

template <class T, int W, class Op, class... In>
cudaError_t launch_direct(ew_case& c, cudaStream_t stream, Op op, T* out, const In*... in) {
  constexpr int V = resolved_width<T>(W);
  const auto params = cuact::make_elementwise_params<V>(op, out, c.n, in...);
  choose_grid(c.launch, cuact::elementwise_kernel<T, V, sizeof...(In), Op>, params.work_items());
  cuact::elementwise_kernel<<<c.launch.grid, c.launch.block, 0, stream>>>(params);
  return cudaGetLastError();
}

template <class T, int W>
cudaError_t launch_ew(ew_case& c, const T* in0, const T* in1, T* out, cudaStream_t s) {
  const bool direct = c.launch.direct;
  const auto forward = [&](auto act) {
    if (direct) return launch_direct<T, W>(c, s, act, out, in0);
    return c.in_place >= 0 ? cuact::forward<W>(act, out, c.n, s) : cuact::forward<W>(act, in0, out, c.n, s);
  };
  const auto from_input = [&](auto act) {
    if (direct)
      return launch_direct<T, W>(c, s, cuact::detail::gradient_from_input<decltype(act)>{act}, out, in0, in1);
    return cuact::backward<W>(act, in0, in1, out, c.n, s);
  };
  const auto from_output = [&](auto act) {
    if (direct)
      return launch_direct<T, W>(c, s, cuact::detail::gradient_from_output<decltype(act)>{act}, out, in0,
                                 in1);
    return cuact::backward_from_output<W>(act, in0, in1, out, c.n, s);
  };
  switch (c.op) {
    case op_id::relu:
      return forward(cuact::relu{});
    case op_id::selu:
      return forward(cuact::selu{});
    case op_id::leaky:
      return forward(leaky_relu{});
    case op_id::relu_grad:
      return from_input(cuact::relu{});
    case op_id::selu_grad:
      return from_input(cuact::selu{});
    case op_id::relu_grad_out:
      return from_output(cuact::relu{});
    case op_id::selu_grad_out:
      return from_output(cuact::selu{});
    default:
      return cudaErrorInvalidValue;
  }
}

template <class T, int W>
cudaError_t launch_mask(mask_case& c, const T* x, T* out, std::uint32_t* mask, const T* dy, T* dx,
                        const T* x2, const T* dy2, T* dx2, cudaStream_t s) {
  if (!c.launch.direct) {
    if (const cudaError_t e = cuact::relu_forward_mask(x, out, mask, c.n, s); e != cudaSuccess) return e;
    if (const cudaError_t e = cuact::relu_backward_mask<W>(mask, dy, dx, c.n, s); e != cudaSuccess) return e;
    return cuact::backward<W>(cuact::relu{}, x2, dy2, dx2, c.n, s);
  }
  constexpr int V = resolved_width<T>(W);
  launch_setup l = c.launch;
  // any grid is correct; the forward's work items are mask bytes (8 elements each) today
  choose_grid(l, cuact::detail::relu_mask_forward_kernel<T>, cuact::relu_mask_words(c.n) * 4);
  cuact::detail::relu_mask_forward_kernel<<<l.grid, l.block, 0, s>>>(
      cuact::detail::make_relu_mask_params(x, out, mask, c.n));
  const auto backward =
      cuact::make_elementwise_params<V>(cuact::detail::relu_mask_gradient{mask}, dx, c.n, dy);
  l = c.launch;
  choose_grid(l, cuact::elementwise_kernel<T, V, 1, cuact::detail::relu_mask_gradient>,
              backward.work_items());
  cuact::elementwise_kernel<<<l.grid, l.block, 0, s>>>(backward);
  const auto reference =
      cuact::make_elementwise_params<V>(cuact::detail::gradient_from_input<cuact::relu>{}, dx2, c.n, x2, dy2);
  choose_grid(c.launch, cuact::elementwise_kernel<T, V, 2, cuact::detail::gradient_from_input<cuact::relu>>,
              reference.work_items());
  cuact::elementwise_kernel<<<c.launch.grid, c.launch.block, 0, s>>>(reference);
  return cudaGetLastError();
}

/// f(std::integral_constant<int, W>) for the run-time width w (0: auto_width).
template <class T, class F>
cudaError_t with_width(int w, F&& f) {
  switch (w) {
    case 0:
      return f(std::integral_constant<int, 0>{});
    case 1:
      return f(std::integral_constant<int, 1>{});
    case 2:
      return f(std::integral_constant<int, 2>{});
    case 4:
      if constexpr (sizeof(T) * 4 <= 16) return f(std::integral_constant<int, 4>{});
      break;
    case 8:
      if constexpr (sizeof(T) * 8 <= 16) return f(std::integral_constant<int, 8>{});
      break;
  }
  return cudaErrorInvalidValue;
}

/// One dtype's share of the fuzz: its pool, arena, pending cases and tallies.
template <class T>
struct fuzz_lane {
  value_pool<T> pool;
  guarded_arena arena;
  std::vector<ew_case> ew;
  std::vector<mask_case> masks;
  std::size_t ew_bytes = 0, mask_bytes = 0;
  tally total;
  const streams& st;

  fuzz_lane(std::size_t pool_size, std::uint64_t seed, const streams& s) : pool(pool_size, seed), st(s) {}

  void run_ew() {
    run_ew_batch(
        pool, arena, ew,
        [this](ew_case& c, const T* in0, const T* in1, T* out) {
          return with_width<T>(c.width, [&](auto w) {
            return launch_ew<T, decltype(w)::value>(c, in0, in1, out, st.s[c.launch.stream]);
          });
        },
        total);
    ew_bytes = 0;
  }
  void run_masks() {
    run_mask_batch(
        pool, arena, masks,
        [this](mask_case& c, const T* x, T* out, std::uint32_t* mask, const T* dy, T* dx, const T* x2,
               const T* dy2, T* dx2) {
          return with_width<T>(c.width, [&](auto w) {
            return launch_mask<T, decltype(w)::value>(c, x, out, mask, dy, dx, x2, dy2, dx2,
                                                      st.s[c.launch.stream]);
          });
        },
        total);
    mask_bytes = 0;
  }

  void generate(std::mt19937_64& rng, bool quick) {
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    const auto pick = [&](std::size_t count) {
      return std::uniform_int_distribution<std::size_t>(0, count - 1)(rng);
    };
    const auto log_uniform = [&](double lo, double hi) {
      return static_cast<std::size_t>(std::exp(std::log(lo) + unit(rng) * (std::log(hi) - std::log(lo))));
    };
    const double u = unit(rng);
    std::size_t n = u < 0.5     ? pick(65)
                    : u < 0.8   ? 65 + pick(4032)
                    : u < 0.95  ? log_uniform(4096, 1.5e5)
                    : u < 0.995 ? log_uniform(1.5e5, 2e6)
                                : log_uniform(2e6, 1e7);
    if (quick) n = std::min<std::size_t>(n, 20000);
    static const int widths_8[] = {0, 1, 2, 4, 8};
    const int width = widths_8[pick(sizeof(T) == 2 ? 5 : sizeof(T) == 4 ? 4 : 3)];
    // Each pointer's offset: all equal half of the time (the vector path), else independent.
    const std::size_t base = pick(16);
    const bool same = unit(rng) < 0.5;
    const auto offset = [&] { return same ? base : pick(16); };
    launch_setup launch;
    launch.direct = unit(rng) < 0.5;
    launch.grid = static_cast<unsigned>(rng());
    launch.block = static_cast<unsigned>(rng());
    launch.stream = static_cast<int>(pick(3));
    const std::size_t start = pick(pool.size());
    const int kind = static_cast<int>(pick(mask_op + 1));
    if (kind == mask_op) {
      mask_case c;
      c.width = width;
      c.n = std::min<std::size_t>(n, 2000000);  // seven arrays per case
      c.start = start;
      c.x_offset = offset();
      c.out_offset = offset();
      c.dy_offset = offset();
      c.dx_offset = offset();
      c.mask_word_offset = pick(4);
      c.forward_in_place = unit(rng) < 0.3;
      c.backward_in_place = unit(rng) < 0.3;
      c.launch = launch;
      masks.push_back(c);
      mask_bytes += 8 * (c.n * sizeof(T) + 1024);
      if (mask_bytes > (std::size_t(256) << 20) || masks.size() >= 512) run_masks();
    } else {
      ew_case c;
      c.op = static_cast<op_id>(kind);
      c.width = width;
      c.n = n;
      c.start = start;
      for (std::size_t& o : c.offset) o = offset();
      c.in_place = unit(rng) < 0.3 ? op_inputs(c.op) - 1 : -1;
      c.launch = launch;
      ew.push_back(c);
      ew_bytes += 3 * (c.n * sizeof(T) + 1024);
      if (ew_bytes > (std::size_t(256) << 20) || ew.size() >= 1024) run_ew();
    }
  }
  void finish() {
    run_ew();
    run_masks();
    print_tally(("gpu_fuzz " + type_name<T>()).c_str(), total);
  }
};

}  // namespace

TEST_CASE("gpu fuzz: random cases through the public entries and direct kernel launches", "[gpu][fuzz]") {
  const bool quick = quick_mode();
  const std::uint64_t clock_seed =
      static_cast<std::uint64_t>(std::chrono::system_clock::now().time_since_epoch().count());
  const std::uint64_t seed = env_u64("CUACT_FUZZ_SEED", mix64(clock_seed));
  const std::size_t cases = env_u64("CUACT_FUZZ_CASES", quick ? 300 : 12000);
  std::printf("gpu_fuzz: CUACT_FUZZ_SEED=%" PRIu64 " CUACT_FUZZ_CASES=%zu%s\n", seed, cases,
              quick ? " (quick)" : "");
  std::fflush(stdout);
  CAPTURE(seed);

  streams st;
  const std::size_t pool_size = quick ? std::size_t(1) << 14 : std::size_t(1) << 20;
  fuzz_lane<float> f32(pool_size, seed + 1, st);
  fuzz_lane<double> f64(pool_size, seed + 2, st);
  fuzz_lane<__half> f16(pool_size, seed + 3, st);
  fuzz_lane<__nv_bfloat16> bf16(pool_size, seed + 4, st);
  std::mt19937_64 rng(seed);
  for (std::size_t i = 0; i < cases; ++i) {
    switch (rng() % 4) {
      case 0:
        f32.generate(rng, quick);
        break;
      case 1:
        f64.generate(rng, quick);
        break;
      case 2:
        f16.generate(rng, quick);
        break;
      default:
        bf16.generate(rng, quick);
        break;
    }
  }
  f32.finish();
  f64.finish();
  f16.finish();
  bf16.finish();
  tally all;
  for (const tally* t : {&f32.total, &f64.total, &f16.total, &bf16.total}) {
    all.cases += t->cases;
    all.elements += t->elements;
    all.failed_cases += t->failed_cases;
    all.bad_elements += t->bad_elements;
  }
  std::printf("gpu_fuzz: seed %" PRIu64 ": cases run %zu, elements %zu, mismatches %zu (in %zu cases)\n",
              seed, all.cases, all.elements, all.bad_elements, all.failed_cases);
  CHECK(all.cases == cases);
  CHECK(all.failed_cases == 0);
}
