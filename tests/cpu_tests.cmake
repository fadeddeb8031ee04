# CPU tests: run in CI with no GPU. The grid simulation is split per type so -j2 builds in parallel.
foreach(type float double half bfloat16)
  cuact_add_test(NAME cpu_grid_${type} KIND cpu SOURCES cpu_grid_${type}.cu)
endforeach()
cuact_add_test(NAME cpu_activations KIND cpu SOURCES cpu_activations.cu)
cuact_add_test(NAME cpu_relu_mask KIND cpu SOURCES cpu_relu_mask.cu)
