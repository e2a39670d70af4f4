# Helpers every stage's CMakeLists.txt uses to declare its executable and its tests.
#
# Conventions:
#   label cpu        runs anywhere (stage 01, unit tests, command-line rejection tests)
#   label gpu        needs a GPU; exit code 77 (no usable GPU) makes CTest report it skipped
#   label sanitizer  compute-sanitizer memcheck/racecheck/synccheck runs (only registered when
#                    compute-sanitizer is found); also skipped without a GPU

find_program(CUDA_STAGES_COMPUTE_SANITIZER compute-sanitizer HINTS "${CUDAToolkit_BIN_DIR}")
if(NOT CUDA_STAGES_COMPUTE_SANITIZER)
  # Said at configure time, since `ctest -L sanitizer` then finds no test and exits 0.
  message(NOTICE "cuda-stages: compute-sanitizer not found: the sanitizer tests (label sanitizer) are not\n"
                 "  registered, and `ctest -L sanitizer` finds none. Install compute-sanitizer (part of the\n"
                 "  CUDA toolkit), or pass -DCUDA_STAGES_COMPUTE_SANITIZER=/path/to/compute-sanitizer.")
endif()
set(CUDA_STAGES_NO_GPU_REGEX "SKIP: no usable CUDA GPU")
# The tests of more than 2^31 elements hold about 9 GB of host memory each (the dot product's 17):
# this machine runs at most one per 16 GiB of its memory at once (at least one, at most eight),
# each test on one of that many locks (RESOURCE_LOCK), taken in turn. Each counts as one core: were
# it to count as two, it would wait for two free at once, and on a fresh build of 16 cores that
# came only near the end (2026-11-28: the last of them started 104 s into a run of 118).
cmake_host_system_information(RESULT CUDA_STAGES_HOST_MEMORY_MIB QUERY TOTAL_PHYSICAL_MEMORY)
math(EXPR CUDA_STAGES_LARGE_TEST_LOCKS "${CUDA_STAGES_HOST_MEMORY_MIB} / 16384")
if(CUDA_STAGES_LARGE_TEST_LOCKS LESS 1)
  set(CUDA_STAGES_LARGE_TEST_LOCKS 1)
elseif(CUDA_STAGES_LARGE_TEST_LOCKS GREATER 8)
  set(CUDA_STAGES_LARGE_TEST_LOCKS 8)
endif()
set_property(GLOBAL PROPERTY CUDA_STAGES_LARGE_TESTS 0)

# cs_large_tests(<test>...): tests of more than 2^31 elements. Each takes the next of the
# CUDA_STAGES_LARGE_TEST_LOCKS locks, and a COST that starts it before the short tests on a fresh
# build (CTest runs the costliest first, and only knows the times from a run before): begun last, a
# few of them would run on after every other test had finished.
function(cs_large_tests)
  foreach(test IN LISTS ARGN)
    get_property(count GLOBAL PROPERTY CUDA_STAGES_LARGE_TESTS)
    math(EXPR lock "${count} % ${CUDA_STAGES_LARGE_TEST_LOCKS}")
    math(EXPR count "${count} + 1")
    set_property(GLOBAL PROPERTY CUDA_STAGES_LARGE_TESTS ${count})
    set_tests_properties(${test} PROPERTIES RESOURCE_LOCK cuda_stages_large_${lock} COST 20)
  endforeach()
endfunction()

# cs_long_tests(<test>...): tests of 15 s or more (every instance of a kernel over a dozen sizes, a
# sanitizer over several instances): a COST that starts them among the first on a fresh build too;
# begun last, they ran on alone for the test command's last 20 s. A test not defined here (a
# sanitizer's, without compute-sanitizer) is passed over.
function(cs_long_tests)
  foreach(test IN LISTS ARGN)
    if(TEST ${test})
      set_tests_properties(${test} PROPERTIES COST 25)
    endif()
  endforeach()
endfunction()

