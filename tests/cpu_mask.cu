// CPU grid simulation of the ReLU mask: the layout (a permutation of the bits whose bytes a
// warp reads as whole adjacent vectors); the sign-mask forward's per-thread body
// (detail::sign_mask_forward_thread) under simulated grids with every access recorded, and the
// backward's op (dy where the bit is set) through the elementwise body, which must equal relu's
// backward from x bit for bit; n straddling mask-word edges, misaligned and in-place arrays. The
// backward's per-vector mask read (takes_vector_index) for every width, vectors per thread and
// vector start modulo the width, so vectors straddle 8- and 32-element edges, with the mask ending
// at an inaccessible page where the platform has mmap.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#if __has_include(<sys/mman.h>)
#include <sys/mman.h>
#include <unistd.h>
#define CUACT_TEST_PAGE_GUARD 1
#endif

#include "catch.hpp"
#include "grid_simulation.hpp"
#include "model_devices.hpp"

using namespace cuact_test;
using cuact::detail::type_list;

namespace {

/// `words` mask words that end where an inaccessible page begins (with mmap), so a read past the
/// mask's end faults instead of reading a neighbour's bytes unnoticed.
class page_end_words {
 public:
  explicit page_end_words(std::size_t words) {
#ifdef CUACT_TEST_PAGE_GUARD
    const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    data_bytes_ = (words * 4 + page - 1) / page * page;
    void* p = mmap(nullptr, data_bytes_ + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                   -1, 0);
    REQUIRE(p != MAP_FAILED);
    base_ = static_cast<unsigned char*>(p);
    REQUIRE(mprotect(base_ + data_bytes_, page, PROT_NONE) == 0);
    data_ = reinterpret_cast<std::uint32_t*>(base_ + data_bytes_) - words;
#else
    fallback_.resize(words);
    data_ = fallback_.data();
#endif
  }
  ~page_end_words() {
#ifdef CUACT_TEST_PAGE_GUARD
    munmap(base_, data_bytes_ + static_cast<std::size_t>(sysconf(_SC_PAGESIZE)));
#endif
  }
  page_end_words(const page_end_words&) = delete;
  page_end_words& operator=(const page_end_words&) = delete;
  std::uint32_t* data() const { return data_; }

 private:
  std::uint32_t* data_ = nullptr;
#ifdef CUACT_TEST_PAGE_GUARD
  unsigned char* base_ = nullptr;
  std::size_t data_bytes_ = 0;
#else
  std::vector<std::uint32_t> fallback_;
#endif
};

/// The mask backward with width W over T: every vectors_per_thread, every start of the first
/// vector modulo V (the array's offset), sizes straddling 8- and 32-element edges, in and out of
/// place and misaligned (scalars only). The simulation compares the engine's output, whose vectors
/// take the per-vector form of the op, with the per-element form; that form is checked here against
/// the bits themselves. Bits past n are set: elements there do not exist, and nothing may use them.
template <class T, int W>
void mask_backward_matrix(tally& total) {
  constexpr int V = resolved_width(W, sizeof(T));
  using op_t = cuact::detail::masked_gradient<T>;
  using params_t = decltype(cuact::make_elementwise_params<V>(
      cuact::detail::make_masked_gradient<T>(nullptr, 0), static_cast<T*>(nullptr), 0,
      static_cast<const T*>(nullptr)));
  std::uint64_t seed = 7000 + 100 * static_cast<std::uint64_t>(W);
  for (std::size_t n : {0,  1,  7,  8,  9,   15,  17,  31,  32,  33,  39,  40,  63,   64,
                        65, 95, 96, 97, 200, 255, 256, 257, 300, 511, 512, 520, 1000, 4099}) {
    const std::size_t words = cuact::relu_mask_words(n);
    page_end_words mask(words);
    for (std::size_t w = 0; w < words; ++w) {
      mask.data()[w] = static_cast<std::uint32_t>(mix64(seed ^ mix64(w)));
    }
    if (n % 32 != 0) mask.data()[words - 1] |= ~0u << (n % 32);
    const op_t op = cuact::detail::make_masked_gradient<T>(mask.data(), n);
    std::size_t wrong = 0;  // the per-element form against the bits
    for (std::size_t i = 0; i < n; ++i) {
      const T dy = hash_value<T>(seed + 1, i);
      const std::size_t b = cuact::relu_mask_bit<T>(i, n);
      const bool bit = (mask.data()[b / 32] >> (b % 32)) & 1u;
      const T expected = bit ? dy : from_bits<T>(bits_t<T>(0));  // +0, as C(0) stores
      if (!same_result(cuda::std::get<0>(evaluate<T>(op, i, dy)), expected)) ++wrong;
    }
    CHECK(wrong == 0);
    for (unsigned k = 1; k <= static_cast<unsigned>(params_t::max_vectors_per_thread); ++k) {
      for (std::size_t offset = 0; offset < static_cast<std::size_t>(V); ++offset) {
        for (int placement = 0; placement < 3; ++placement) {
          sim_layout l;
          l.n = n;
          l.seed = seed + 1;
          l.vectors_per_thread = k;
          l.in_offset[0] = offset;
          l.out_offset[0] = placement == 2 ? offset + 1 : offset;
          l.in_place = placement == 1 ? 0 : -1;
          elementwise_sim<V, op_t, type_list<T>, type_list<T>> sim(op, l);
          report_case(sim.run(grids_for(sim.params(), placement == 0 && offset < 2)),
                      type_name<T>() + " mask backward W=" + std::to_string(W) + " " +
                          describe_layout(l, 1, 1),
                      total, n);
        }
      }
    }
    ++seed;
  }
}

}  // namespace

