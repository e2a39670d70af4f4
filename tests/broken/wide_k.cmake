# Stage 25's new hazards: the boxes of A in a buffer of 128 columns of K, which the producer must copy
# all of (the buffer's barrier counts every byte of them) and the consumer must read where the producer
# put them. (Included from tests/broken/CMakeLists.txt; cs_add_broken_copy is defined in
# broken_copy.cmake.) Each copy keeps 128 x 256 tiles beside its own instance: the plan asks that
# instance's pairs how many clusters fit on the GPU.

if(TARGET 25_wide_k_steps)
  # The consumer reads the first box of A for both halves of a buffer: B's rows 64 .. 127 of every
  # buffer multiply A's columns 0 .. 63 again. At 131 x 67 x 200 (the last buffer partly past K) and
  # 64 x 300 x 256 (whole buffers only).
  cs_add_broken_copy(wide_k_first_box_twice 25_wide_k_steps PARAMS 64x64x128/s6 128x256x64/s4
    FIND "tile_a + i / 64 * kBlockM * 64 + i % 64" REPLACE "tile_a + i % 64")
  foreach(size "131|67|200" "64|300|256")
    string(REPLACE "|" ";" mnk "${size}")
    list(POP_FRONT mnk m n k)
    cs_add_run_test(broken_wide_k_first_box_twice.caught_${m}x${n}x${k} broken_wide_k_first_box_twice GPU
                    ARGS --m ${m} --n ${n} --k ${k} --params 64x64x128/s6 --reps 1 --warmup 0
                    CAUGHT_REGEX "Result = FAIL")
  endforeach()
  # The producer copies one box of A a buffer, as if a buffer held 64 columns of K, while the barrier
  # still expects the whole buffer's bytes: the first buffer never lands, and the consumers wait on it
  # for ever. The kernel hangs (or fails): hang_or_fail.sh, as for stage 17's barriers.
  cs_add_broken_copy(wide_k_one_box_of_a 25_wide_k_steps PARAMS 64x64x128/s6 128x256x64/s4
    FIND "box < kBlockK / 64" REPLACE "box < 1")
  add_test(NAME broken_wide_k_one_box_of_a.caught_64x300x256
           COMMAND bash "${CMAKE_CURRENT_SOURCE_DIR}/hang_or_fail.sh" 6
                   $<TARGET_FILE:broken_wide_k_one_box_of_a> --m 64 --n 300 --k 256 --params 64x64x128/s6 --reps 1)
  set_tests_properties(broken_wide_k_one_box_of_a.caught_64x300x256 PROPERTIES LABELS gpu COST 20
                       SKIP_RETURN_CODE 77 SKIP_REGULAR_EXPRESSION "${CUDA_STAGES_NO_GPU_REGEX}")
endif()
