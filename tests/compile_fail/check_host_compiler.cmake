# Compiles a .cpp that includes each public cuact header with a host-only C++ compiler (no
# __CUDACC__) and checks that each fails with cuact's #error; version.cuh, plain macros, must
# compile. Run by CTest as
#   cmake -DCOMPILER=<c++ compiler> -DINCLUDE_DIR=... -DWORK_DIR=... -P check_host_compiler.cmake
cmake_minimum_required(VERSION 3.24)
foreach(var COMPILER INCLUDE_DIR WORK_DIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "check_host_compiler.cmake: -D${var}=... is required")
  endif()
endforeach()

set(expected "cuact's headers need nvcc (or clang CUDA)")
# The headers a user includes; torch.cuh and torch_fused.cuh start with ATen's headers, which a
# plain C++ compiler cannot find here, so they are left out.
set(rejected cuact.cuh activation.cuh activations.cuh forward.cuh backward.cuh elementwise.cuh
             fused.cuh relu_mask.cuh rtc.cuh transform.cuh error.cuh)
file(MAKE_DIRECTORY "${WORK_DIR}")

function(compile header result output)
  string(MAKE_C_IDENTIFIER "${header}" stem)
  set(source "${WORK_DIR}/host_${stem}.cpp")
  file(WRITE "${source}" "#include <cuact/${header}>\nint main() { return 0; }\n")
  execute_process(COMMAND "${COMPILER}" -std=c++17 "-I${INCLUDE_DIR}" -fsyntax-only "${source}"
                  RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE out)
  set(${result} "${status}" PARENT_SCOPE)
  set(${output} "${out}" PARENT_SCOPE)
endfunction()

set(failures "")
foreach(header IN LISTS rejected)
  if(NOT EXISTS "${INCLUDE_DIR}/cuact/${header}")
    list(APPEND failures "${header}: no such header")
    continue()
  endif()
  compile(${header} status out)
  if(status EQUAL 0)
    list(APPEND failures "${header}: compiled with ${COMPILER}, but must fail with: ${expected}")
  else()
    string(FIND "${out}" "${expected}" at)
    if(at EQUAL -1)
      list(APPEND failures "${header}: failed without \"${expected}\":\n${out}")
    endif()
  endif()
endforeach()
compile(version.cuh status out)
if(NOT status EQUAL 0)
  list(APPEND failures "version.cuh must compile with a host-only compiler:\n${out}")
endif()

if(failures)
  list(JOIN failures "\n" text)
  message(FATAL_ERROR "${text}")
endif()
list(LENGTH rejected count)
message(STATUS "${count} headers rejected ${COMPILER} with \"${expected}\"; version.cuh compiled")
