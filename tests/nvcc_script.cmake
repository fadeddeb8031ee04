# What the compile-checking scripts run by CTest with `cmake -P` share
# (compile_fail/check_compile.cmake, kernelbench/check_modelnew.cmake): their required -D
# arguments, ARCH's default and the nvcc command line.

# Fails, naming `script`, unless every variable after it was given with -D; ARCH defaults to 90.
macro(cuact_script_arguments script)
  foreach(var ${ARGN})
    if(NOT DEFINED ${var})
      message(FATAL_ERROR "${script}: -D${var}=... is required")
    endif()
  endforeach()
  if(NOT DEFINED ARCH)
    set(ARCH 90)
  endif()
endmacro()

# Sets `out` to the command that compiles `source` to `object` with COMPILER (host and device
# code for one architecture, sm_${ARCH}): the flags after `object`, then -I INCLUDE_DIR, and
# HOST_COMPILER as -ccbin where it is given.
function(cuact_nvcc_command out source object)
  set(command "${COMPILER}" -std=c++17 "-arch=sm_${ARCH}" ${ARGN} "-I${INCLUDE_DIR}" -c "${source}"
              -o "${object}")
  if(HOST_COMPILER)
    list(APPEND command -ccbin "${HOST_COMPILER}")
  endif()
  set(${out} "${command}" PARENT_SCOPE)
endfunction()
