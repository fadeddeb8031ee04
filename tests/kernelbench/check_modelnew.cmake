# Compiles the CUDA source of one KernelBench ModelNew file (examples/kernelbench/*.py) against
# cuact's headers, with stub/ standing in for torch's headers. Run by CTest as
#   cmake -DCOMPILER=... -DMODELNEW=file.py -DINCLUDE_DIR=... -DSTUB_DIR=... -DWORK_DIR=...
#         [-DHOST_COMPILER=...] [-DARCH=90] -P check_modelnew.cmake
#
# The source is the file's `cuda_source = r"""..."""` string, which load_inline compiles on a
# machine with torch; here it is written to WORK_DIR/<name>.cu and compiled (host and device, one
# architecture, warnings as errors), so that a change to cuact's public API that would break a
# ModelNew file fails in CI, where torch and KernelBench are not available.
cmake_minimum_required(VERSION 3.24)
include("${CMAKE_CURRENT_LIST_DIR}/../nvcc_script.cmake")

cuact_script_arguments(check_modelnew.cmake COMPILER MODELNEW INCLUDE_DIR STUB_DIR WORK_DIR)

file(READ "${MODELNEW}" text)
set(opening "cuda_source = r\"\"\"")
string(FIND "${text}" "${opening}" begin)
if(begin EQUAL -1)
  message(FATAL_ERROR "${MODELNEW}: no ${opening}...\"\"\" string")
endif()
string(LENGTH "${opening}" opening_length)
math(EXPR begin "${begin} + ${opening_length}")
string(SUBSTRING "${text}" ${begin} -1 rest)
string(FIND "${rest}" "\"\"\"" length)
if(length EQUAL -1)
  message(FATAL_ERROR "${MODELNEW}: cuda_source's string is not closed")
endif()
string(SUBSTRING "${rest}" 0 ${length} source)

get_filename_component(name "${MODELNEW}" NAME_WE)
file(MAKE_DIRECTORY "${WORK_DIR}")
set(cu "${WORK_DIR}/${name}.cu")
set(object "${WORK_DIR}/${name}.o")
file(WRITE "${cu}" "${source}")

cuact_nvcc_command(command "${cu}" "${object}" -O3 -Werror all-warnings -Xcompiler=-Wall,-Wextra
                   "-I${STUB_DIR}")
execute_process(COMMAND ${command} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE out)
file(REMOVE "${object}")
if(NOT status EQUAL 0)
  list(JOIN command " " command_line)
  message(FATAL_ERROR "${name}'s cuda_source does not compile (exit ${status}):\n${command_line}\n"
                      "${out}")
endif()
message(STATUS "${name}: cuda_source compiled")
