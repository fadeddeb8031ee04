# CPU tests (label cpu): run in CI with no GPU. The grid simulation is one executable in four
# translation units so -j2 builds it in parallel.
cuact_add_test(NAME cpu_grid KIND cpu SOURCES cpu_grid.cu cpu_grid_table.cu cpu_mask.cu cpu_table.cu)
cuact_add_test(NAME cpu_support KIND cpu SOURCES cpu_support.cu)

# README's code snippets are the examples' (tools/readme_snippets.py rewrites them).
find_package(Python3 COMPONENTS Interpreter)
if(Python3_FOUND)
  add_test(NAME readme_snippets COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tools/readme_snippets.py --check)
  set_tests_properties(readme_snippets PROPERTIES LABELS cpu)
endif()
cuact_add_test(NAME cpu_fused KIND cpu SOURCES cpu_fused.cu)
cuact_add_test(NAME cpu_gate KIND cpu SOURCES cpu_gate.cu)
cuact_add_test(NAME cpu_accuracy KIND cpu SOURCES cpu_accuracy.cu)

# NVRTC compiles the headers that claim run-time compilation support (docs/nvrtc.md) to PTX: a
# plain program on the toolkit's libnvrtc, no GPU and no Catch2.
find_package(CUDAToolkit QUIET)
if(TARGET CUDA::nvrtc)
  set(cuact_nvrtc_includes ${PROJECT_SOURCE_DIR}/include)
  foreach(dir IN LISTS CUDAToolkit_INCLUDE_DIRS)
    list(APPEND cuact_nvrtc_includes ${dir})
    if(IS_DIRECTORY ${dir}/cccl)  # CUDA 13 keeps CCCL's cuda/std there
      list(APPEND cuact_nvrtc_includes ${dir}/cccl)
    endif()
  endforeach()
  add_executable(nvrtc_compile nvrtc_compile.cpp)
  target_link_libraries(nvrtc_compile PRIVATE CUDA::nvrtc)
  list(JOIN cuact_nvrtc_includes "|" cuact_nvrtc_includes)  # ';' would split the definition
  target_compile_definitions(nvrtc_compile PRIVATE "CUACT_NVRTC_INCLUDES=\"${cuact_nvrtc_includes}\"")
  add_test(NAME nvrtc_compile COMMAND nvrtc_compile)
  set_tests_properties(nvrtc_compile PROPERTIES LABELS cpu)
endif()
cuact_add_test(NAME cpu_errors KIND cpu SOURCES cpu_errors.cu)
cuact_add_test(NAME cpu_policy KIND cpu SOURCES cpu_policy.cu)
cuact_add_test(NAME cpu_table_choice KIND cpu SOURCES cpu_table_choice.cu)
