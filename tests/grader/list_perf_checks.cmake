# Prints the course lab's performance checks (perf_checks.cmake), one line each, fields separated by
# tabs: name, minimum speed-up, fast target, fast variant, its arguments, slow target, slow variant.
# scripts/make_lab.sh lists them in the lab's README.md from this. Usage: cmake -P list_perf_checks.cmake
cmake_minimum_required(VERSION 3.25)
function(cs_perf_check name)
  cmake_parse_arguments(ARG "" "MIN" "FAST;SLOW" ${ARGN})
  list(POP_FRONT ARG_FAST fast_target fast_variant)
  list(LENGTH ARG_SLOW slow_items)
  if(slow_items EQUAL 1)
    set(slow_target ${fast_target})
    set(slow_variant ${ARG_SLOW})
  else()
    list(POP_FRONT ARG_SLOW slow_target slow_variant)
  endif()
  list(JOIN ARG_FAST " " fast_args)
  execute_process(COMMAND "${CMAKE_COMMAND}" -E echo
                  "${name}\t${ARG_MIN}\t${fast_target}\t${fast_variant}\t${fast_args}\t${slow_target}\t${slow_variant}")
endfunction()
include("${CMAKE_CURRENT_LIST_DIR}/perf_checks.cmake")
