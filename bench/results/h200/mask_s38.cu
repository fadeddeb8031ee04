// Session 38 probe: relu_forward_mask as merged (ea620d1: fp32 and fp64 staged, a vector per thread
// and the mask bytes through shared memory; 16-bit a mask byte per thread) against
// - per_byte: the byte-per-thread body it replaced for fp32 and fp64 (cuact's
//   sign_mask_forward_thread, which the kernel still runs past its staged steps), 128 threads, one
//   pass: the kernel before ea620d1;
// - traffic: a copy with no arithmetic and the mask forward's traffic: one 16-byte vector per
//   thread copied in 128-thread blocks, one pass, and the block's mask bytes (128 / vectors per
//   byte) stored by its first threads side by side, a byte of the thread's index each (no barrier,
//   nothing from the data); mask_ceiling_s38.txt found that writing 17 bytes per 16 read costs
//   about 1% against memcpy's equal reads and writes, which reading them does not;
// - relu: cuact::forward(relu) (no mask), a control.
// Per type, 4096 x 393216 elements (fp64 half as many: the same bytes as fp32); x standard normal;
// per_byte's y and mask compared byte for byte with the library's. Round-robin (each timed call
// the third of three), 15 rounds; GB/s (bytes read + written) over memcpy's in the same round.
// Run with its arrays allocated inline; since moved to proto_common's typed_mask_arrays (the same
// allocations, order and fills, but y's 64 bytes over, which the run did not have). Built on the
// CPU machine:
//   nvcc -O3 -std=c++17 -arch=sm_90 -I include -I bench/results bench/results/h200/mask_s38.cu
#include "proto_common.cuh"

template <class T, class Op>
__global__ void __launch_bounds__(128) per_byte_kernel(const cd::sign_mask_params<T, Op> params) {
  cd::sign_mask_forward_thread(params, std::size_t(blockIdx.x) * 128 + threadIdx.x,
                               std::size_t(gridDim.x) * 128);
}

template <int VectorsPerByte>
__global__ void __launch_bounds__(128)
    traffic_kernel(const uint4* in, uint4* out, std::uint8_t* mask) {
  const std::size_t i = std::size_t(blockIdx.x) * 128 + threadIdx.x;
  out[i] = in[i];
  if (threadIdx.x < 128 / VectorsPerByte) {
    mask[std::size_t(blockIdx.x) * (128 / VectorsPerByte) + threadIdx.x] =
        static_cast<std::uint8_t>(i);
  }
}

template <class T>
void probe(const char* type, std::size_t n, unsigned seed) {
  const typed_mask_arrays<T> arrays(n, seed);
  const std::size_t mbytes = arrays.bytes, moved = arrays.moved, vectors = n * sizeof(T) / 16;
  constexpr int vectors_per_byte = static_cast<int>(8 * sizeof(T) / 16);
  T* const x = arrays.x;
  T* const y = arrays.y;
  std::uint32_t* const mask = arrays.mask;
  char* const src = arrays.copy_src;
  char* const dst = arrays.copy_dst;
  using op_t = cuact::forward_op<cuact::relu, T>;
  const auto params = cd::make_sign_mask_params(op_t{}, x, y, mask, n);
  std::vector<V> vs;
  vs.push_back(arrays.memcpy_contestant());
  vs.push_back({"library", [=] { CK(cuact::relu_forward_mask(x, y, mask, n)); }, {}});
  if constexpr (vectors_per_byte > 1) {
    const auto blocks = static_cast<unsigned>(mbytes / 128);
    vs.push_back({"per_byte", [=] { per_byte_kernel<T, op_t><<<blocks, 128>>>(params); }, {}});
  }
  const std::size_t checked = vs.size();
  vs.push_back({"traffic",
                [=] {
                  traffic_kernel<vectors_per_byte><<<unsigned(vectors / 128), 128>>>(
                      reinterpret_cast<const uint4*>(x), reinterpret_cast<uint4*>(dst),
                      reinterpret_cast<std::uint8_t*>(src));
                },
                {}});
  vs.push_back({"relu", [=] { CK(cuact::forward(cuact::relu{}, x, y, n)); }, {}});
  if (checked > 2) {
    std::vector<V> mask_check(vs.begin() + 1, vs.begin() + checked);
    check_contestants(mask_check, 0, 1, mask, mbytes, mbytes, "mask");
    check_contestants(mask_check, 0, 1, y, n * sizeof(T), 1 << 26, "y (last 64 MiB)");
  }
  time_round_robin(vs, 15);
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf("%s, %s n = %zu, 15 round-robin rounds, medians (min..max)\n", prop.name, type, n);
  const std::size_t relu_index = vs.size() - 1;
  print_gbs_against_copy(
      vs, [=](std::size_t i) { return i == relu_index ? n * 2 * sizeof(T) : moved; });
}

int main() {
  const std::size_t n = std::size_t(4096) * 393216;
  probe<float>("fp32", n, 38);
  probe<double>("fp64", n / 2, 39);
  probe<__nv_bfloat16>("bf16", n, 40);
  probe<__half>("fp16", n, 41);
  return 0;
}
