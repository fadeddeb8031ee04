# CPU tests: run in CI with no GPU. The grid simulation is split per type so -j2 builds in parallel.
foreach(type float double half bfloat16)
  cuact_add_test(NAME cpu_grid_${type} KIND cpu SOURCES cpu_grid_${type}.cu)
endforeach()
cuact_add_test(NAME cpu_activations KIND cpu SOURCES cpu_activations.cu)
cuact_add_test(NAME cpu_relu_mask KIND cpu SOURCES cpu_relu_mask.cu)

# README's code snippets are the examples' (tools/readme_snippets.py rewrites them).
find_package(Python3 COMPONENTS Interpreter)
if(Python3_FOUND)
  add_test(NAME readme_snippets COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tools/readme_snippets.py --check)
  set_tests_properties(readme_snippets PROPERTIES LABELS cpu)
endif()
cuact_add_test(NAME cpu_fused KIND cpu SOURCES cpu_fused.cu)
