/// \file
/// The elementwise kernel's sibling for sm_90's bulk copies: each block brings its tile of every
/// input into shared memory with one `cp.async.bulk` per input (the copy engine moves it; the
/// block's threads issue no loads), waits on an mbarrier, and each thread computes one vector of
/// the tile from shared memory and stores it; one tile per block, the grid covering the tiles,
/// and the scalar head and tail are elementwise_thread's. cub::DeviceTransform's sm_90 path does
/// the same.
/// Why: where the budget leaves float math room, one-input forwards run a little faster so than
/// as elementwise_kernel's one vector per thread, light ones and some heavy ones alike; the
/// longest math and devices with a tight budget lose (launch.cuh: takes_bulk_tiles says where
/// the model takes it).
///
/// The index logic (bulk_tile_of_block, bulk_tile_source, compute_staged_vector, scalar_steps) is
/// host-device: the CPU tests run it over simulated grids, with a host copy standing in for the
/// bulk copy (tests/common/grid_simulation.hpp).
#pragma once

#if defined(__CUDACC__)
// Only the PTX wrappers the kernel uses: all of <cuda/ptx> is among the costliest headers to compile.
#include <cuda/std/detail/__config>
#include <cuda/__ptx/instructions/cp_async_bulk.h>
#include <cuda/__ptx/instructions/fence.h>
#include <cuda/__ptx/instructions/mbarrier_arrive.h>
#include <cuda/__ptx/instructions/mbarrier_init.h>
#include <cuda/__ptx/instructions/mbarrier_wait.h>
#endif

#include <cuda/std/cstddef>
#include <cuda/std/cstdint>

#include "../std.cuh"
#include "../tuple.cuh"
#include "../config.cuh"
#include "elementwise.cuh"

namespace cuact {
namespace detail {

/// Bytes of one vector of each input, the unit of a bulk copy (16: its size and alignment).
inline constexpr cuda::std::size_t bulk_copy_vector_bytes = 16;

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
  cuda::std::size_t first_vector;
  unsigned vectors;  ///< tile_vectors, fewer for the last tile, 0 for a block past the last
};

/// Block `block`'s tile of up to tile_vectors vectors (one per thread of the block): the vectors
/// from block x tile_vectors on, none where that is past the last.
template <class Params>
CUACT_HOST_DEVICE bulk_tile bulk_tile_of_block(const Params& params, unsigned tile_vectors,
                                               cuda::std::size_t block) {
  const cuda::std::size_t first = block * tile_vectors;
  const cuda::std::size_t left = first < params.vectors ? params.vectors - first : 0;
  return {first, static_cast<unsigned>(left < tile_vectors ? left : tile_vectors)};
}

/// Whether a grid of `blocks` blocks of tile_vectors threads covers params' tiles, as
/// bulk_tile_kernel requires: a block per tile.
template <class Params>
CUACT_HOST_DEVICE bool bulk_grid_covers(const Params& params, cuda::std::size_t blocks,
                                        unsigned tile_vectors) {
  return blocks * tile_vectors >= params.vectors;
}

/// Where input K's part of `tile` starts in global memory; the tile's bytes of each input are
/// tile.vectors x bulk_copy_vector_bytes from there.
template <cuda::std::size_t K, class Params>
CUACT_HOST_DEVICE const void* bulk_tile_source(const Params& params, const bulk_tile& tile) {
  return detail::get<K>(params.inputs) + params.head + tile.first_vector * Params::vec_width;
}

/// Bytes of dynamic shared memory a block of tile_vectors threads stages its tile in: each
/// input's part after the previous one's.
template <class Params>
CUACT_HOST_DEVICE constexpr cuda::std::size_t bulk_tile_staging_bytes(unsigned tile_vectors) {
  return cuda::std::size_t(tile_vectors) * Params::num_inputs * bulk_copy_vector_bytes;
}

/// compute_staged_vector's body, with the inputs' index sequence.
#pragma nv_exec_check_disable
template <class Op, int VecWidth, class... Out, class... In, class Access, cuda::std::size_t... I>
CUACT_HOST_DEVICE void compute_staged_inputs(
    const elementwise_params<Op, VecWidth, type_list<Out...>, type_list<In...>>& params,
    const bulk_tile& tile, unsigned tile_vectors, unsigned lane, const void* staging,
    const Access& access, cuda::std::index_sequence<I...> inputs) {
  const auto* staged = static_cast<const unsigned char*>(staging);
  const detail::tuple<held_vector_t<In, VecWidth>...> loaded{
      *reinterpret_cast<const held_vector_t<In, VecWidth>*>(
          staged + (I * tile_vectors + lane) * bulk_copy_vector_bytes)...};
  compute_and_store<VecWidth>(params, params.head + (tile.first_vector + lane) * VecWidth, loaded,
                              no_vector_state{}, access, inputs,
                              cuda::std::index_sequence_for<Out...>{});
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
                        cuda::std::make_index_sequence<Params::num_inputs>{});
}

