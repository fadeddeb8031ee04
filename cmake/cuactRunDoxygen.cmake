# cmake -DDOXYGEN=... -DDOXYFILE=... -DWARNINGS=... -P cuactRunDoxygen.cmake
# Runs Doxygen, prints every warning (Doxygen's WARN_LOGFILE) with a count, and fails when there
# is any. Doxygen's own exit status (WARN_AS_ERROR=FAIL_ON_WARNINGS) is checked too, so that a
# problem Doxygen does not write to the log still fails.
file(REMOVE ${WARNINGS})
execute_process(COMMAND ${DOXYGEN} ${DOXYFILE} RESULT_VARIABLE status)
set(warnings "")
if(EXISTS ${WARNINGS})
  file(READ ${WARNINGS} warnings)
  string(STRIP "${warnings}" warnings)
endif()
if(warnings)
  # One entry per "file:line: warning|error: text" line (continuation lines are not counted).
  string(REGEX MATCHALL "[^\n]*:[0-9]+: (warning|error): " entries "${warnings}")
  list(LENGTH entries count)
  message("${warnings}")
  message(FATAL_ERROR "cuact_docs: ${count} Doxygen warning(s) (full list above, and in "
                      "${WARNINGS}): document every public entity in include/cuact, or move it "
                      "to a namespace detail")
endif()
if(NOT status EQUAL 0)
  message(FATAL_ERROR "cuact_docs: doxygen failed (exit ${status})")
endif()
