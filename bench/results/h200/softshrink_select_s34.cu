// Session 34 prototype: softshrink's forward as one selection ("select" in run 1; run 2 added
// "fast", run 3 "general", the form the library took). PyTorch's timing on the H200
// (h200/torch_timing_s34.txt) has cuact's bf16 softshrink 1.3% behind its other light bf16 ops
// (1.532 ms against 1.504-1.517) and behind torch.compile (0.982x); --family has it at 0.997 x memcpy
// against hardshrink's 1.012 (h200/family.txt). The landed form, x > l ? x - l : x < -l ? x + l :
// (x != x ? x : 0), takes two compares, two additions, a NaN test and three selections per element;
// the new one, !(|x| <= l) ? x - copysign(l, x) : 0, one compare (true for NaN, whose x - l is NaN),
// one addition, a sign copy and one selection, and gives the same bits for every input (x - l and
// x + l are the same operations; |x| <= l gives +0 as before). Contestants per dtype (round-robin,
// each timed call the third of three): memcpy, cuact::forward(softshrink) (the landed form; check
// reference), CUB, the new form through cuact::forward (a light activation of this file), hardshrink
// and relu as light controls. Outputs checked bit-identical to the landed form's.
// It ran on a996ba2's library (the landed form: the formula's selects); since cae617d
// cuact::softshrink is the "general" form, so a rebuild races like against like. Built on the CPU
// machine (helpers: ../proto_common.cuh, whose banner, rows and 16-bit comparison it ran with
// inline):
//   nvcc -O3 -std=c++17 -arch=sm_90 -I include -I bench/results bench/results/h200/softshrink_select_s34.cu
#include <cstring>

#include "proto_common.cuh"

/// The new form (as a light activation of its own, lambd 0.5 as PyTorch's default).
struct softshrink_select {
  static constexpr bool is_heavy = false;
  double lambd = 0.5;
  template <class C>
  __host__ __device__ C operator()(C x) const {
    const C l = C(lambd);
    const C ax = x < C(0) ? -x : x;
    return !(ax <= l) ? x - (x < C(0) ? -l : l) : C(0);
  }
};

/// The same selection with the absolute value and the sign copy as such (an |x| operand of the
/// compare, one LOP3), so that nothing but x feeds the compare and the subtraction: run 2.
struct softshrink_fast {
  static constexpr bool is_heavy = false;
  double lambd = 0.5;
  template <class C>
  __host__ __device__ C operator()(C x) const {
    const C l = C(lambd);
    if constexpr (std::is_same_v<C, float>) {
      return fabsf(x) <= l ? 0.0f : x - copysignf(l, x);
    } else {
      return ::fabs(x) <= l ? C(0) : x - ::copysign(l, x);
    }
  }
};

/// softshrink_fast where lambd >= 0, the landed form otherwise (a test of lambd, the same for every
/// element): run 3.
struct softshrink_general {
  static constexpr bool is_heavy = false;
  double lambd = 0.5;
  template <class C>
  __host__ __device__ C operator()(C x) const {
    const C l = C(lambd);
    if (l >= C(0)) {
      if constexpr (std::is_same_v<C, float>) {
        return fabsf(x) <= l ? 0.0f : x - copysignf(l, x);
      } else {
        return ::fabs(x) <= l ? C(0) : x - ::copysign(l, x);
      }
    }
    return x > l ? x - l : x < -l ? x + l : (x != x ? x : C(0));
  }
};

template <class T>
void run(const char* name, std::size_t n, int reps) {
  T *x, *out, *copy_dst;
  CK(cudaMalloc(&x, n * sizeof(T)));
  CK(cudaMalloc(&out, n * sizeof(T)));
  CK(cudaMalloc(&copy_dst, n * sizeof(T)));
  fill_normal<<<4096, 256>>>(x, n, 7);
  // specials at the front: the check compares the tail, so check the head too (below)
  CK(cudaDeviceSynchronize());
  std::vector<V> vs = forward_references<cuact::softshrink>(x, out, copy_dst, n);
  vs.push_back({"select", [=] { CK(cuact::forward(softshrink_select{}, x, out, n)); }, {}});
  vs.push_back({"fast", [=] { CK(cuact::forward(softshrink_fast{}, x, out, n)); }, {}});
  vs.push_back({"general", [=] { CK(cuact::forward(softshrink_general{}, x, out, n)); }, {}});
  check_contestants(vs, 1, 3, out, n * sizeof(T), std::size_t(16) << 20, name);
  vs.push_back({"hardshrink", [=] { CK(cuact::forward(cuact::hardshrink{}, x, out, n)); }, {}});
  vs.push_back({"relu", [=] { CK(cuact::forward(cuact::relu{}, x, out, n)); }, {}});
  vs.push_back({"cuact#2", [=] { CK(cuact::forward(cuact::softshrink{}, x, out, n)); }, {}});
  vs.push_back({"select#2", [=] { CK(cuact::forward(softshrink_select{}, x, out, n)); }, {}});
  vs.push_back({"fast#2", [=] { CK(cuact::forward(softshrink_fast{}, x, out, n)); }, {}});
  vs.push_back({"general#2", [=] { CK(cuact::forward(softshrink_general{}, x, out, n)); }, {}});
  time_round_robin(vs, reps);
  print_ratios(name, vs);
  CK(cudaFree(x));
  CK(cudaFree(out));
  CK(cudaFree(copy_dst));
}

/// Every 16-bit input through the landed form and each new one, compared bitwise.
template <class T>
void exhaustive(const std::string& name) {
  compare_every_16bit_input<T>((name + " select").c_str(), cuact::softshrink{},
                               softshrink_select{});
  compare_every_16bit_input<T>((name + " fast").c_str(), cuact::softshrink{}, softshrink_fast{});
  compare_every_16bit_input<T>((name + " general").c_str(), cuact::softshrink{},
                               softshrink_general{});
}

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 21;
  const std::size_t n = std::size_t(4096) * 393216;
  print_round_robin_banner(reps);
  exhaustive<__nv_bfloat16>("bf16");
  exhaustive<__half>("fp16");
  run<float>("warmup", n, 3);
  for (int sweep = 1; sweep <= 2; ++sweep) {
    run<__nv_bfloat16>("bf16", n, reps);
    run<__half>("fp16", n, reps);
    run<float>("fp32", n, reps);
  }
}
