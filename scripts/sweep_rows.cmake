# Reads the JSON object a matrix-multiply stage prints with --json (one line, written by
# common/report.cpp) with CMake's own JSON parser, and prints the one line scripts/sweep.sh needs:
#
#   result|rate|pct_yardstick|yardstick_rate|inputs
#
# result is the stage's verdict (PASS, FAIL, UNCHECKED); rate and pct_yardstick are those of the
# stage's headline variant (its own kernel: GFLOP/s and % of cuBLAS measured in the same process);
# yardstick_rate is the GFLOP/s of the variant marked "yardstick" (cuBLAS). A null or missing
# number prints as '-'. inputs is the element type of A and B: "bf16" where the report says so
# (the tensor-core stages, whose yardstick is cuBLAS in bf16), else "fp32". Anything but such a report is an error: exit status 1, the message on stderr.
#
# Usage: cmake -D "JSON=<the line>" -P scripts/sweep_rows.cmake
cmake_minimum_required(VERSION 3.25)

if(NOT DEFINED JSON)
  message(FATAL_ERROR "usage: cmake -D \"JSON=<a stage's --json line>\" -P sweep_rows.cmake")
endif()

# get(<out> <key or index>...): the value at that path, '-' when null or empty; a missing key is an error.
function(get out)
  string(JSON value ERROR_VARIABLE error GET "${JSON}" ${ARGN})
  if(error)
    message(FATAL_ERROR "sweep_rows.cmake: not a stage report: ${error}")
  endif()
  if(value STREQUAL "")
    set(value "-")
  endif()
  set(${out} "${value}" PARENT_SCOPE)
endfunction()

get(result result)
get(headline headline)
string(JSON count ERROR_VARIABLE error LENGTH "${JSON}" variants)
if(error)
  message(FATAL_ERROR "sweep_rows.cmake: not a stage report: ${error}")
elseif(count EQUAL 0)
  message(FATAL_ERROR "sweep_rows.cmake: no variants in the report")
endif()

# Walk the variants: the headline one gives the stage's figures, the yardstick one cuBLAS's.
set(rate "-")
set(pct_yardstick "-")
set(yardstick_rate "-")
math(EXPR last "${count} - 1")
foreach(index RANGE ${last})
  get(name variants ${index} name)
  get(is_yardstick variants ${index} yardstick) # a JSON boolean reads as ON or OFF
  if(is_yardstick)
    get(yardstick_rate variants ${index} rate)
  elseif(name STREQUAL headline)
    get(rate variants ${index} rate)
    get(pct_yardstick variants ${index} pct_yardstick)
  endif()
endforeach()

string(JSON inputs ERROR_VARIABLE no_inputs GET "${JSON}" inputs)
if(no_inputs)
  set(inputs fp32)
endif()

# message() writes to stderr; the line goes to stdout.
execute_process(COMMAND "${CMAKE_COMMAND}" -E echo "${result}|${rate}|${pct_yardstick}|${yardstick_rate}|${inputs}")
