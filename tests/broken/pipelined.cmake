# Stage 11's hazard: a shared-memory buffer of the pipeline overwritten by the next cp.async copy
# while other warps still read it. A copy of stage 11 without the one barrier of each step; that
# barrier does two things: everyone's cp.async copies of tile t have landed before anyone reads tile
# t, and everyone has finished reading the buffer of step t - 1 before the copy of tile t + 2
# overwrites it. Without it, a fast warp reads a tile other threads' copies have not filled yet, and
# copies into a buffer slower warps are still reading. Whether that corrupts a given run depends on
# timing, so the test is racecheck, which tracks cp.async copies into shared memory and reports the
# hazard whether or not it bit; the stage's own racecheck run (11_pipelined.sanitizer.racecheck) is
# the control. (Included from tests/broken/CMakeLists.txt; cs_add_broken_copy is defined in
# tensor_cores.cmake.)
if(TARGET 11_pipelined)
  cs_add_broken_copy(pipelined_no_barrier 11_pipelined PARAMS 128x128x16/64x32/8x8/s3
    FIND "    // whose buffer the copy below overwrites.\n    __syncthreads();"
    REPLACE "    // whose buffer the copy below overwrites.\n    static_cast<void>(0);")
  # At 37 x 29 x 53 (4-byte copies, four k-tiles: the ring of 3 goes round) and at 40 x 32 x 100
  # (16-byte copies of B, seven k-tiles).
  if(CUDA_STAGES_COMPUTE_SANITIZER)
    foreach(case "caught_by_racecheck|--m|37|--n|29|--k|53" "aligned_caught_by_racecheck|--m|40|--n|32|--k|100")
      string(REPLACE "|" ";" case "${case}")
      list(POP_FRONT case name)
      add_test(NAME broken_pipelined_no_barrier.${name}
               COMMAND "${CUDA_STAGES_COMPUTE_SANITIZER}" --tool racecheck --error-exitcode 1
                       $<TARGET_FILE:broken_pipelined_no_barrier> ${case} --params 128x128x16/64x32/8x8/s3
                       --reps 1 --warmup 0)
      set_tests_properties(broken_pipelined_no_barrier.${name} PROPERTIES
        LABELS sanitizer SKIP_RETURN_CODE 77 SKIP_REGULAR_EXPRESSION "${CUDA_STAGES_NO_GPU_REGEX}"
        PASS_REGULAR_EXPRESSION "RACECHECK SUMMARY: [1-9]")
    endforeach()
  endif()
endif()