TEMPLATE_TEST_CASE("relu mask forward and backward under simulated grids", "[cpu][grid][mask]",
                   CUACT_TEST_DTYPES) {
  using T = TestType;
  constexpr int V = 16 / sizeof(T);
  tally total;
  std::uint64_t seed = 900;
  for (std::size_t n :
       {0, 1, 2, 7, 8, 9, 31, 32, 33, 63, 64, 65, 95, 255, 256, 257, 520, 1000, 1024, 4099}) {
    for (std::size_t offset : {0, 1, 3, 8}) {
      for (bool in_place : {false, true}) {
        ++seed;
        CAPTURE(type_name<T>(), n, offset, in_place, seed);
        const std::size_t words = cuact::relu_mask_words(n);
        guarded_host_bytes in_array(n * sizeof(T), offset * sizeof(T)),
            out_array(n * sizeof(T), offset * sizeof(T)), mask_array(words * 4, 0);
        T* const in = static_cast<T*>(in_array.data());
        T* const out = in_place ? in : static_cast<T*>(out_array.data());
        auto* const mask = static_cast<std::uint32_t*>(mask_array.data());
        const auto params = cuact::detail::make_sign_mask_params(
            cuact::forward_op<cuact::relu, T>{}, in, out, mask, n);
        CHECK(params.vectorized == (offset * sizeof(T) % 16 == 0));
        // the launcher's one-pass grid (a thread per vector where staged, else per mask byte),
        // one block and three blocks of 128 threads looping over the staged steps, one warp, an
        // odd grid
        const std::size_t items = cuact::detail::sign_mask_items<T>(n);
        for (const grid_shape grid :
             {grid_shape{(items + 127) / 128 + (items == 0), 128}, grid_shape{1, 128},
              grid_shape{3, 128}, grid_shape{1, 32}, grid_shape{2, 7}}) {
          CAPTURE(grid.blocks, grid.threads);
          for (std::size_t i = 0; i < n; ++i) in[i] = hash_value<T>(seed, i);
          const T poison = poison_for(T(1.0f));
          if (!in_place) std::fill(out, out + n, poison);
          std::fill(mask, mask + words, 0xdeadbeefu);
          access_log log;
          const std::size_t in_region = log.add_region(in, n * sizeof(T));
          const std::size_t out_region = in_place ? in_region : log.add_region(out, n * sizeof(T));
          const std::size_t mask_region = log.add_region(mask, words * sizeof(std::uint32_t));
          simulate_sign_mask_kernel(log, grid, params);
          INFO((log.errors().empty() ? std::string() : log.errors().front()));
          REQUIRE(log.errors().empty());
          REQUIRE(log.each_byte(in_region, 1, in_place ? 1 : 0));
          if (!in_place) REQUIRE(log.each_byte(out_region, 0, 1));
          REQUIRE(log.each_byte(mask_region, 0, 1));
          REQUIRE(in_array.guards_intact());
          REQUIRE(out_array.guards_intact());
          REQUIRE(mask_array.guards_intact());
          std::size_t bad = 0;
          for (std::size_t i = 0; i < n; ++i) {
            const T x = hash_value<T>(seed, i);
            const T y = cuda::std::get<0>(evaluate<T>(cuact::forward_op<cuact::relu, T>{}, i, x));
            if (!same_result(out[i], y)) ++bad;
            const std::size_t b = cuact::relu_mask_bit<T>(i, n);
            if (((mask[b / 32] >> (b % 32)) & 1u) != (to_double(x) > 0 ? 1u : 0u)) ++bad;
          }
          for (std::size_t i = n; i < words * 32; ++i) {
            if ((mask[i / 32] >> (i % 32)) & 1u)
              ++bad;  // bits past n (bit i: past the tiles) are 0
          }
          REQUIRE(bad == 0);
        }

        // the backward's op through the elementwise body: dx = bit ? dy : 0, in and out of place,
        // against relu's backward from x
        std::vector<T> x(n);
        for (std::size_t i = 0; i < n; ++i) x[i] = hash_value<T>(seed, i);
        const auto op = cuact::detail::make_masked_gradient<T>(mask, n);
        for (int placement = 0; placement < 3; ++placement) {
          sim_layout l;
          l.n = n;
          l.seed = seed + 1;
          l.in_offset[0] = offset;
          l.out_offset[0] = placement == 2 ? offset + 1 : offset;
          l.in_place = placement == 1 ? 0 : -1;
          elementwise_sim<V, cuact::detail::masked_gradient<T>, type_list<T>, type_list<T>> sim(op,
                                                                                                l);
          report_case(sim.run(grids_for(sim.params(), placement == 0)),
                      type_name<T>() + " mask backward " + describe_layout(l, 1, 1), total, n);
          std::size_t differ = 0;
          for (std::size_t i = 0; i < n; ++i) {
            const T dy = hash_value<T>(l.seed, i);
            const T from_mask = cuda::std::get<0>(evaluate<T>(op, i, dy));
            const T from_x =
                cuda::std::get<0>(evaluate<T>(cuact::gradient_op<cuact::relu, T>{}, i, x[i], dy));
            if (!same_result(from_mask, from_x)) ++differ;
          }
          CHECK(differ == 0);
        }
      }
    }
  }
  CHECK(total.failed_cases == 0);
}

