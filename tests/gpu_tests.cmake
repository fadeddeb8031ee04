# GPU tests (label gpu; without a device they print SKIPPED and exit 77, which CTest reports as
# Skipped): being ported to the new engine.
cuact_add_test(NAME gpu_fused KIND gpu SOURCES gpu_fused.cu)
