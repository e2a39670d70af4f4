# Reads the JSON object a stage prints with --json (one line, written by common/report.cpp) with
# CMake's own JSON parser, and prints one line per variant, its fields separated by '|':
#
#   stage|sizes|unit|yardstick|headline|result|variant|what|median_ms|rate|pct_peak|pct_yardstick|check|library
#
# (library: "true" on the library's own variant, the yardstick the others are measured against).
# Usage: cmake -D "JSON=<the line>" -P scripts/read_report.cmake
# (scripts/tour.sh and the lab's performance checks, tests/grader/perf_ratio.sh, read reports so).
# A null or empty value prints as '-', and a '|' inside a text as '/'. Numbers print as the parser
# holds them, to 17 significant digits (147.2 prints as 147.19999999999999): format them to show
# them. Anything but such an object is an error: exit status 1, the parser's message on stderr.
cmake_minimum_required(VERSION 3.25)

if(NOT DEFINED JSON)
  message(FATAL_ERROR "usage: cmake -D \"JSON=<a stage's --json line>\" -P read_report.cmake")
endif()

# field(<out> <key or index>...): the value at that path in the report, '-' when null or empty.
function(field out)
  string(JSON value ERROR_VARIABLE error GET "${JSON}" ${ARGN})
  if(error)
    message(FATAL_ERROR "read_report.cmake: not a stage report: ${error}")
  endif()
  if(value STREQUAL "")
    set(value "-")
  endif()
  string(REPLACE "|" "/" value "${value}")
  set(${out} "${value}" PARENT_SCOPE)
endfunction()

# The stage's own fields, repeated on every line so that each line stands alone.
set(stage_fields "")
foreach(key stage sizes unit yardstick headline result)
  field(value ${key})
  string(APPEND stage_fields "${value}|")
endforeach()

string(JSON count ERROR_VARIABLE error LENGTH "${JSON}" variants)
if(error OR count EQUAL 0)
  message(FATAL_ERROR "read_report.cmake: no variants in the report ${error}")
endif()
math(EXPR last "${count} - 1")
set(lines "")
foreach(index RANGE ${last})
  set(line "${stage_fields}")
  set(separator "")
  foreach(key name what median_ms rate pct_peak pct_yardstick check)
    field(value variants ${index} ${key})
    string(APPEND line "${separator}${value}")
    set(separator "|")
  endforeach()
  field(library variants ${index} yardstick) # a JSON boolean: ON or OFF here
  if(library)
    string(APPEND lines "${line}|true\n")
  else()
    string(APPEND lines "${line}|false\n")
  endif()
endforeach()
# message() writes to stderr; the lines go to stdout.
execute_process(COMMAND "${CMAKE_COMMAND}" -E echo_append "${lines}")