# cs_add_stage_executable(<target> <source>): a stage program, run by the tour.
function(cs_add_stage_executable target source)
  add_executable(${target} ${source})
  set_property(GLOBAL APPEND PROPERTY CUDA_STAGES_EXECUTABLES ${target})
endfunction()

# cs_require_architecture(<target> <min>): builds <target> only for the targeted GPU architectures at
# or above <min> (80 = compute capability 8.0), since its kernels use instructions older GPUs lack.
# "native" stands for this machine's GPUs. When no targeted architecture is that new, it is built for
# <min> alone, so that it still compiles (CI, and a build for an older GPU); the program then finds
# the older GPU and exits 77 with a line that names both capabilities.
# An architecture-specific <min> (the "a" suffix, e.g. 90a: sm_90a's wgmma and setmaxnreg) has code
# that runs on that one capability and on no later GPU, so <target> is built for it alone, whatever
# else is targeted: on a machine without a GPU too (CI compiles it), and on any other GPU the program
# finds another capability and exits 77. Such stages are listed in the global property
# CUDA_STAGES_NEED_AN_ARCHITECTURE: on a GPU they cannot use, their tests are skipped, not failed.
# Their compiles go through scripts/ptxas_guard.sh, which fails on ptxas's "Potential Performance
# Loss" reports (a serialized wgmma pipeline, an ignored setmaxnreg).
function(cs_require_architecture target min)
  set_property(GLOBAL APPEND PROPERTY CUDA_STAGES_NEED_AN_ARCHITECTURE ${target})
  if(min MATCHES "a$")
    set_property(TARGET ${target} PROPERTY CUDA_ARCHITECTURES ${min})
    # ptxas reports a wgmma pipeline it had to serialize only as "info"; the build fails on it
    # instead (scripts/ptxas_guard.sh), so that no change brings the slow path back silently.
    set_property(TARGET ${target} PROPERTY CUDA_COMPILER_LAUNCHER bash "${PROJECT_SOURCE_DIR}/scripts/ptxas_guard.sh")
    return()
  endif()
  set(targeted ${CMAKE_CUDA_ARCHITECTURES})
  if(targeted STREQUAL "native")
    set(targeted ${CUDA_STAGES_NATIVE_ARCHITECTURES})
  endif()
  set(kept "")
  foreach(arch IN LISTS targeted)
    if(arch MATCHES "^([0-9]+)" AND CMAKE_MATCH_1 GREATER_EQUAL ${min})
      list(APPEND kept ${arch})
    endif()
  endforeach()
  if(NOT kept)
    set(kept ${min})
  endif()
  set_property(TARGET ${target} PROPERTY CUDA_ARCHITECTURES ${kept})
endfunction()

# cs_lab_gate(<test> <target>...): in a lab (scripts/make_lab.sh switches CUDA_STAGES_LAB_PERF on), a
# GPU test of a stage runs only once the stage's sources hold no `TODO(lab ...)` line: a kernel with
# a step left out can wait forever on a barrier that nothing arrives at, and the grader would hang.
# <target>.written (label cpu;lab) checks that and names each TODO left; while it fails, CTest
# reports the stage's GPU tests "Not Run". In a lab a GPU test also fails after
# CUDA_STAGES_LAB_GPU_TIMEOUT seconds, for a step written so that a barrier never completes.
set(CUDA_STAGES_LAB_GPU_TIMEOUT 300 CACHE STRING "Seconds a GPU test of a lab may run before it fails")
function(cs_lab_gate test)
  if(NOT CUDA_STAGES_LAB_PERF)
    return()
  endif()
  foreach(target IN LISTS ARGN)
    get_property(gated GLOBAL PROPERTY CUDA_STAGES_LAB_GATED)
    if(NOT target IN_LIST gated)
      set_property(GLOBAL APPEND PROPERTY CUDA_STAGES_LAB_GATED ${target})
      get_target_property(dir ${target} SOURCE_DIR)
      file(GLOB sources "${dir}/*.cu" "${dir}/*.cuh" "${dir}/*.cpp")
      add_test(NAME ${target}.written
               COMMAND bash "${PROJECT_SOURCE_DIR}/tests/grader/todos_left.sh"
                       "${target}: its GPU tests run once each TODO above is written (a kernel with a step left out can wait forever)"
                       ${sources})
      set_tests_properties(${target}.written PROPERTIES LABELS "cpu;lab" FIXTURES_SETUP lab_written_${target})
    endif()
    set_property(TEST ${test} APPEND PROPERTY FIXTURES_REQUIRED lab_written_${target})
  endforeach()
  set_tests_properties(${test} PROPERTIES TIMEOUT ${CUDA_STAGES_LAB_GPU_TIMEOUT})
