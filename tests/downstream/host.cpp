// A host-compiled (not nvcc) translation unit: activations.cuh is meant to compile under a host
// compiler too (CUACT_HOST_DEVICE falls back to inline), given the package's CUDA include dirs.
#include <cuact/activations.cuh>

#include <cstdio>

int main() {
  const float y = cuact::relu{}(-1.5f);
  const double dy = cuact::selu{}.derivative(2.0);
  if (y != 0.0f || dy != cuact::selu::scale) {
    std::printf("cuact_downstream_host: relu(-1.5) = %g, selu'(2) = %.17g\n", y, dy);
    return 1;
  }
  std::printf("cuact_downstream_host: activations.cuh compiled by the host compiler: OK\n");
  return 0;
}
