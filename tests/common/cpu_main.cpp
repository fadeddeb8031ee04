// Catch2 main for CPU tests (Catch2 v3 or v2: see catch.hpp).
#define CATCH_CONFIG_RUNNER
#include "catch.hpp"

int main(int argc, char* argv[]) { return cuact_catch_run(argc, argv); }
