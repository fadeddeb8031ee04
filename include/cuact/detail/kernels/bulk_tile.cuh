/// \file
/// The elementwise kernel's sibling for sm_90's bulk copies: each block brings a tile of every
/// input into shared memory with one `cp.async.bulk` per input (the copy engine moves it; the
/// block's threads issue no loads), waits on an mbarrier, and each thread computes one vector of
/// the tile from shared memory and stores it; blocks step over tiles grid-stride, and the scalar
/// head and tail are elementwise_thread's. cub::DeviceTransform's sm_90 path does the same.
/// Why: light one-input forwards on the H100 ran 0.5-0.9% faster so than as elementwise_kernel's
/// one vector per thread, ahead of CUB (bench/results/h100/bulk_tiles_ab.txt, --family: the 16-bit
/// ones 1.000-1.002 -> 1.007-1.010 x memcpy, x CUB 0.994-0.996 -> 1.000-1.005); heavy ones and
/// the H200 lost (launch.cuh: takes_bulk_tiles says where the model takes it).
///
/// The index logic (bulk_tile_at, bulk_tile_source, compute_staged_vector, scalar_steps) is
/// host-device: the CPU tests run it over simulated grids, with a host copy standing in for the
/// bulk copy (tests/common/grid_simulation.hpp).
#pragma once

#if defined(__CUDACC__)
#include <cuda/ptx>
#endif
#include <cuda/std/tuple>

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "../config.cuh"
#include "elementwise.cuh"