TEMPLATE_TEST_CASE("relu mask forward: the launch model gives the staged kernel its blocks",
                   "[cpu][grid][mask][launch]", float, double) {
  // in any other block size a staged type's forward runs the per-byte body alone
  // (sign_mask_forward_kernel)
  using T = TestType;
  using op_t = cuact::forward_op<cuact::relu, T>;
  using cuact::detail::kernel_facts;
  for (const cuact::detail::device_facts& device : {model_h100, model_h200}) {
    for (const std::size_t n : {std::size_t(1), std::size_t(1000), std::size_t(1) << 20,
                                std::size_t(4096) * 393216, (std::size_t(1) << 34) + 3}) {
      // full residency at 32 registers, and a kernel that has lost a quarter of it
      for (const kernel_facts kernel : {kernel_facts{16, 32, 90}, kernel_facts{12, 40, 90}}) {
        CAPTURE(device.bytes_per_second, n, kernel.resident_blocks_per_sm);
        const auto shape = cuact::detail::sign_mask_launch_shape<T, op_t>(device, kernel, n);
        CHECK(shape.threads_per_block == cuact::detail::staged_mask_threads);
        CHECK(shape.vectors_per_thread == 1);
        CHECK(shape.dynamic_shared_bytes == 0);
        // the grid still covers every item (one per thread and pass), but where capped
        if (shape.blocks < unsigned(INT_MAX)) {
          CHECK(std::size_t(shape.blocks) * shape.threads_per_block * shape.passes >=
                cuact::detail::sign_mask_items<T>(n));
        }
      }
    }
  }
}

TEMPLATE_TEST_CASE("relu mask backward: a mask read per vector, at every width and word edge",
                   "[cpu][grid][mask]", CUACT_TEST_DTYPES) {
  using T = TestType;
  tally total;
  for_each_width<T>([&](auto w) { mask_backward_matrix<T, decltype(w)::value>(total); });
  total.print("mask backward " + type_name<T>());
  CHECK(total.failed_cases == 0);
  CHECK(total.cases > 0);
}

TEMPLATE_TEST_CASE("relu mask layout: a permutation whose bytes a warp reads as adjacent vectors",
                   "[cpu][mask]", CUACT_TEST_DTYPES) {
  using T = TestType;
  using layout_t = cuact::detail::mask_layout<T>;
  for (std::size_t n : {0, 1, 255, 256, 257, 511, 512, 700, 1024, 1031}) {
    CAPTURE(type_name<T>(), n);
    const layout_t layout(n);
    CHECK(layout.tiled_end == n / 256 * 256);
    std::vector<int> hits(n, 0);
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t b = cuact::relu_mask_bit<T>(i, n);
      if (b >= n) {
        ++wrong;
        continue;
      }
      ++hits[b];
      if (layout.element_of(b / 8, static_cast<int>(b % 8)) != i) ++wrong;  // the inverse
      if (i >= layout.tiled_end && b != i) ++wrong;  // past the full tiles: bit i
      if (i / 256 != b / 256) ++wrong;               // a tile's bits stay in its 32 bytes
    }
    CHECK(wrong == 0);
    CHECK(std::count(hits.begin(), hits.end(), 1) == static_cast<std::ptrdiff_t>(n));
    // In a full tile, the 32 bytes' c-th runs of `lanes` elements lie side by side: one warp
    // access of 32 x 16 bytes (what the layout is for).
    for (std::size_t tile = 0; tile < layout.tiled_end; tile += 256) {
      for (int c = 0; c < layout_t::chunks; ++c) {
        for (std::size_t t = 0; t < 32; ++t) {
          const std::size_t first = layout.element_of(tile / 8 + t, c * layout_t::lanes);
          CHECK(first ==
                tile + static_cast<std::size_t>(c) * 32 * layout_t::lanes + t * layout_t::lanes);
          CHECK(first % layout_t::lanes == 0);
        }
      }
    }
  }
  // 16-bit: the layout is the identity (one 16-byte vector per byte)
  if constexpr (sizeof(T) == 2) CHECK(cuact::relu_mask_bit<T>(300, 1000) == 300);
  if constexpr (sizeof(T) == 4) CHECK(cuact::relu_mask_bit<T>(130, 1000) == 6);  // byte 0, run 1
}
