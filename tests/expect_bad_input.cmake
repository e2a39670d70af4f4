# Runs PROGRAM with ARGS ('|'-separated) and requires what every stage promises for bad input:
# exit code 2, exactly one line on stderr starting with "error: ", and nothing on stdout.
string(REPLACE "|" ";" args "${ARGS}")
execute_process(COMMAND "${PROGRAM}" ${args}
                RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT code EQUAL 2)
  message(FATAL_ERROR "args '${ARGS}': expected exit code 2, got '${code}'\nstdout:\n${out}\nstderr:\n${err}")
endif()
if(NOT err MATCHES "^error: [^\n]+\n$")
  message(FATAL_ERROR "args '${ARGS}': expected one 'error: ...' line on stderr, got:\n${err}")
endif()
if(NOT out STREQUAL "")
  message(FATAL_ERROR "args '${ARGS}': expected nothing on stdout, got:\n${out}")
endif()
message(STATUS "args '${ARGS}' rejected as expected: ${err}")