/// Alignment of the staging buffer in shared memory. cp.async.bulk needs 16 bytes, which a uint4
/// array gets, but its copies ran slower into a buffer aligned to 16 and not to 128. Dynamic
/// shared memory starts after the kernel's static shared memory (its mbarrier), aligned to the
/// largest alignment any extern shared array of the module declares, so the same kernel's
/// buffer was 128-aligned in a module holding CUB's kernels and 16-aligned elsewhere; asking
/// 128 makes it the same everywhere.
inline constexpr unsigned bulk_tile_staging_alignment = 128;

#if defined(__CUDACC__)
/// The block's staging buffer: dynamic shared memory of bulk_tile_staging_bytes(blockDim.x),
/// aligned to bulk_tile_staging_alignment whatever else the translation unit holds.
__device__ __forceinline__ uint4* bulk_tile_staging() {
  extern __shared__ __align__(bulk_tile_staging_alignment) uint4 cuact_bulk_tile_staging[];
  return cuact_bulk_tile_staging;
}

/// Thread 0's part of a tile: the copies of every input's part into `stage`, announced to the
/// mbarrier `staged` with their bytes.
template <class Params, cuda::std::size_t... K>
__device__ __forceinline__ void issue_bulk_tile(const Params& params, const bulk_tile& tile,
                                                unsigned tile_vectors, uint4* stage,
                                                cuda::std::uint64_t* staged,
                                                cuda::std::index_sequence<K...>) {
  namespace ptx = cuda::ptx;
  const auto bytes = static_cast<cuda::std::uint32_t>(tile.vectors * bulk_copy_vector_bytes);
  ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, staged,
                                 bytes * static_cast<cuda::std::uint32_t>(sizeof...(K)));
  (ptx::cp_async_bulk(ptx::space_cluster, ptx::space_global, stage + K * tile_vectors,
                      bulk_tile_source<K>(params, tile), bytes, staged),
   ...);
}
#endif

CUACT_KERNELS_BEGIN
/// The kernel: block b takes its tile (bulk_tile_of_block): thread 0 issues the copies before the
/// block's barrier (the copy engine starts while the block gathers), every thread waits for them
/// on the mbarrier, computes its vector and stores it; then, where TakesScalars, every thread
/// takes its share of the scalars, grid-stride (without it, for params with none:
/// bulk_tile_kernel_for). Launched with a grid that covers the tiles (bulk_grid_covers: vectors
/// past the grid's tiles are left alone) and bulk_tile_staging_bytes of dynamic shared memory,
/// for params with bulk_tiles_fit_v, on sm_90 and later (the host checks the binary's
/// architecture); compiled for earlier ones it runs elementwise_thread (any grid).
/// Why one tile per block and nothing beside it: blocks stepping over tiles grid-stride (their
/// next tile's copy in flight), a stage refilled in a loop, and plain-load steps for vectors past
/// the grid all ran heavy math slower than one tile per block, with no more registers, so the
/// cost is in the stepping code itself. Even the scalar steps cost heavy math where there are
/// no scalars, hence the instantiation without them.
template <class Params, bool TakesScalars = true>
CUACT_KERNEL void bulk_tile_kernel(const Params params) {
  static_assert(bulk_tiles_fit_v<Params>, "cuact: these params do not run as bulk tiles");
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  namespace ptx = cuda::ptx;
  __shared__ cuda::std::uint64_t staged;  // the mbarrier the tile's copies complete on
  const unsigned tile_vectors = blockDim.x;
  const bulk_tile tile = bulk_tile_of_block(params, tile_vectors, blockIdx.x);
  if (tile.vectors != 0) {  // the same for every thread of the block
    if (threadIdx.x == 0) {
      ptx::mbarrier_init(&staged, 1);
      ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);
      issue_bulk_tile(params, tile, tile_vectors, bulk_tile_staging(), &staged,
                      cuda::std::make_index_sequence<Params::num_inputs>{});
    }
    __syncthreads();
    while (!ptx::mbarrier_try_wait_parity(&staged, 0u)) {
    }
    if (threadIdx.x < tile.vectors) {
      compute_staged_vector(params, tile, tile_vectors, threadIdx.x, bulk_tile_staging(),
                            global_memory_access{});
    }
  }
#endif
  const cuda::std::size_t thread =
      static_cast<cuda::std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const cuda::std::size_t num_threads = static_cast<cuda::std::size_t>(gridDim.x) * blockDim.x;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if constexpr (TakesScalars) scalar_steps(params, thread, num_threads, global_memory_access{});
#else
  elementwise_thread(params, thread, num_threads);
#endif
}
CUACT_KERNELS_END

/// The instantiation of bulk_tile_kernel that runs params: without the scalar steps where params
/// have no scalars (no head, no tail), else with them.
template <class Params>
auto bulk_tile_kernel_for(const Params& params) {
  return params.head + params.tail == 0 ? bulk_tile_kernel<Params, false>
                                        : bulk_tile_kernel<Params, true>;
}

}  // namespace detail
}  // namespace cuact