namespace cuact {
namespace detail {

/// Bytes of one vector of each input, the unit of a bulk copy (16: its size and alignment).
inline constexpr std::size_t bulk_copy_vector_bytes = 16;

/// Whether params can run as bulk tiles: every input's vector is bulk_copy_vector_bytes (the copy
/// moves whole 16-byte units from 16-byte-aligned addresses, which make_params' head gives every
/// vector), and the op needs nothing beside its inputs' lanes (no vector state loaded by index, no
/// held-vector form, which elementwise_kernel alone serves).
template <class Params, class = void>
inline constexpr bool bulk_tiles_fit_v = false;
template <class Op, int VecWidth, class... Out, class... In>
inline constexpr bool
    bulk_tiles_fit_v<elementwise_params<Op, VecWidth, type_list<Out...>, type_list<In...>>> =
        ((sizeof(held_vector_t<In, VecWidth>) == bulk_copy_vector_bytes) && ...) &&
        !takes_vector_index_v<Op> && !takes_held_vector_v<Op>;

/// One tile: vectors [first_vector, first_vector + vectors) of the params' full vectors.
struct bulk_tile {
  std::size_t first_vector;
  unsigned vectors;  ///< tile_vectors, or fewer for the last tile
};

/// The tile of up to tile_vectors vectors (one per thread of a block) from vector first_vector
/// (< params.vectors) on.
template <class Params>
CUACT_HOST_DEVICE bulk_tile bulk_tile_at(const Params& params, unsigned tile_vectors,
                                         std::size_t first_vector) {
  const std::size_t left = params.vectors - first_vector;
  return {first_vector, static_cast<unsigned>(left < tile_vectors ? left : tile_vectors)};
}

/// Where input K's part of `tile` starts in global memory; the tile's bytes of each input are
/// tile.vectors x bulk_copy_vector_bytes from there.
template <std::size_t K, class Params>
CUACT_HOST_DEVICE const void* bulk_tile_source(const Params& params, const bulk_tile& tile) {
  return cuda::std::get<K>(params.inputs) + params.head + tile.first_vector * Params::vec_width;
}

/// Tiles a block has in flight or in use at once: while its threads compute one, the copy of the
/// next is under way (a block that makes one pass has one tile only).
inline constexpr unsigned bulk_tile_stages = 2;

/// Bytes of shared memory one stage of a block of tile_vectors threads holds: each input's part of
/// a tile after the previous one's.
template <class Params>
CUACT_HOST_DEVICE constexpr std::size_t bulk_tile_stage_bytes(unsigned tile_vectors) {
  return std::size_t(tile_vectors) * Params::num_inputs * bulk_copy_vector_bytes;
}

/// Bytes of dynamic shared memory a block of tile_vectors threads stages its tiles in: every
/// stage, one after the other.
template <class Params>
CUACT_HOST_DEVICE constexpr std::size_t bulk_tile_staging_bytes(unsigned tile_vectors) {
  return bulk_tile_stages * bulk_tile_stage_bytes<Params>(tile_vectors);
}

/// compute_staged_vector's body, with the inputs' index sequence.
#pragma nv_exec_check_disable
template <class Op, int VecWidth, class... Out, class... In, class Access, std::size_t... I>
CUACT_HOST_DEVICE void compute_staged_inputs(
    const elementwise_params<Op, VecWidth, type_list<Out...>, type_list<In...>>& params,
    const bulk_tile& tile, unsigned tile_vectors, unsigned lane, const void* staging,
    const Access& access, std::index_sequence<I...> inputs) {
  const auto* staged = static_cast<const unsigned char*>(staging);
  const cuda::std::tuple<held_vector_t<In, VecWidth>...> loaded{
      *reinterpret_cast<const held_vector_t<In, VecWidth>*>(
          staged + (I * tile_vectors + lane) * bulk_copy_vector_bytes)...};
  compute_and_store<VecWidth>(params, params.head + (tile.first_vector + lane) * VecWidth, loaded,
                              no_vector_state{}, access, inputs, std::index_sequence_for<Out...>{});
}

/// Lane `lane` (< tile.vectors) of a block computes vector `lane` of `tile` from `staging` (the
/// tile as bulk_tile_source's bytes, each input's part tile_vectors vectors after the previous
/// one's) and stores it through `access`.
#pragma nv_exec_check_disable
template <class Params, class Access>
CUACT_HOST_DEVICE void compute_staged_vector(const Params& params, const bulk_tile& tile,
                                             unsigned tile_vectors, unsigned lane,
                                             const void* staging, const Access& access) {
  compute_staged_inputs(params, tile, tile_vectors, lane, staging, access,
                        std::make_index_sequence<Params::num_inputs>{});
}

#if defined(__CUDACC__)
/// The block's staging buffer: dynamic shared memory of bulk_tile_staging_bytes(blockDim.x).
__device__ __forceinline__ uint4* bulk_tile_staging() {
  extern __shared__ uint4 cuact_bulk_tile_staging[];
  return cuact_bulk_tile_staging;
}

/// Thread 0's part of a tile: the copies of every input's part into `stage`, announced to the
/// mbarrier `staged` with their bytes.
template <class Params, std::size_t... K>
__device__ __forceinline__ void issue_bulk_tile(const Params& params, const bulk_tile& tile,
                                                unsigned tile_vectors, uint4* stage,
                                                std::uint64_t* staged, std::index_sequence<K...>) {
  namespace ptx = cuda::ptx;
  const auto bytes = static_cast<std::uint32_t>(tile.vectors * bulk_copy_vector_bytes);
  ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, staged,
                                 bytes * static_cast<std::uint32_t>(sizeof...(K)));
  (ptx::cp_async_bulk(ptx::space_cluster, ptx::space_global, stage + K * tile_vectors,
                      bulk_tile_source<K>(params, tile), bytes, staged),
   ...);
}
#endif

/// The kernel: block b takes the tiles of blockDim.x vectors from vector b x blockDim.x on, in
/// steps of the grid's threads (any grid is correct), bulk_tile_stages of them in flight at once,
/// then every thread takes its share of the scalars. Thread 0 issues the copies: the first
/// stages' before the block's first barrier (the copy engine starts while the block gathers), each
/// later one into the stage the block has just read, after a barrier (every thread done with it)
/// and a proxy fence (the threads' reads, generic proxy, before the copy engine's writes, async
/// proxy). Launched with bulk_tile_staging_bytes of dynamic shared memory, for params with
/// bulk_tiles_fit_v, on sm_90 and later (the host checks the binary's architecture); compiled for
/// earlier ones it runs elementwise_thread, so it stays correct there.
template <class Params>
CUACT_KERNEL void bulk_tile_kernel(const Params params) {
  static_assert(bulk_tiles_fit_v<Params>, "cuact: these params do not run as bulk tiles");
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  namespace ptx = cuda::ptx;
  constexpr auto inputs = std::make_index_sequence<Params::num_inputs>{};
  __shared__ std::uint64_t
      staged[bulk_tile_stages];  // the mbarriers each stage's copies complete on
  const unsigned tile_vectors = blockDim.x;
  const std::size_t step = static_cast<std::size_t>(gridDim.x) * tile_vectors;
  const auto stage = [&](unsigned s) {
    return bulk_tile_staging() + s * bulk_tile_stage_bytes<Params>(tile_vectors) / sizeof(uint4);
  };
  std::size_t first = static_cast<std::size_t>(blockIdx.x) * tile_vectors;
  if (threadIdx.x == 0) {
    for (unsigned s = 0; s < bulk_tile_stages; ++s) ptx::mbarrier_init(&staged[s], 1);
    ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);
    for (unsigned s = 0; s < bulk_tile_stages && first + s * step < params.vectors; ++s) {
      issue_bulk_tile(params, bulk_tile_at(params, tile_vectors, first + s * step), tile_vectors,
                      stage(s), &staged[s], inputs);
    }
  }
  __syncthreads();
  std::uint32_t parities = 0;  // bit s: the phase parity that stage s's next tile completes
  for (unsigned s = 0; first < params.vectors; first += step, s = (s + 1) % bulk_tile_stages) {
    const bulk_tile tile = bulk_tile_at(params, tile_vectors, first);
    while (!ptx::mbarrier_try_wait_parity(&staged[s], (parities >> s) & 1u)) {
    }
    parities ^= 1u << s;
    if (threadIdx.x < tile.vectors) {
      compute_staged_vector(params, tile, tile_vectors, threadIdx.x, stage(s),
                            global_memory_access{});
    }
    const std::size_t refill = first + bulk_tile_stages * step;
    if (refill < params.vectors) {  // the same for every thread of the block
      __syncthreads();
      if (threadIdx.x == 0) {
        ptx::fence_proxy_async(ptx::space_shared);
        issue_bulk_tile(params, bulk_tile_at(params, tile_vectors, refill), tile_vectors, stage(s),
                        &staged[s], inputs);
      }
    }
  }
  scalar_steps(params, static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x,
               static_cast<std::size_t>(gridDim.x) * blockDim.x, global_memory_access{});
#else
  elementwise_thread(params, static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x,
                     static_cast<std::size_t>(gridDim.x) * blockDim.x);
#endif
}

}  // namespace detail
}  // namespace cuact
