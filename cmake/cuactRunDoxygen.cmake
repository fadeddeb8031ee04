# cmake -DDOXYGEN=... -DDOXYFILE=... -DWARNINGS=... -P cuactRunDoxygen.cmake
# Runs Doxygen, prints every warning (one per line, paths relative to the source tree) with a
# count, and fails when there is any: Doxygen's own WARN_AS_ERROR=FAIL_ON_WARNINGS exit status is
# checked too, so that a warning Doxygen does not write to the log file still fails.
file(REMOVE ${WARNINGS})
execute_process(COMMAND ${DOXYGEN} ${DOXYFILE} RESULT_VARIABLE status)
set(warnings "")
if(EXISTS ${WARNINGS})
  file(READ ${WARNINGS} warnings)
  string(STRIP "${warnings}" warnings)
endif()
if(warnings)
  string(REGEX MATCHALL "(^|\n)[^\n ][^\n]*: warning:" entries "${warnings}")
  list(LENGTH entries count)
  message("${warnings}")
  message(FATAL_ERROR "cuact_docs: ${count} Doxygen warning(s) (full list above; document every "
                      "public entity in include/cuact, or move it to namespace detail)")
endif()
if(NOT status EQUAL 0)
  message(FATAL_ERROR "cuact_docs: doxygen failed (exit ${status})")
endif()
