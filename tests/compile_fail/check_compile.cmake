# Compiles one source file and checks the outcome. Run by CTest as
#   cmake -DCOMPILER=... -DSOURCE=... -DINCLUDE_DIR=... -DOBJECT=... [-DHOST_COMPILER=...]
#         [-DARCH=90] -P check_compile.cmake
#
# The expectation lives in the source file itself, one line per required diagnostic:
#   // EXPECT-ERROR: text that the compiler's output must contain
# With one or more such lines the compile must fail and every text must appear in its output
# (plain substring match, so backticks and brackets in static_assert messages need no escaping).
# Without any, the file is a positive control and must compile. `// FLAGS: -Werror all-warnings`
# adds flags to the compile.
cmake_minimum_required(VERSION 3.24)
include("${CMAKE_CURRENT_LIST_DIR}/../nvcc_script.cmake")

cuact_script_arguments(check_compile.cmake COMPILER SOURCE INCLUDE_DIR OBJECT)

file(STRINGS "${SOURCE}" expect_lines REGEX "^// EXPECT-ERROR: ")
set(expected "")
foreach(line IN LISTS expect_lines)
  string(REGEX REPLACE "^// EXPECT-ERROR: " "" text "${line}")
  list(APPEND expected "${text}")
endforeach()

# `// FLAGS: ...` lines add compiler flags (a positive control that must compile warning-free).
file(STRINGS "${SOURCE}" flag_lines REGEX "^// FLAGS: ")
set(flags "")
foreach(line IN LISTS flag_lines)
  string(REGEX REPLACE "^// FLAGS: " "" text "${line}")
  separate_arguments(text UNIX_COMMAND "${text}")
  list(APPEND flags ${text})
endforeach()

# Real host + device compilation (cudafe, cicc, ptxas, host compiler) for one architecture.
cuact_nvcc_command(command "${SOURCE}" "${OBJECT}" ${flags})

string(TIMESTAMP start "%s")
execute_process(COMMAND ${command} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE out)
string(TIMESTAMP stop "%s")
math(EXPR seconds "${stop} - ${start}")
file(REMOVE "${OBJECT}")

list(JOIN command " " command_line)
if(NOT expected)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "positive control failed to compile (exit ${status}); every compile_fail "
                        "result is suspect.\n${command_line}\n${out}")
  endif()
  message(STATUS "compiled as expected (${seconds} s)")
  return()
endif()

if(status EQUAL 0)
  message(FATAL_ERROR "compiled, but must fail with: ${expected}\n${command_line}\n${out}")
endif()
set(missing "")
foreach(text IN LISTS expected)
  string(FIND "${out}" "${text}" at)
  if(at EQUAL -1)
    list(APPEND missing "${text}")
  endif()
endforeach()
if(missing)
  message(FATAL_ERROR "failed to compile (exit ${status}), but the output lacks: ${missing}\n"
                      "${command_line}\n${out}")
endif()
message(STATUS "failed to compile as expected (exit ${status}, ${seconds} s), with: ${expected}")
