# GPU tests (label gpu; without a device they print SKIPPED and exit 77, which CTest reports as
# Skipped) and the CPU fuzz (label cpu). Sources are split so -j2 builds them in parallel; the shared
# harness is common/gpu_support.hpp. Environment: CUACT_TEST_QUICK=1 shrinks sizes and matrices
# (tests/sanitize.sh sets it); CUACT_FUZZ_SEED and CUACT_FUZZ_CASES steer both fuzzers.
cuact_add_test(NAME gpu_forward KIND gpu
               SOURCES gpu_forward_float.cu gpu_forward_double.cu gpu_forward_half.cu gpu_forward_bfloat16.cu)
cuact_add_test(NAME gpu_backward KIND gpu
               SOURCES gpu_backward_float.cu gpu_backward_double.cu gpu_backward_half.cu
                       gpu_backward_bfloat16.cu gpu_backward_mask.cu)
cuact_add_test(NAME gpu_errors KIND gpu SOURCES gpu_errors.cu)
cuact_add_test(NAME gpu_fuzz KIND gpu SOURCES gpu_fuzz.cu)
# 2^31 + 7 elements, ~9 GB of device memory: its own name so it can be run (or left out) alone.
cuact_add_test(NAME gpu_large KIND gpu SOURCES gpu_large.cu)
cuact_add_test(NAME cpu_fuzz KIND cpu SOURCES cpu_fuzz.cu)
set_tests_properties(gpu_forward gpu_backward gpu_errors PROPERTIES TIMEOUT 300)
set_tests_properties(gpu_fuzz PROPERTIES TIMEOUT 600)
set_tests_properties(gpu_large PROPERTIES TIMEOUT 300)
set_tests_properties(cpu_fuzz PROPERTIES TIMEOUT 600)
