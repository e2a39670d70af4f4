# Helpers every stage's CMakeLists.txt uses to declare its executable and its tests.
#
# Conventions:
#   label cpu        runs anywhere (stage 01, unit tests, command-line rejection tests)
#   label gpu        needs a GPU; exit code 77 (no usable GPU) makes CTest report it skipped
#   label sanitizer  compute-sanitizer memcheck/racecheck/synccheck runs (only registered when
#                    compute-sanitizer is found); also skipped without a GPU

find_program(CUDA_STAGES_COMPUTE_SANITIZER compute-sanitizer HINTS "${CUDAToolkit_BIN_DIR}")
set(CUDA_STAGES_NO_GPU_REGEX "SKIP: no usable CUDA GPU")

# cs_add_stage_executable(<target> <source>): a stage program, run by the tour.
function(cs_add_stage_executable target source)
  add_executable(${target} ${source})
  set_property(GLOBAL APPEND PROPERTY CUDA_STAGES_EXECUTABLES ${target})
endfunction()

# cs_add_run_test(<name> <target> [GPU] [ARGS args...] [PASS_REGEX regex]): runs the stage; it
# passes when the stage exits 0 (every verified variant matched the reference).
function(cs_add_run_test name target)
  cmake_parse_arguments(ARG "GPU" "PASS_REGEX" "ARGS" ${ARGN})
  add_test(NAME ${name} COMMAND ${target} ${ARG_ARGS})
  if(ARG_GPU)
    set_tests_properties(${name} PROPERTIES LABELS gpu SKIP_RETURN_CODE 77
                         SKIP_REGULAR_EXPRESSION "${CUDA_STAGES_NO_GPU_REGEX}")
  else()
    set_tests_properties(${name} PROPERTIES LABELS cpu)
  endif()
  if(ARG_PASS_REGEX)
    set_tests_properties(${name} PROPERTIES PASS_REGULAR_EXPRESSION "${ARG_PASS_REGEX}")
  endif()
endfunction()

# cs_add_bad_input_tests(<target> [EXTRA "arg|arg" ...]): the inputs every stage must reject
# with exit code 2, one line `error: ...` on stderr and nothing on stdout, before any GPU work
# (so these run, and pass, on machines without a GPU). Arguments of one case are joined by '|'.
function(cs_add_bad_input_tests target)
  cmake_parse_arguments(ARG "" "" "EXTRA" ${ARGN})
  set(cases "--size|0" "--size|-5" "--size|abc" "--size|65537" "--size=" "--m|1.5" "--k|1e3"
            "--n|99999999999999999999999" "--bogus" "--reps" "--reps|0" "--check|maybe"
            "--seed|-1" "--json=1" "stray" ${ARG_EXTRA})
  set(index 0)
  foreach(case IN LISTS cases)
    math(EXPR index "${index} + 1")
    add_test(NAME ${target}.bad_input.${index}
             COMMAND ${CMAKE_COMMAND} "-DPROGRAM=$<TARGET_FILE:${target}>" "-DARGS=${case}"
                     -P "${PROJECT_SOURCE_DIR}/tests/expect_bad_input.cmake")
    set_tests_properties(${target}.bad_input.${index} PROPERTIES LABELS "cpu;cli")
  endforeach()
  add_test(NAME ${target}.help COMMAND ${target} --help)
  set_tests_properties(${target}.help PROPERTIES LABELS "cpu;cli"
                       PASS_REGULAR_EXPRESSION "usage: ${target}.*--seed N.*default: 2024")
endfunction()

# cs_add_sanitizer_tests(<target> args...): memcheck, racecheck and synccheck on the stage with
# these arguments; any reported error, or any racecheck hazard (errors and warnings alike), fails
# the test.
function(cs_add_sanitizer_tests target)
  if(NOT CUDA_STAGES_COMPUTE_SANITIZER)
    return()
  endif()
  foreach(tool memcheck racecheck synccheck)
    set(extra "")
    if(tool STREQUAL "memcheck")
      set(extra --leak-check full)
    endif()
    add_test(NAME ${target}.sanitizer.${tool}
             COMMAND "${CUDA_STAGES_COMPUTE_SANITIZER}" --tool ${tool} ${extra} --error-exitcode 1
                     $<TARGET_FILE:${target}> ${ARGN})
    set_tests_properties(${target}.sanitizer.${tool} PROPERTIES
      LABELS sanitizer SKIP_RETURN_CODE 77 SKIP_REGULAR_EXPRESSION "${CUDA_STAGES_NO_GPU_REGEX}"
      FAIL_REGULAR_EXPRESSION "ERROR SUMMARY: [1-9]|RACECHECK SUMMARY: [1-9]")
  endforeach()
endfunction()
