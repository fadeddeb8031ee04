// Session 25 prototype: three forms of the bias backward's stage 1 against cuact::bias_backward
// (not in the library; bench/results/h100/bias_backward_s25.txt, h200/bias_backward_tiles_s25.txt).
// Built on the CPU machine:
//   nvcc -O3 -std=c++17 -arch=sm_90 -I include bench/results/h100/bias_backward_s25.cu
// (helpers: ../proto_common.cuh) and run as `a.out REPS [flat|blocks|tiles]`:
// - flat: k rows per grid step (the grid = k x row_vectors threads, all resident); thread t owns
//   column vector t % rv and rows t / rv, t / rv + k, ...: every step the resident threads sweep k
//   whole contiguous rows, as the flat backward does (1.018 x memcpy on the H100), where the
//   library's chunked column walk (22 chunks of 187 rows) runs 0.962-0.965 (fp32 gelu, H100);
// - blocks: the library's stage 1 kernel in 128-1024-thread blocks;
// - tiles: one-pass tiles (tile_stage1).
// The session's runs were of three binaries, one per form, with this code (the tiles binary printed
// no per-shape header lines, and the blocks binary stopped where a block size cannot launch).
#include <cuact/cuact.cuh>
#include "../proto_common.cuh"
#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

// dx of one row's vector at column c0 from its loaded x, dy and the bias lanes: computed,
// stored, and added (as stored) to the column sums. (Factored out of the flat and tile kernels
// after the runs; each had this code inline.)
template <class Params, class Held, class Bias, class A, int W>
__device__ __forceinline__ void row_gradient(const Params& p, std::size_t row, std::size_t c0,
                                             const Held& x, const Held& dy, const Bias& bias,
                                             A (&sum)[W]) {
  using T = std::remove_cv_t<std::remove_pointer_t<decltype(p.x)>>;
  const auto xs = cd::lanes_of<T, W>(x);
  const auto dys = cd::lanes_of<T, W>(dy);
  A values[W];
#pragma unroll
  for (int j = 0; j < W; ++j) values[j] = p.op(xs.elements[j], bias.elements[j], dys.elements[j]);
  const auto dxv = cd::convert_vector<T>(values);
  cd::vector_store_access{}.store(reinterpret_cast<cd::vector_of<T, W>*>(p.dx + row * p.cols + c0),
                                  dxv);
  const auto stored = cd::lanes_of<T, W>(cuda::std::bit_cast<Held>(dxv));
#pragma unroll
  for (int j = 0; j < W; ++j) sum[j] += stored.elements[j];
}

// Stage 1 in flat order: D steps' loads issued together, the next D prefetched.
template <int D, class Params>
__global__ void __launch_bounds__(128) flat_stage1(const Params p, unsigned k) {
  using T = std::remove_cv_t<std::remove_pointer_t<decltype(p.x)>>;
  constexpr int W = Params::vec_width;
  using A = cd::compute_t<T>;
  using held = cd::held_vector_t<T, W>;
  const cd::vector_store_access access{};
  const std::size_t t = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::size_t rv = p.vectors;
  if (t >= k * rv) return;
  const std::size_t c0 = (t % rv) * W;
  const std::size_t r0 = t / rv;
  const auto bias = cd::lanes_of<T, W>(access.load(reinterpret_cast<const held*>(p.bias + c0)));
  A sum[W];
#pragma unroll
  for (int j = 0; j < W; ++j) sum[j] = A(0);
  held x[D], dy[D];
  auto load = [&](std::size_t r, held(&xs)[D], held(&dys)[D]) {
#pragma unroll
    for (int u = 0; u < D; ++u) {
      const std::size_t row = r + u * std::size_t(k);
      if (row < p.rows) {
        xs[u] = access.load(reinterpret_cast<const held*>(p.x + row * p.cols + c0));
        dys[u] = access.load(reinterpret_cast<const held*>(p.dy + row * p.cols + c0));
      }
    }
  };
  load(r0, x, dy);
  const std::size_t step = std::size_t(D) * k;
  for (std::size_t r = r0; r < p.rows; r += step) {
    held nx[D], ndy[D];
    if (r + step < p.rows) load(r + step, nx, ndy);
#pragma unroll
    for (int u = 0; u < D; ++u) {
      const std::size_t row = r + u * std::size_t(k);
      if (row < p.rows) {
        row_gradient(p, row, c0, x[u], dy[u], bias, sum);
      }
    }
#pragma unroll
    for (int u = 0; u < D; ++u) {
      x[u] = nx[u];
      dy[u] = ndy[u];
    }
  }
#pragma unroll
  for (int j = 0; j < W; ++j) p.partial[r0 * p.cols + c0 + j] = sum[j];
}

