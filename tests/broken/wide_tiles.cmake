# Stage 26's new hazards: the three stripes of B in a pair of 192-column tiles, which the two blocks
# must share out whole, and the one staging buffer per consumer warpgroup beside four buffers of 192 x
# 192, which the TMA must have read before the next piece is written there and which the kernel must
# not take twice. (Included from tests/broken/CMakeLists.txt; cs_add_broken_copy is defined in
# broken_copy.cmake.) Each copy keeps the 192 x 192 instance alone: the plan asks its pairs how many
# clusters fit on the GPU.

if(TARGET 26_tiles_of_192)
  # The stripes of B in halves, as if every tile had an even number of them: block r of a pair copies
  # stripes r·(BN / 64 / 2) on. With four stripes (128 x 256) the halves are whole; with three, block
  # 0 copies stripe 0, block 1 stripe 1, and stripe 2 nobody: the barriers wait for its bytes for
  # ever. The kernel hangs (or fails): hang_or_fail.sh, as for stage 17's barriers.
  cs_add_broken_copy(wide_tiles_stripes_in_halves 26_tiles_of_192 PARAMS 192x192x64/s4
    FIND "stripe % kCluster == rank" REPLACE "stripe / (kBlockN / 64 / kCluster) == rank")
  add_test(NAME broken_wide_tiles_stripes_in_halves.caught_400x392x200
           COMMAND bash "${CMAKE_CURRENT_SOURCE_DIR}/hang_or_fail.sh" 6
                   $<TARGET_FILE:broken_wide_tiles_stripes_in_halves> --m 400 --n 392 --k 200 --cluster 2
                   --params 192x192x64/s4 --reps 1)
  set_tests_properties(broken_wide_tiles_stripes_in_halves.caught_400x392x200 PROPERTIES LABELS gpu COST 20
                       SKIP_RETURN_CODE 77 SKIP_REGULAR_EXPRESSION "${CUDA_STAGES_NO_GPU_REGEX}")
  # With one staging buffer, the wait of two: a piece is written while the TMA may still be reading the
  # piece before from the same buffer. A race: two runs of 2000 x 2000 x 200 in one process (121 tiles
  # of four k-tiles, each 18 pieces through the staging buffers), every element checked, either FAIL
  # catches it (each of six such runs failed on an H200).
  cs_add_broken_copy(wide_tiles_one_buffer_wait_of_two 26_tiles_of_192 PARAMS 192x192x64/s4
    FIND "cs::wait_stores_read<kStaging - 1>()" REPLACE "cs::wait_stores_read<1>()")
  cs_add_run_test(broken_wide_tiles_one_buffer_wait_of_two.caught_2000x2000x200 broken_wide_tiles_one_buffer_wait_of_two GPU
                  ARGS --m 2000 --n 2000 --k 200 --also 2000x2000x200
                  --cluster 1 --params 192x192x64/s4 --reps 1 --check full CAUGHT_REGEX "Result = FAIL")
  # Two staging buffers whatever the ring leaves: the host asks for one per consumer warpgroup beside
  # four buffers of 192 x 192 (217 KB), and the kernel writes the second past the end of its shared
  # memory. The GPU stops the kernel (an illegal address), or C comes out wrong.
  cs_add_broken_copy(wide_tiles_two_staging_buffers 26_tiles_of_192 PARAMS 192x192x64/s4
    FIND "constexpr int kStaging = staging_buffers(kStages * kStageBytes, kConsumers)"
    REPLACE "constexpr int kStaging = 2")
  cs_add_run_test(broken_wide_tiles_two_staging_buffers.caught_400x392x200 broken_wide_tiles_two_staging_buffers GPU
                  ARGS --m 400 --n 392 --k 200 --cluster 1 --params 192x192x64/s4 --reps 1 --warmup 0
                  CAUGHT_REGEX "Result = FAIL|cudaError[A-Za-z]+")
endif()
