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
cuact_add_test(NAME cpu_accuracy KIND cpu SOURCES cpu_accuracy.cu)