// Stage 1 as one-pass tiles: a block of Block threads covers TileVecs column vectors x
// (Block / TileVecs) * RowsPerThread rows; each thread loads its RowsPerThread rows (rows
// g, g + groups, ...) at once, computes, stores, and sums them; the block adds its groups' sums in
// shared memory in group order and writes one partial per tile row and column.
template <int Block, int TileVecs, int RowsPerThread, class Params>
__global__ void __launch_bounds__(Block) tile_stage1(const Params p) {
  using T = std::remove_cv_t<std::remove_pointer_t<decltype(p.x)>>;
  constexpr int W = Params::vec_width;
  using A = cd::compute_t<T>;
  using held = cd::held_vector_t<T, W>;
  constexpr int groups = Block / TileVecs;
  constexpr int tile_rows = groups * RowsPerThread;
  __shared__ A sums[groups][TileVecs * W];
  const cd::vector_store_access access{};
  const int v = threadIdx.x % TileVecs;
  const int g = threadIdx.x / TileVecs;
  const std::size_t cv = std::size_t(blockIdx.x) * TileVecs + v;
  const std::size_t first = std::size_t(blockIdx.y) * tile_rows;
  A sum[W];
#pragma unroll
  for (int j = 0; j < W; ++j) sum[j] = A(0);
  if (cv < p.vectors) {
    const std::size_t c0 = cv * W;
    held x[RowsPerThread], dy[RowsPerThread];
#pragma unroll
    for (int u = 0; u < RowsPerThread; ++u) {
      const std::size_t row = first + u * groups + g;
      if (row < p.rows) {
        x[u] = access.load(reinterpret_cast<const held*>(p.x + row * p.cols + c0));
        dy[u] = access.load(reinterpret_cast<const held*>(p.dy + row * p.cols + c0));
      }
    }
    const auto bias = cd::lanes_of<T, W>(access.load(reinterpret_cast<const held*>(p.bias + c0)));
#pragma unroll
    for (int u = 0; u < RowsPerThread; ++u) {
      const std::size_t row = first + u * groups + g;
      if (row < p.rows) {
        row_gradient(p, row, c0, x[u], dy[u], bias, sum);
      }
    }
  }
#pragma unroll
  for (int j = 0; j < W; ++j) sums[g][v * W + j] = sum[j];
  __syncthreads();
  for (int c = threadIdx.x; c < TileVecs * W; c += Block) {
    A total = sums[0][c];
    for (int k = 1; k < groups; ++k) total += sums[k][c];
    const std::size_t col = std::size_t(blockIdx.x) * TileVecs * W + c;
    if (col < p.vectors * W) p.partial[std::size_t(blockIdx.y) * p.cols + col] = total;
  }
}

