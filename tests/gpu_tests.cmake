# GPU tests (label gpu; without a device they print SKIPPED and exit 77, which CTest reports as
# Skipped): being ported to the new engine.
