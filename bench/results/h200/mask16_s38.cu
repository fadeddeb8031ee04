// Session 38 prototype: relu_forward_mask's 16-bit forward (bf16 and fp16 at 0.989-0.990 x memcpy in
// session 37's --headline on the H200, against >= 0.996 for relu's forward; session 18 had measured
// the bf16 byte-per-thread kernel at 0.993-0.998, h200/mask_launch_variants.txt). A 16-bit mask
// byte is one 16-byte vector (8 elements), so the library's body already loads a warp's 32
// consecutive vectors and stores its 32 consecutive mask bytes (a sector). Contestants:
// - library: cuact::relu_forward_mask (its model's shape is printed);
// - TxP: cuact's sign_mask_forward_kernel launched directly, T threads per block, a grid covering
//   the mask bytes in P grid-stride passes, no residency cap;
// - words128: one vector per thread in 128-thread blocks, the block's 128 mask bytes gathered in
//   shared memory and stored as 32 words by the first warp (128 bytes, one instruction);
// - relu: cuact::forward(relu) (no mask), a control.
// Every contestant's y and mask are compared byte for byte with the library's. Round-robin (each
// timed call the third of three), GB/s (bytes read + written) over memcpy's in the same round.
// Run with its arrays allocated inline; since moved to proto_common's typed_mask_arrays (the same
// allocations, order and fills, but y's 64 bytes over, which the run did not have). Built on the
// CPU machine:
//   nvcc -O3 -std=c++17 -arch=sm_90 -I include -I bench/results bench/results/h200/mask16_s38.cu
#include "proto_common.cuh"

template <class T>
__global__ void __launch_bounds__(128)
    words128_kernel(const T* in, T* out, std::uint32_t* mask, std::size_t vectors) {
  using vec = cd::vector_of<T, 8>;
  __shared__ std::uint8_t bytes[128];
  const cuact::forward_op<cuact::relu, T> op{};
  const std::size_t stride = std::size_t(gridDim.x) * 128;
  for (std::size_t base = std::size_t(blockIdx.x) * 128; base < vectors; base += stride) {
    const std::size_t i = base + threadIdx.x;
    const vec v = reinterpret_cast<const vec*>(in)[i];
    vec r;
    unsigned bits = 0;
    for (int j = 0; j < 8; ++j) {
      const auto x = cd::to_compute(v.elements[j]);
      bits |= unsigned(x > 0) << j;
      r.elements[j] = cd::from_compute<T>(op(x));
    }
    reinterpret_cast<vec*>(out)[i] = r;
    bytes[threadIdx.x] = static_cast<std::uint8_t>(bits);
    __syncthreads();
    if (threadIdx.x < 32)
      mask[base / 4 + threadIdx.x] = reinterpret_cast<const std::uint32_t*>(bytes)[threadIdx.x];
    __syncthreads();
  }
}

template <class T>
void probe(const char* type, unsigned seed) {
  const typed_mask_arrays<T> arrays(std::size_t(4096) * 393216, seed);
  const std::size_t n = arrays.n, mbytes = arrays.bytes, moved = arrays.moved;
  T* const x = arrays.x;
  T* const y = arrays.y;
  std::uint32_t* const mask = arrays.mask;
  using op_t = cuact::forward_op<cuact::relu, T>;
  const auto params = cd::make_sign_mask_params(op_t{}, x, y, mask, n);
  cd::launch_shape shape{};
  CK((cd::model_sign_mask_shape<T, op_t>(0, n, shape)));
  std::printf("%s library shape: %u blocks x %u threads, %u passes, %zu dynamic smem bytes\n", type,
              shape.blocks, shape.threads_per_block, shape.passes, shape.dynamic_shared_bytes);
  std::vector<V> vs;
  vs.push_back(arrays.memcpy_contestant());
  vs.push_back({"library", [=] { CK(cuact::relu_forward_mask(x, y, mask, n)); }, {}});
  for (unsigned threads : {128u, 256u, 512u})
    for (unsigned passes : {1u, 2u, 4u}) {
      const auto blocks =
          static_cast<unsigned>((mbytes + threads * passes - 1) / (threads * passes));
      vs.push_back({std::to_string(threads) + "x" + std::to_string(passes),
                    [=] { cd::sign_mask_forward_kernel<T, op_t><<<blocks, threads>>>(params); },
                    {}});
    }
  vs.push_back({"words128",
                [=] { words128_kernel<T><<<unsigned(n / 8 / 128), 128>>>(x, y, mask, n / 8); },
                {}});
  const std::size_t relu_index = vs.size();
  vs.push_back({"relu", [=] { CK(cuact::forward(cuact::relu{}, x, y, n)); }, {}});
  std::vector<V> mask_check(vs.begin() + 1, vs.begin() + relu_index);
  check_contestants(mask_check, 0, 1, mask, mbytes, mbytes, "mask");
  std::vector<V> y_check(vs.begin() + 1, vs.end());
  check_contestants(y_check, 0, 1, y, n * sizeof(T), 1 << 26, "y (last 64 MiB)");
  time_round_robin(vs, 15);
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf("%s, %s n = 4096 x 393216, 15 round-robin rounds, medians (min..max)\n", prop.name,
              type);
  print_gbs_against_copy(
      vs, [=](std::size_t i) { return i >= relu_index ? n * 2 * sizeof(T) : moved; });
}

int main() {
  probe<__nv_bfloat16>("bf16", 38);
  probe<__half>("fp16", 39);
  return 0;
}
