# Showing that the checks bite on stage 09: a copy of its kernel whose 16-byte loads ignore the
# right edge (tests/broken_vectorized.cu), and tests that pass only when the breakage is caught.
# Every run is at 133 x 68 x 76: n and k multiples of 4 (the 16-byte path), n a multiple of no
# block's columns.
add_executable(broken_vectorized "${CMAKE_CURRENT_LIST_DIR}/../broken_vectorized.cu")
target_link_libraries(broken_vectorized PRIVATE cuda_stages_cuda)

# The control: the same harness, with NaN past A and B, passes the stage's kernel, which never reads
# there; so a failure below is the breakage's.
cs_add_run_test(broken_vectorized.control_passes broken_vectorized GPU ARGS --variant correct)
# Without the guard, the last row of A is read past its end, into the NaN there, and 0 * NaN
# reaches C: the verification must report FAIL (on the report's line, so that a crash does not
# count as caught).
cs_add_run_test(broken_vectorized.no_row_end_check_caught broken_vectorized GPU
                ARGS --variant no-row-end-check CAUGHT_REGEX "Result = FAIL")

# Under memcheck, with A and B allocated exactly: the unguarded loads leave the allocations, and
# memcheck reports them whatever they read; the stage's kernel, under the same conditions, is clean.
if(CUDA_STAGES_COMPUTE_SANITIZER)
  add_test(NAME broken_vectorized.no_row_end_check_memcheck
           COMMAND "${CUDA_STAGES_COMPUTE_SANITIZER}" --tool memcheck --error-exitcode 1
                   $<TARGET_FILE:broken_vectorized> --variant no-row-end-check --exact-buffers)
  set_tests_properties(broken_vectorized.no_row_end_check_memcheck PROPERTIES
    LABELS sanitizer SKIP_RETURN_CODE 77 SKIP_REGULAR_EXPRESSION "${CUDA_STAGES_NO_GPU_REGEX}"
    PASS_REGULAR_EXPRESSION "ERROR SUMMARY: [1-9]")
  add_test(NAME broken_vectorized.control_memcheck
           COMMAND "${CUDA_STAGES_COMPUTE_SANITIZER}" --tool memcheck --error-exitcode 1
                   $<TARGET_FILE:broken_vectorized> --variant correct --exact-buffers)
  set_tests_properties(broken_vectorized.control_memcheck PROPERTIES
    LABELS sanitizer SKIP_RETURN_CODE 77 SKIP_REGULAR_EXPRESSION "${CUDA_STAGES_NO_GPU_REGEX}"
    FAIL_REGULAR_EXPRESSION "ERROR SUMMARY: [1-9]")
endif()
