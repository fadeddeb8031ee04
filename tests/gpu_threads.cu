// Many host threads calling cuact at once: 16 threads, each on its own stream (and, on a machine
// with two or more GPUs, alternately on devices 0 and 1), start together and call forward and
// backward for several ops and dtypes, whose launch-model facts (per device and per kernel
// instantiation, cached in atomics: detail/launch.cuh) none of them has queried yet. Every result
// is checked against the reference kernel on the calling thread's stream; the checks report on the
// main thread (Catch2's assertions are not thread-safe).
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "catch.hpp"
#include "device.hpp"

using namespace cuact_test;

namespace {

constexpr int num_threads = 16;
constexpr int rounds = 8;

/// One thread's run of pass P of `act` on T; returns what went wrong ("" when nothing did).
template <pass P, class T, class A>
std::string run_one(const A& act, int device, std::size_t n, std::uint64_t seed,
                    cudaStream_t stream) {
  std::string problems;
  const auto check = [&](cudaError_t status, const char* what) {
    if (status != cudaSuccess && problems.size() < 400)
      problems += std::string(what) + ": " + cudaGetErrorName(status) + "; ";
    return status == cudaSuccess;
  };
  T *in0 = nullptr, *in1 = nullptr, *out = nullptr, *expected = nullptr;
  if (!check(cudaSetDevice(device), "cudaSetDevice") ||
      !check(cudaMalloc(&in0, n * sizeof(T)), "cudaMalloc") ||
      !check(cudaMalloc(&in1, n * sizeof(T)), "cudaMalloc") ||
      !check(cudaMalloc(&out, n * sizeof(T)), "cudaMalloc") ||
      !check(cudaMalloc(&expected, n * sizeof(T)), "cudaMalloc")) {
    return problems;
  }
  fill_hash(in0, n, seed, stream);
  fill_hash(in1, n, seed + 1, stream);
  const auto op = pass_op<P, T>(act);
  if constexpr (pass_inputs(P) == 1) {
    compute_reference(op, n, cuda::std::tuple<T*>(expected), cuda::std::tuple<const T*>(in0),
                      stream);
  } else {
    compute_reference(op, n, cuda::std::tuple<T*>(expected),
                      cuda::std::tuple<const T*, const T*>(in0, in1), stream);
  }
  check(cudaGetLastError(), "fill and reference");
  check(call_entry<P, cuact::auto_width>(act, in0, in1, out, n, false, stream), pass_name(P));
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  std::vector<T> got(n), want(n);
  check(cudaMemcpy(got.data(), out, n * sizeof(T), cudaMemcpyDeviceToHost), "cudaMemcpy");
  check(cudaMemcpy(want.data(), expected, n * sizeof(T), cudaMemcpyDeviceToHost), "cudaMemcpy");
  std::size_t bad = 0;
  for (std::size_t i = 0; i < n; ++i) bad += same_result(got[i], want[i]) ? 0 : 1;
  if (bad != 0) problems += std::to_string(bad) + " of " + std::to_string(n) + " elements wrong; ";
  cudaFree(in0);
  cudaFree(in1);
  cudaFree(out);
  cudaFree(expected);
  return problems;
}

}  // namespace

TEST_CASE("16 host threads call forward and backward at once, on their own streams and devices",
          "[gpu][threads]") {
  int devices = 0;
  CUACT_CUDA_REQUIRE(cudaGetDeviceCount(&devices));
  const int used_devices = devices >= 2 ? 2 : 1;
  if (used_devices == 1)
    WARN("one device: every thread on device 0 (two GPUs put half the threads on device 1)");
  std::atomic<int> ready{0};
  std::vector<std::string> problems(num_threads);
  std::vector<std::thread> threads;
  for (int t = 0; t < num_threads; ++t) {
    threads.emplace_back([&, t] {
      const int device = t % used_devices;
      std::string& mine = problems[t];
      cudaStream_t stream = nullptr;
      if (cudaSetDevice(device) != cudaSuccess ||
          cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess) {
        mine = "no stream on device " + std::to_string(device);
        ready.fetch_add(1);
        return;
      }
      ready.fetch_add(1);
      while (ready.load() < num_threads) std::this_thread::yield();  // first calls race
      for (int r = 0; r < rounds; ++r) {
        const std::uint64_t seed = 1000 * t + 10 * r;
        // sizes from one element to several waves, so the model picks different shapes
        const std::size_t n = std::size_t(1) << (4 + (t + 3 * r) % 19);
        std::string p;
        switch ((t + r) % 6) {
          case 0:
            p = run_one<pass::forward, float>(cuact::relu{}, device, n + 3, seed, stream);
            break;
          case 1:
            p = run_one<pass::forward, __nv_bfloat16>(cuact::selu{}, device, n, seed, stream);
            break;
          case 2:
            p = run_one<pass::backward, float>(cuact::selu{}, device, n + 1, seed, stream);
            break;
          case 3:
            p = run_one<pass::backward_from_output, __half>(cuact::relu{}, device, n, seed, stream);
            break;
          case 4:
            p = run_one<pass::forward, double>(cuact::selu{}, device, n + 5, seed, stream);
            break;
          default:
            p = run_one<pass::backward, __nv_bfloat16>(cuact::relu{}, device, n, seed, stream);
            break;
        }
        if (!p.empty()) mine += "round " + std::to_string(r) + " n=" + std::to_string(n) + ": " + p;
      }
      cudaStreamDestroy(stream);
    });
  }
  for (std::thread& th : threads) th.join();
  CUACT_CUDA_REQUIRE(cudaSetDevice(0));
  for (int t = 0; t < num_threads; ++t) {
    INFO("thread " << t << " on device " << t % used_devices);
    CHECK(problems[t] == "");
  }
  CHECK(cudaGetLastError() == cudaSuccess);
}