endfunction()

# cs_add_run_test(<name> <target> [GPU] [ARGS args...] [PASS_REGEX regex | CAUGHT_REGEX regex]):
# runs the stage; it passes when the stage exits 0 (every verified variant matched the reference)
# and, with PASS_REGEX, its output also matches the regex (tests/run_matching.sh: CTest's
# PASS_REGULAR_EXPRESSION alone would let a run whose check failed pass on its launch or plan line).
# CAUGHT_REGEX is for a broken copy (tests/broken): it passes when the output matches, whatever the
# exit code (not 0 then), so that a failure the regex does not name (a crash) is not taken as caught.
function(cs_add_run_test name target)
  cmake_parse_arguments(ARG "GPU" "PASS_REGEX;CAUGHT_REGEX" "ARGS" ${ARGN})
  if(ARG_PASS_REGEX)
    add_test(NAME ${name} COMMAND bash "${PROJECT_SOURCE_DIR}/tests/run_matching.sh" "${ARG_PASS_REGEX}"
                                  $<TARGET_FILE:${target}> ${ARG_ARGS})
  else()
    add_test(NAME ${name} COMMAND ${target} ${ARG_ARGS})
  endif()
  if(ARG_GPU)
    set_tests_properties(${name} PROPERTIES LABELS gpu SKIP_RETURN_CODE 77
                         SKIP_REGULAR_EXPRESSION "${CUDA_STAGES_NO_GPU_REGEX}")
    cs_lab_gate(${name} ${target})
  else()
    set_tests_properties(${name} PROPERTIES LABELS cpu)
  endif()
  if(ARG_CAUGHT_REGEX)
    set_tests_properties(${name} PROPERTIES PASS_REGULAR_EXPRESSION "${ARG_CAUGHT_REGEX}")
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

# cs_add_sanitizer_tests(<target> [AS <prefix>] args...): memcheck, racecheck and synccheck on the
# stage with these arguments, tests <target>.sanitizer.<tool> (or <prefix>.sanitizer.<tool>, for a
# second set on the same stage); any reported error, or any racecheck hazard (errors and warnings
# alike), fails the test.
function(cs_add_sanitizer_tests target)
  if(NOT CUDA_STAGES_COMPUTE_SANITIZER)
    return()
  endif()
  set(args ${ARGN})
  set(prefix ${target})
  if(args AND args MATCHES "^AS;")
    list(POP_FRONT args as prefix)
  endif()
  foreach(tool memcheck racecheck synccheck)
    set(extra "")
    if(tool STREQUAL "memcheck")
      set(extra --leak-check full)
    endif()
    add_test(NAME ${prefix}.sanitizer.${tool}
             COMMAND "${CUDA_STAGES_COMPUTE_SANITIZER}" --tool ${tool} ${extra} --error-exitcode 1
                     $<TARGET_FILE:${target}> ${args})
    set_tests_properties(${prefix}.sanitizer.${tool} PROPERTIES
      LABELS sanitizer SKIP_RETURN_CODE 77 SKIP_REGULAR_EXPRESSION "${CUDA_STAGES_NO_GPU_REGEX}"
      FAIL_REGULAR_EXPRESSION "ERROR SUMMARY: [1-9]|RACECHECK SUMMARY: [1-9]")
    cs_lab_gate(${prefix}.sanitizer.${tool} ${target})
  endforeach()
