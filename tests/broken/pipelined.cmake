# Stage 11's hazard: a shared-memory buffer of the pipeline overwritten by the next cp.async copy
# while other warps still read it. tests/broken_pipelined.cu holds a copy of stage 11's kernel
# without the barrier of each step; racecheck must report the hazard, and pass the correct copy.
# (Included from tests/broken/CMakeLists.txt.)
add_executable(broken_pipelined "${CMAKE_CURRENT_SOURCE_DIR}/../broken_pipelined.cu")
target_link_libraries(broken_pipelined PRIVATE cuda_stages_cuda)

# The control: the same harness passes the correct copy, so a hazard below is the breakage's.
cs_add_run_test(broken_pipelined.control_passes broken_pipelined GPU ARGS --variant correct)

# A race may or may not corrupt a given run, so the verification is not the test of the broken
# copy: racecheck is. It tracks the cp.async copies into shared memory as writes of the thread that
# started them, and reports each read of another thread's copy, and each copy into a buffer another
# warp still reads, that no barrier orders. At 37 x 29 x 53 (4-byte copies, four k-tiles: the ring
# of 3 goes round) and at 40 x 32 x 100 (16-byte copies of B, seven k-tiles).
if(CUDA_STAGES_COMPUTE_SANITIZER)
  add_test(NAME broken_pipelined.control_racecheck_clean
           COMMAND "${CUDA_STAGES_COMPUTE_SANITIZER}" --tool racecheck --error-exitcode 1
                   $<TARGET_FILE:broken_pipelined> --variant correct)
  set_tests_properties(broken_pipelined.control_racecheck_clean PROPERTIES
    LABELS sanitizer SKIP_RETURN_CODE 77 SKIP_REGULAR_EXPRESSION "${CUDA_STAGES_NO_GPU_REGEX}"
    PASS_REGULAR_EXPRESSION "RACECHECK SUMMARY: 0 hazards" FAIL_REGULAR_EXPRESSION "Result = FAIL")
  foreach(case "no_swap_barrier_racecheck|--m|37|--n|29|--k|53"
               "no_swap_barrier_aligned_racecheck|--m|40|--n|32|--k|100")
    string(REPLACE "|" ";" case "${case}")
    list(POP_FRONT case name)
    add_test(NAME broken_pipelined.${name}
             COMMAND "${CUDA_STAGES_COMPUTE_SANITIZER}" --tool racecheck --error-exitcode 1
                     $<TARGET_FILE:broken_pipelined> --variant no-swap-barrier ${case})
    set_tests_properties(broken_pipelined.${name} PROPERTIES
      LABELS sanitizer SKIP_RETURN_CODE 77 SKIP_REGULAR_EXPRESSION "${CUDA_STAGES_NO_GPU_REGEX}"
      PASS_REGULAR_EXPRESSION "RACECHECK SUMMARY: [1-9]")
  endforeach()
endif()
