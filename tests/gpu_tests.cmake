# GPU tests (label gpu; without a device they print SKIPPED and exit 77, which CTest reports as
# Skipped) and the CPU fuzz (label cpu). Environment: CUACT_TEST_QUICK=1 shrinks sizes and matrices
# (tests/sanitize.sh sets it); CUACT_FUZZ_SEED and CUACT_FUZZ_CASES steer both fuzzers. The
# harness: common/gpu_cases.hpp. One executable per topic; gpu_backward in two translation units so
# -j2 builds them in parallel.
cuact_add_test(NAME gpu_forward KIND gpu SOURCES gpu_forward.cu)
cuact_add_test(NAME gpu_backward KIND gpu SOURCES gpu_backward.cu gpu_mask.cu)
cuact_add_test(NAME gpu_transform KIND gpu SOURCES gpu_transform.cu)
cuact_add_test(NAME gpu_threads KIND gpu SOURCES gpu_threads.cu)
cuact_add_test(NAME gpu_errors KIND gpu SOURCES gpu_errors.cu)
cuact_add_test(NAME gpu_fuzz KIND gpu SOURCES gpu_fuzz.cu)
# 2^31 + 7 elements, ~9 GB of device memory: its own name so it can be run (or left out) alone.
cuact_add_test(NAME gpu_large KIND gpu SOURCES gpu_large.cu)
cuact_add_test(NAME cpu_fuzz KIND cpu SOURCES cpu_fuzz.cu)
set_tests_properties(gpu_forward gpu_backward gpu_transform gpu_threads gpu_errors PROPERTIES TIMEOUT 600)
set_tests_properties(gpu_fuzz gpu_large cpu_fuzz PROPERTIES TIMEOUT 600)
cuact_add_test(NAME gpu_fused KIND gpu SOURCES gpu_fused.cu)
cuact_add_test(NAME gpu_gate KIND gpu SOURCES gpu_gate.cu)
cuact_add_test(NAME gpu_accuracy KIND gpu SOURCES gpu_accuracy.cu)
# Tabulated bf16 forwards (detail/kernels/table.cuh) bit for bit against the direct path.
cuact_add_test(NAME gpu_table KIND gpu SOURCES gpu_table.cu)
cuact_add_test(NAME gpu_table_choice KIND gpu SOURCES gpu_table_choice.cu)
# Bulk tiles (detail/kernels/bulk_tile.cuh) launched directly on odd grids, against the reference.
cuact_add_test(NAME gpu_bulk KIND gpu SOURCES gpu_bulk.cu)
# cuact::scoped_policy: forced policies give the bits of select_policy's launch.
cuact_add_test(NAME gpu_policy KIND gpu SOURCES gpu_policy.cu)
