# Stage 13's new hazard: the fragment layout of mma.sync; stage 14's: ldmatrix's lane addresses and the
# swizzle, which every read must undo as every write applied it. Each lane must hand the tensor core exactly
# the elements the instruction assigns to it, in the right halves of its registers; a fragment read
# from the wrong place computes a wrong product without any crash or race. The broken copies are
# made at configure time from the stage's own source with one passage changed (cs_add_broken_copy),
# so they follow the stage whenever it changes, and the verification must report FAIL for each, at
# an aligned size (16-byte copies) and an odd one (2-byte copies), while the stage itself passes.
# (Included from tests/broken/CMakeLists.txt.)

if(TARGET 13_tensor_cores)
  # B's pair in the wrong halves: rows 2q + 1 and 2q of a column instead of 2q and 2q + 1 (the lower
  # index belongs in the lower 16 bits).
  cs_add_broken_copy(tc_pair_swapped 13_tensor_cores PARAMS 128x128x32/64x64/s3
    FIND "fragment_b[pn][0] = cs::pack_pair(bt[0], bt[kTileBStride])"
    REPLACE "fragment_b[pn][0] = cs::pack_pair(bt[kTileBStride], bt[0])")
  # A's register 1 read from where register 2's pair lies (columns 2q + 8, 2q + 9 of row g) instead of
  # row g + 8: a fragment read from the wrong place, as if it ran along the row first.
  cs_add_broken_copy(tc_fragment_order 13_tensor_cores PARAMS 128x128x32/64x64/s3
    FIND "fragment_a[pm][1] = cs::load_pair(at + 8 * kTileAStride)"
    REPLACE "fragment_a[pm][1] = cs::load_pair(at + 8)")
  foreach(broken tc_pair_swapped tc_fragment_order)
    # Both sizes in one process: each must fail (two RESULT lines that say FAIL).
    cs_add_run_test(broken_${broken}.caught_aligned_and_odd broken_${broken} GPU
                    ARGS --m 136 --n 72 --k 88 --also 37x29x53 --reps 1
                    CAUGHT_REGEX "Result = FAIL.*Result = FAIL")
  endforeach()
endif()

if(TARGET 14_ldmatrix_swizzle)
  # The swizzle applied when the tiles are written but not when A's fragments are read: the ldmatrix
  # rows come from the chunks where the unswizzled layout would keep them.
  cs_add_broken_copy(sw_read_unswizzled 14_ldmatrix_swizzle PARAMS 128x128x64/64x64/s3
    FIND "&tile_a[cs::swizzled(row, i / 8 + lane / 16, kBlockK)]"
    REPLACE "&tile_a[row * kBlockK + (i / 8 + lane / 16) * 8]")
  # ldmatrix .trans handed the wrong rows: lanes 8-15 and 24-31 give rows i .. i + 7 again instead of
  # i + 8 .. i + 15, so b[1] of every piece repeats b[0]'s rows of B.
  cs_add_broken_copy(sw_ldmatrix_rows 14_ldmatrix_swizzle PARAMS 128x128x64/64x64/s3
    FIND "swizzled(i + lane % 16, col / 8 + lane / 16, kBlockN)"
    REPLACE "swizzled(i + lane % 8, col / 8 + lane / 16, kBlockN)")
  foreach(broken sw_read_unswizzled sw_ldmatrix_rows)
    # Both sizes in one process: each must fail (two RESULT lines that say FAIL).
    cs_add_run_test(broken_${broken}.caught_aligned_and_odd broken_${broken} GPU
                    ARGS --m 136 --n 72 --k 200 --also 37x29x53 --reps 1
                    CAUGHT_REGEX "Result = FAIL.*Result = FAIL")
  endforeach()
  # The ring's wait left out: a step passes the barrier and reads its tile with no cp.async.wait_group
  # first, so this thread's copies of it may not have landed. A race: in the development runs on the
  # H200 the results still passed (1024^3), so the test is racecheck, which tracks the cp.async copies
  # and reports the reads that nothing orders after them.
  cs_add_broken_copy(sw_no_wait 14_ldmatrix_swizzle PARAMS 128x128x64/64x64/s3
    FIND "cs::wait_for_copies<kStages - 2>()"
    REPLACE "static_cast<void>(0) /* no wait_for_copies here */")
  if(CUDA_STAGES_COMPUTE_SANITIZER)
    add_test(NAME broken_sw_no_wait.racecheck
             COMMAND "${CUDA_STAGES_COMPUTE_SANITIZER}" --tool racecheck --error-exitcode 1
                     $<TARGET_FILE:broken_sw_no_wait> --m 37 --n 40 --k 200 --reps 1 --warmup 0)
    set_tests_properties(broken_sw_no_wait.racecheck PROPERTIES
      LABELS sanitizer SKIP_RETURN_CODE 77 SKIP_REGULAR_EXPRESSION "${CUDA_STAGES_NO_GPU_REGEX}"
      PASS_REGULAR_EXPRESSION "RACECHECK SUMMARY: [1-9]")
  endif()
endif()