endfunction()

# cs_add_matmul_tests(<target> [JSON_REGEX regex] [LARGE_B_ROWS n] [LARGE_ALSO MxNxK,...]
#                     [SANITIZER_ALSO MxNxK,...] [SANITIZER_ARGS args...]): the tests every
# matrix-multiply stage runs, whatever its kernel: the default problem (the original tutorial's
# 1000 x 1000 x 1000, a multiple of no tile), 1 x 1 x 1, odd and prime shapes, rectangles thin in
# each direction, the JSON report (its text must also match JSON_REGEX when given),
# compute-sanitizer at a small odd size, and matrices of more than 2^31 elements (64-bit offsets,
# and the sampled check). LARGE_B_ROWS: B's large problem has n x n elements with this n instead of 46341 (46344,
# a multiple of 8, or 46400, of 64), for a stage whose aligned path needs it more (the odd rows are
# then left to C's large problem, the cheaper one). LARGE_ALSO: more problems past 2^31 elements in
# the same process, for a stage whose aligned rows take another path. SANITIZER_ALSO: more sizes the
# sanitizers run in the same process (--also), likewise; SANITIZER_ARGS: options of the stage's own
# for the sanitizer runs. A stage adds the tests of its own options.
#
# A GPU creates its processes' contexts one at a time (about 0.2 s each on the H200 when 16 start
# at once: 160 runs of a stage at 1 x 1 x 1, 16 at a time, take 33 s), so the test command's time
# follows the number of GPU processes more than the work in them: problems that check the same
# thing share a process (--also), each verified as a run of its own, the exit code the worst.
function(cs_add_matmul_tests target)
  cmake_parse_arguments(ARG "" "JSON_REGEX;SANITIZER_ALSO;LARGE_B_ROWS;LARGE_ALSO" "SANITIZER_ARGS" ${ARGN})
  # The stage as a learner first runs it, with no options, then 1 x 1 x 1, a small odd one, a single
  # row, a single column, odd and prime sizes and a square multiple of every tile, each with its JSON
  # report (whose text must match JSON_REGEX too). The sampled check is the one the problems past
  # 2^31 elements take (--check auto), below.
  cs_add_run_test(${target}.shapes ${target} GPU
                  ARGS --also 1x1x1,17x33x9,1x4097x3,257x1x513,1023x517x771,1024x1024x1024 --json
                  PASS_REGEX "\\{\"stage\":\"${target}\".*\"result\":\"PASS\"${ARG_JSON_REGEX}")
  set(sanitizer_also "")
  if(ARG_SANITIZER_ALSO)
    set(sanitizer_also --also ${ARG_SANITIZER_ALSO})
  endif()
  # The sanitizers check the kernels, not their times: --warm-l2 spares them the read of twice the
  # L2 before each timed run (stages 05 and 06 keep it, so that it is checked too).
  cs_add_sanitizer_tests(${target} --m 37 --n 29 --k 53 ${sanitizer_also} ${ARG_SANITIZER_ARGS} --reps 1 --warmup 0
                         --warm-l2)
  # Past 2^31 elements: C with 46341 x 46341 elements (k = 1), then B with 46341 x 46341 (m = 3),
  # then LARGE_ALSO. About 9 GB of device and host memory at a time (each problem frees its own
  # before the next): cs_large_tests keeps CTest from running more than a few at once.
  set(b_rows 46341)
  if(ARG_LARGE_B_ROWS)
    set(b_rows ${ARG_LARGE_B_ROWS})
  endif()
  set(large_also 3x${b_rows}x${b_rows})
  if(ARG_LARGE_ALSO)
    string(APPEND large_also ,${ARG_LARGE_ALSO})
  endif()
  cs_add_run_test(${target}.past_2p31 ${target} GPU
                  ARGS --m 46341 --n 46341 --k 1 --also ${large_also} --reps 1 --warmup 0)
  cs_large_tests(${target}.past_2p31)
endfunction()
