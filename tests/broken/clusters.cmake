# Stage 24's new hazards: the pairs of blocks, which must take different tiles of one column, and the
# TMA's copies of B, which must land in both blocks of a pair. (Included from
# tests/broken/CMakeLists.txt; cs_add_broken_copy is defined in broken_copy.cmake.)

if(TARGET 24_clusters)
  # Both blocks of a pair take the top tile of the pair: the bottom one is never computed, and its
  # rows of C keep their poison. At 264 x 200 x 136, three rows of 128-row tiles, pairs forced; and
  # at 128 x 200 x 136, two rows of 64-row tiles, the pair instance of 64 x 128 tiles.
  cs_add_broken_copy(clusters_same_rows 24_clusters PARAMS 128x256x64/s4 64x128x64/s8
    FIND "* kCluster + rank) * kBlockM" REPLACE "* kCluster) * kBlockM")
  cs_add_run_test(broken_clusters_same_rows.caught_264x200x136 broken_clusters_same_rows GPU
                  ARGS --m 264 --n 200 --k 136 --cluster 2 --params 128x256x64/s4 --reps 1 --warmup 0 CAUGHT_REGEX "Result = FAIL")
  cs_add_run_test(broken_clusters_same_rows.caught_64_rows_128x200x136 broken_clusters_same_rows GPU
                  ARGS --m 128 --n 200 --k 136 --cluster 2 --params 64x128x64/s8 --reps 1 --warmup 0 CAUGHT_REGEX "Result = FAIL")
  # Each block's stripes of B land in its own shared memory only: the other block's barrier waits
  # for bytes that never come. The kernel hangs (or fails): hang_or_fail.sh, as for stage 17's.
  # Both pair instances, 128-row and 64-row tiles, at a test each.
  cs_add_broken_copy(clusters_multicast_to_self 24_clusters PARAMS 128x256x64/s4 64x128x64/s8
    FIND "(1u << kCluster) - 1)" REPLACE "1u << rank)")
  add_test(NAME broken_clusters_multicast_to_self.caught_264x200x1000
           COMMAND bash "${CMAKE_CURRENT_SOURCE_DIR}/hang_or_fail.sh" 6
                   $<TARGET_FILE:broken_clusters_multicast_to_self> --m 264 --n 200 --k 1000 --cluster 2 --params 128x256x64/s4 --reps 1)
  add_test(NAME broken_clusters_multicast_to_self.caught_64_rows_128x200x1000
           COMMAND bash "${CMAKE_CURRENT_SOURCE_DIR}/hang_or_fail.sh" 6
                   $<TARGET_FILE:broken_clusters_multicast_to_self> --m 128 --n 200 --k 1000 --cluster 2 --params 64x128x64/s8 --reps 1)
  set_tests_properties(broken_clusters_multicast_to_self.caught_264x200x1000
                       broken_clusters_multicast_to_self.caught_64_rows_128x200x1000 PROPERTIES LABELS gpu COST 20
                       SKIP_RETURN_CODE 77 SKIP_REGULAR_EXPRESSION "${CUDA_STAGES_NO_GPU_REGEX}")
  # A consumer warp frees a buffer in its own block only (and each block's producer waits for its own
  # consumers alone): the producer of the faster block refills a buffer in both blocks while the
  # other block's tensor cores may still read it.
  cs_add_broken_copy(clusters_free_own_block 24_clusters PARAMS 128x256x64/s4
    FIND "cs::arrive_in_block(&freed[stage], other)" REPLACE "if (other == rank) cs::arrive_in_block(&freed[stage], other)"
    FIND "cs::init_barrier(&freed[s], kConsumers * 4 * kCluster)" REPLACE "cs::init_barrier(&freed[s], kConsumers * 4)")
  # A race: it shows only where one block's producer runs ahead of the other block's tensor cores,
  # which small sizes did not show in 15 runs and 3000^3 showed in 3 of 5 (racecheck does not see
  # the TMA's writes into another block). Six runs of 3000^3 in one process: any FAIL catches it.
  cs_add_run_test(broken_clusters_free_own_block.caught_3000 broken_clusters_free_own_block GPU
                  ARGS --size 3000 --also 3000x3000x3000,3000x3000x3000,3000x3000x3000,3000x3000x3000,3000x3000x3000
                  --cluster 2 --params 128x256x64/s4 --reps 1 --check sample CAUGHT_REGEX "Result = FAIL")
endif()