template <class T, class Act>
void run_shape(const char* tname, const char* aname, Act act, std::size_t rows, std::size_t cols,
               int reps, int mode, std::vector<std::string>& lines) {
  constexpr int W = 16 / sizeof(T);
  using A = cd::compute_t<T>;
  const std::size_t n = rows * cols;
  T *x, *dy, *dx, *bias, *dbias, *dbias2, *copy_dst;
  A* partial;
  CK(cudaMalloc(&x, n * sizeof(T)));
  CK(cudaMalloc(&dy, n * sizeof(T)));
  CK(cudaMalloc(&dx, n * sizeof(T)));
  CK(cudaMalloc(&copy_dst, n * sizeof(T)));
  CK(cudaMalloc(&bias, cols * sizeof(T)));
  CK(cudaMalloc(&dbias, cols * sizeof(T)));
  CK(cudaMalloc(&dbias2, cols * sizeof(T)));
  const std::size_t ws = cuact::bias_backward_workspace_bytes<T>(rows, cols);
  // room for the tiles' partials (one per 32 rows at most)
  const std::size_t ws2 = std::max<std::size_t>(ws, (rows / 16 + 1) * cols * sizeof(A));
  CK(cudaMalloc(&partial, ws2));
  fill_normal<<<4096, 256>>>(x, n, 1);
  fill_normal<<<4096, 256>>>(dy, n, 2);
  fill_normal<<<4096, 256>>>(bias, cols, 3);
  CK(cudaDeviceSynchronize());
  using op_t = cuact::bias_gradient_op<Act, T>;
  const auto params =
      cd::make_bias_gradient_params<W>(op_t{{}, act}, x, bias, dy, dx, partial, rows, cols);
  if (params.head != 0 || params.tail != 0) {
    std::printf("not all vectors\n");
    std::exit(1);
  }
  const std::size_t rv = params.vectors;
  int blocks1 = 0, blocks2 = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks1, flat_stage1<1, decltype(params)>, 128,
                                                   0));
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks2, flat_stage1<2, decltype(params)>, 128,
                                                   0));
  cudaFuncAttributes fa1, fa2;
  CK(cudaFuncGetAttributes(&fa1, flat_stage1<1, decltype(params)>));
  CK(cudaFuncGetAttributes(&fa2, flat_stage1<2, decltype(params)>));
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const unsigned k1 = std::max<std::size_t>(1, std::size_t(blocks1) * 128 * sms / rv);
  const unsigned k2 = std::max<std::size_t>(1, std::size_t(blocks2) * 128 * sms / rv);
  char buf[512];
  cudaFuncAttributes fl;
  CK(cudaFuncGetAttributes(&fl, cd::bias_gradient_kernel<decltype(params)>));
  int lb1024 = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &lb1024, cd::bias_gradient_kernel<decltype(params)>, 1024, 0));
  std::snprintf(buf, sizeof buf, "%s %s %zux%zu: library stage 1 %d regs, %d blocks of 1024 per SM",
                aname, tname, rows, cols, fl.numRegs, lb1024);
  std::puts(buf);
  lines.push_back(buf);
  std::snprintf(buf, sizeof buf,
                "%s %s %zux%zu: D1 %d regs %d blocks/SM k=%u; D2 %d regs %d blocks/SM k=%u", aname,
                tname, rows, cols, fa1.numRegs, blocks1, k1, fa2.numRegs, blocks2, k2);
  std::puts(buf);
  lines.push_back(buf);
  auto flat = [&](auto dtag, unsigned k, T* out_dbias) {
    constexpr int D = decltype(dtag)::value;
    const std::size_t threads = k * rv;
    flat_stage1<D><<<unsigned((threads + 127) / 128), 128>>>(params, k);
    cd::column_sum_kernel<A, T><<<unsigned((cols + 127) / 128), 128>>>(partial, k, cols, out_dbias);
  };
  std::vector<V> vs;
  vs.push_back({"memcpy",
                [&] { cudaMemcpyAsync(copy_dst, x, n * sizeof(T), cudaMemcpyDeviceToDevice); },
                {}});
  vs.push_back(
      {"library",
       [&] { CK(cuact::bias_backward(act, x, bias, dy, dx, dbias, rows, cols, partial, ws)); },
       {}});
  if (mode == 2) {
    auto add = [&](auto block, auto tile_vecs, auto rpt) {
      constexpr int B = decltype(block)::value, TV = decltype(tile_vecs)::value,
                    R = decltype(rpt)::value;
      constexpr int tile_rows = B / TV * R;
      const auto kernel = tile_stage1<B, TV, R, decltype(params)>;
      cudaFuncAttributes fa;
      CK(cudaFuncGetAttributes(&fa, kernel));
      int res = 0;
      CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&res, kernel, B, 0));
      const std::size_t tiles = (rows + tile_rows - 1) / tile_rows;
      if (tiles * cols * sizeof(A) > ws2) {
        std::puts("partials exceed workspace");
        std::exit(1);
      }
      std::string nm = "tile " + std::to_string(B) + "x" + std::to_string(TV) + "v r" +
                       std::to_string(R) + " (" + std::to_string(tile_rows) + " rows, " +
                       std::to_string(fa.numRegs) + " regs, " + std::to_string(res) + " blk/SM)";
      vs.push_back({nm,
                    [&, kernel, tiles] {
                      kernel<<<dim3(unsigned((rv + TV - 1) / TV), unsigned(tiles)), B>>>(params);
                      cd::column_sum_kernel<A, T>
                          <<<unsigned((cols + 127) / 128), 128>>>(partial, tiles, cols, dbias2);
                    },
                    {}});
    };
    using std::integral_constant;
    add(integral_constant<int, 1024>{}, integral_constant<int, 32>{}, integral_constant<int, 1>{});
    add(integral_constant<int, 1024>{}, integral_constant<int, 32>{}, integral_constant<int, 2>{});
    add(integral_constant<int, 1024>{}, integral_constant<int, 16>{}, integral_constant<int, 1>{});
    add(integral_constant<int, 512>{}, integral_constant<int, 32>{}, integral_constant<int, 2>{});
    add(integral_constant<int, 512>{}, integral_constant<int, 32>{}, integral_constant<int, 4>{});
    add(integral_constant<int, 256>{}, integral_constant<int, 32>{}, integral_constant<int, 4>{});
    add(integral_constant<int, 256>{}, integral_constant<int, 32>{}, integral_constant<int, 8>{});
  } else if (mode == 1) {
    // second form: the library's stage 1 kernel in blocks of 128-1024 threads (where they fit)
    const auto chunks = cd::bias_gradient_chunks(rows, cols, W);
    for (unsigned b : {128u, 256u, 512u, 1024u}) {
      int fit = 0;
      CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
          &fit, cd::bias_gradient_kernel<decltype(params)>, b, 0));
      if (fit == 0) continue;  // the session's run stopped here at relu fp32 (80 registers)
      vs.push_back(
          {"stage1 x" + std::to_string(b),
           [&, b, chunks] {
             cd::bias_gradient_kernel<decltype(params)>
                 <<<dim3(unsigned((rv + b - 1) / b), unsigned(chunks.chunks)), b>>>(params);
             cd::column_sum_kernel<A, T>
                 <<<unsigned((cols + 127) / 128), 128>>>(partial, chunks.chunks, cols, dbias2);
           },
           {}});
    }
  } else {
    // first form: flat order, D rows in flight, k rows per grid step (k1, k2: all resident)
    std::vector<std::pair<int, unsigned>> cfg = {{1, k1}, {2, k2}};
    if (k1 > 1) cfg.push_back({1, k1 - 1});
    if (k2 > 1) cfg.push_back({2, k2 - 1});
    cfg.push_back({1, k1 + 1});
    for (const auto& dk : cfg) {
      const int d = dk.first;
      const unsigned k = dk.second;
      std::string nm = "flat D" + std::to_string(d) + " k" + std::to_string(k);
      if (d == 1)
        vs.push_back({nm, [&, k] { flat(std::integral_constant<int, 1>{}, k, dbias2); }, {}});
      else
        vs.push_back({nm, [&, k] { flat(std::integral_constant<int, 2>{}, k, dbias2); }, {}});
    }
  }
  // checks: dx identical to the library's, dbias within a relative 1e-3 of max(|dbias|, 1)
  std::vector<T> ref(std::min<std::size_t>(n, 1 << 22)), got(ref.size());
  std::vector<T> rb(cols), gb(cols);
  vs[1].f();
  CK(cudaDeviceSynchronize());
  CK(cudaMemcpy(ref.data(), dx + n - ref.size(), ref.size() * sizeof(T), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(rb.data(), dbias, cols * sizeof(T), cudaMemcpyDeviceToHost));
  for (std::size_t i = 2; i < vs.size(); ++i) {
    CK(cudaMemset(dx, 0xff, n * sizeof(T)));
    CK(cudaMemset(dbias2, 0xff, cols * sizeof(T)));
    vs[i].f();
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(got.data(), dx + n - got.size(), got.size() * sizeof(T), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(gb.data(), dbias2, cols * sizeof(T), cudaMemcpyDeviceToHost));
    const bool same = std::memcmp(got.data(), ref.data(), got.size() * sizeof(T)) == 0;
    double mx = 1, diff = 0;
    for (std::size_t c = 0; c < cols; ++c) {
      const double a = cd::to_compute(rb[c]), b = cd::to_compute(gb[c]);
      mx = std::max(mx, std::abs(a));
      diff = std::max(diff, std::abs(a - b));
      if (b != b) diff = 1e30;
    }
    std::snprintf(buf, sizeof buf, "  %s: dx %s, dbias max|diff|/max(|dbias|,1) %.2e",
                  vs[i].name.c_str(), same ? "identical" : "DIFFERS", diff / mx);
    std::puts(buf);
    lines.push_back(buf);
  }
  time_round_robin(vs, reps);
  const double copy_bps = 2.0 * n * sizeof(T) / med(vs[0].ms);
  for (std::size_t i = 1; i < vs.size(); ++i) {
    const double bytes = 3.0 * n * sizeof(T) + 2.0 * cols * sizeof(T);
    auto m = vs[i].ms;
    std::sort(m.begin(), m.end());
    std::snprintf(buf, sizeof buf, "  %-14s %8.4f ms  x memcpy %.3f (%.3f..%.3f)",
                  vs[i].name.c_str(), med(vs[i].ms), bytes / med(vs[i].ms) / copy_bps,
                  bytes / m.back() / copy_bps, bytes / m.front() / copy_bps);
    std::puts(buf);
    lines.push_back(buf);
  }
  std::snprintf(buf, sizeof buf, "  memcpy %.1f GB/s", copy_bps / 1e6);
  std::puts(buf);
  lines.push_back(buf);
  cudaFree(x);
  cudaFree(dy);
  cudaFree(dx);
  cudaFree(copy_dst);
  cudaFree(bias);
  cudaFree(dbias);
  cudaFree(dbias2);
  cudaFree(partial);
}

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 9;
  const char* form = argc > 2 ? argv[2] : "flat";
  const int mode = std::strcmp(form, "tiles") == 0 ? 2 : std::strcmp(form, "blocks") == 0 ? 1 : 0;
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf("%s, %d reps, round-robin, medians\n", prop.name, reps);
  std::vector<std::string> lines;
  const std::vector<std::array<std::size_t, 2>> shapes =
      mode != 0
          ? std::vector<std::array<std::size_t, 2>>{{4096, 393216}, {16384, 98304}}
          : std::vector<std::array<std::size_t, 2>>{{4096, 393216}, {4096, 393248}, {16384, 98304}};
  for (auto& s : shapes) {
    run_shape<float>("fp32", "gelu", cuact::gelu{}, s[0], s[1], reps, mode, lines);
    run_shape<float>("fp32", "relu", cuact::relu{}, s[0], s[1], reps, mode, lines);
    run_shape<__nv_bfloat16>("bf16", "gelu", cuact::gelu{}, s[0], s[1], reps, mode, lines);
    run_shape<__nv_bfloat16>("bf16", "relu", cuact::relu{}, s[0], s[1], reps, mode, lines);
    if (mode != 0) {
      run_shape<float>("fp32", "silu", cuact::silu{}, s[0], s[1], reps, mode, lines);
      run_shape<__nv_bfloat16>("bf16", "silu", cuact::silu{}, s[0], s[1], reps, mode, lines);
    }
  }
}
