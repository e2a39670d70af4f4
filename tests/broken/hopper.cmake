# Stage 15's new hazard: the matrix descriptors, which tell the tensor cores how a tile lies in shared
# memory; stage 16's: the asynchrony of wgmma, whose reads of a tile run on after the instruction is
# issued; stage 17's: the tensor maps, the padded copies of A and B, and the mbarriers that count the
# TMA's bytes, where a mistake may hang rather than fail (hang_or_fail.sh); stage 18's: the buffers
# handed back and forth between the producer and the consumers on the freed barriers; stage 19's:
# the ring and the sums carried from one tile of C to the next; stage 20's: the pieces of a split
# tile handed over between blocks, in one launch and from one launch to the next, and the shuffled
# stores of rows off 8-byte boundaries; stage 21's: the staging buffers the TMA stores read; stage
# 22's: the rows of C off 16-byte boundaries, stored through a warp's own staging.
# (Included from tests/broken/CMakeLists.txt;
# cs_add_broken_copy is defined in tensor_cores.cmake.)

if(TARGET 15_wgmma)
  # The descriptors say "no swizzle" while the tiles are stored swizzled.
  cs_add_broken_copy(wg_descriptor_unswizzled 15_wgmma PARAMS 256x128x64/s4 IN common/wgmma.cuh
    FIND "static_cast<std::uint64_t>(group_bytes >> 4) << 32 | 1ull << 62"
    REPLACE "static_cast<std::uint64_t>(group_bytes >> 4) << 32 | 0ull << 62")
  # B's stripes said to be half as far apart as they are: columns 64 .. 127 read from the middle of
  # the first stripe (so the odd size has n > 64).
  cs_add_broken_copy(wg_stripe_bytes 15_wgmma PARAMS 256x128x64/s4
    FIND "matrix_descriptor(tile_b + i * 64, kBlockK * 128, 1024)"
    REPLACE "matrix_descriptor(tile_b + i * 64, kBlockK * 64, 1024)")
  foreach(broken wg_descriptor_unswizzled wg_stripe_bytes)
    # Both sizes in one process: each must fail (two RESULT lines that say FAIL).
    cs_add_run_test(broken_${broken}.caught_aligned_and_odd broken_${broken} GPU
                    ARGS --m 136 --n 72 --k 88 --also 131x67x71 --reps 1
                    CAUGHT_REGEX "Result = FAIL.*Result = FAIL")
  endforeach()
endif()

if(TARGET 16_wgmma_async)
  # Stage 15's ring distance kept with one group left in flight: tiles copied kStages - 1 ahead, so
  # step t copies into the buffer of tile t - 1, whose wgmma may still be reading it.
  cs_add_broken_copy(wa_ring_ahead 16_wgmma_async PARAMS 128x256x64/s4 128x256x64/s3
    FIND "s < kStages - 2" REPLACE "s < kStages - 1"
    FIND "wait_for_copies<kStages - 3>()" REPLACE "wait_for_copies<kStages - 2>()"
    FIND "t + kStages - 2 < k_tiles" REPLACE "t + kStages - 1 < k_tiles"
    FIND "(t + kStages - 2) * kBlockK" REPLACE "(t + kStages - 1) * kBlockK"
    FIND "int write_stage = kStages - 2" REPLACE "int write_stage = kStages - 1")
  # A race, not a wrong index: it shows only where a copy lands while the tensor cores still read,
  # which takes enough k-tiles (at 136 x 72 x 88, two k-tiles, it passed) and is not seen by racecheck,
  # which does not watch wgmma's reads. Caught in every run at these sizes so far (at 1024^3 the
  # largest error was a tenth of the sum of |a*b|, the scale the tolerance is a small fraction of).
  cs_add_run_test(broken_wa_ring_ahead.caught_1024 broken_wa_ring_ahead GPU
                  ARGS --size 1024 --params 128x256x64/s4 --reps 1 CAUGHT_REGEX "Result = FAIL")
  cs_add_run_test(broken_wa_ring_ahead.caught_long_k broken_wa_ring_ahead GPU
                  ARGS --m 2048 --n 2048 --k 8192 --params 128x256x64/s3 --check sample --reps 1
                  CAUGHT_REGEX "Result = FAIL")
endif()

if(TARGET 17_tma)
  # The tensor maps without the swizzle the descriptors describe: the tiles land in plain rows, and
  # the tensor cores read them as if swizzled.
  cs_add_broken_copy(tma_map_unswizzled 17_tma PARAMS 256x128x64/s4 IN common/tma_inputs.cuh
    FIND "swizzle = CU_TENSOR_MAP_SWIZZLE_128B" REPLACE "swizzle = CU_TENSOR_MAP_SWIZZLE_NONE")
  foreach(size "136|72|88" "131|67|71")
    string(REPLACE "|" ";" mnk "${size}")
    list(POP_FRONT mnk m n k)
    cs_add_run_test(broken_tma_map_unswizzled.caught_${m}x${n}x${k} broken_tma_map_unswizzled GPU
                    ARGS --m ${m} --n ${n} --k ${k} --reps 1 CAUGHT_REGEX "Result = FAIL")
  endforeach()
  # The barriers' phase: kept at 0 instead of flipping each time the ring goes round, so from the
  # second round on the wait asks for a phase that completed long ago and returns at once; and the
  # bytes to expect: only the A tile's, so a phase can complete before B has landed, and B's bytes
  # then count against the next one. Either may show as wrong sums or as a kernel that never
  # finishes (a phase that never completes): each seen so far has hung, at every size where the
  # ring goes round (phase) or at all (bytes). The test passes on either, within 6 s (the correct
  # stage takes a second or two there).
  cs_add_broken_copy(tma_phase_kept 17_tma PARAMS 256x128x64/s4 FIND "phase ^= 1;" REPLACE "phase ^= 0;")
  cs_add_broken_copy(tma_expect_a_only 17_tma PARAMS 256x128x64/s4
    FIND "arrive_expecting(&landed[stage], kStageBytes)"
    REPLACE "arrive_expecting(&landed[stage], kStageBytes - kBlockK * kBlockN * static_cast<int>(sizeof(bf16)))")
  # The padded copies of A and B (common/tma_inputs.cuh, from this stage on) read four bytes at a time
  # wherever a chunk lies inside its row, whether or not its first element is on a 4-byte boundary:
  # for an odd row length, every other row of A is read at an odd address of 2-byte elements, which
  # the GPU refuses (a misaligned address error, which the flow reports).
  cs_add_broken_copy(padded_copy_words_anywhere 17_tma PARAMS 256x128x64/s4 IN common/tma_inputs.cuh
    FIND " && reinterpret_cast<std::uintptr_t>(from + at) % 4 == 0" REPLACE "")
  cs_add_run_test(broken_padded_copy_words_anywhere.caught_131x67x71 broken_padded_copy_words_anywhere GPU
                  ARGS --m 131 --n 67 --k 71 --reps 1 --warmup 0 CAUGHT_REGEX "misaligned address")
  foreach(broken tma_phase_kept tma_expect_a_only)
    add_test(NAME broken_${broken}.caught_264x136x1000
             COMMAND bash "${CMAKE_CURRENT_SOURCE_DIR}/hang_or_fail.sh" 6 $<TARGET_FILE:broken_${broken}>
                     --m 264 --n 136 --k 1000 --reps 1)
    set_tests_properties(broken_${broken}.caught_264x136x1000 PROPERTIES LABELS gpu COST 20 SKIP_RETURN_CODE 77
                         SKIP_REGULAR_EXPRESSION "${CUDA_STAGES_NO_GPU_REGEX}")
  endforeach()
endif()

if(TARGET 18_warp_specialized)
  # The buffer handed back to the producer as soon as its wgmma are issued, before they have read it:
  # the next tile's copy may land while the tensor cores still read the buffer. A race, which shows
  # only where a copy overtakes the products (racecheck does not watch wgmma's reads or TMA's writes).
  cs_add_broken_copy(ws_freed_early 18_warp_specialized PARAMS 128x256x64/s4 128x256x64/s3
    FIND "if (t > 0 && lane == 0) cs::arrive(&freed[previous])" REPLACE "static_cast<void>(previous)"
    FIND "multiply_stage(stage)" REPLACE "multiply_stage(stage), lane == 0 ? cs::arrive(&freed[stage]) : void()")
  cs_add_run_test(broken_ws_freed_early.caught_1024 broken_ws_freed_early GPU
                  ARGS --size 1024 --reps 1 CAUGHT_REGEX "Result = FAIL")
  cs_add_run_test(broken_ws_freed_early.caught_long_k broken_ws_freed_early GPU
                  ARGS --m 2048 --n 2048 --k 8192 --params 128x256x64/s3 --check sample --reps 1
                  CAUGHT_REGEX "Result = FAIL")
  # The producer's wait asks for the parity of the phase it is in, not of the one before: on fresh
  # barriers no phase has completed, so it waits forever; and a freed barrier that counts one
  # arrival instead of one per consumer warp, so its phases run ahead of the buffers it stands for.
  # Both may hang rather than fail (hang_or_fail.sh, as for stage 17's barriers).
  cs_add_broken_copy(ws_producer_parity 18_warp_specialized PARAMS 128x256x64/s4
    FIND "wait_for_phase(&freed[stage], phase ^ 1)" REPLACE "wait_for_phase(&freed[stage], phase)")
  cs_add_broken_copy(ws_freed_count 18_warp_specialized PARAMS 128x256x64/s4
    FIND "init_barrier(&freed[s], kConsumers * 4)" REPLACE "init_barrier(&freed[s], 1)")
  foreach(broken ws_producer_parity ws_freed_count)
    add_test(NAME broken_${broken}.caught_264x136x1000
             COMMAND bash "${CMAKE_CURRENT_SOURCE_DIR}/hang_or_fail.sh" 6 $<TARGET_FILE:broken_${broken}>
                     --m 264 --n 136 --k 1000 --reps 1)
    set_tests_properties(broken_${broken}.caught_264x136x1000 PROPERTIES LABELS gpu COST 20 SKIP_RETURN_CODE 77
                         SKIP_REGULAR_EXPRESSION "${CUDA_STAGES_NO_GPU_REGEX}")
  endforeach()
endif()

if(TARGET 19_persistent)
  # The sums of a tile not cleared before the next: from a block's second tile on, C holds the sum of
  # its tiles so far. Three blocks, so every block takes several tiles whatever the GPU.
  cs_add_broken_copy(persistent_sums_kept 19_persistent PARAMS 128x256x64/s4
    FIND "for (float& sum : sums) sum = 0.0f" REPLACE "for (float& sum : sums) static_cast<void>(sum)")
  cs_add_run_test(broken_persistent_sums_kept.caught_131x300x200 broken_persistent_sums_kept GPU
                  ARGS --m 131 --n 300 --k 200 --blocks 3 --reps 1 CAUGHT_REGEX "Result = FAIL")
  # The last buffer of a tile never handed back (stage 18's kernel ended there): the producer, a
  # round of the ring later, waits for a phase of it that never completes; and the consumers' ring
  # restarted at buffer 0, phase 0 for each tile while the producer's runs on, so from a block's
  # second tile on they wait on the wrong buffers (5 k-tiles a tile, 4 buffers). Either may hang or
  # fail (hang_or_fail.sh).
  cs_add_broken_copy(persistent_last_kept 19_persistent PARAMS 128x256x64/s4
    FIND "if (lane == 0) cs::arrive(&freed[previous])" REPLACE "static_cast<void>(previous)")
  cs_add_broken_copy(persistent_ring_restart 19_persistent PARAMS 128x256x64/s4
    FIND "\n    take_tile(tile)" REPLACE "\n    stage = phase = previous = 0, take_tile(tile)")
  foreach(broken persistent_last_kept persistent_ring_restart)
    add_test(NAME broken_${broken}.caught_131x300x300
             COMMAND bash "${CMAKE_CURRENT_SOURCE_DIR}/hang_or_fail.sh" 6 $<TARGET_FILE:broken_${broken}>
                     --m 131 --n 300 --k 300 --blocks 2 --reps 1)
    set_tests_properties(broken_${broken}.caught_131x300x300 PROPERTIES LABELS gpu COST 20 SKIP_RETURN_CODE 77
                         SKIP_REGULAR_EXPRESSION "${CUDA_STAGES_NO_GPU_REGEX}")
  endforeach()
endif()

if(TARGET 20_split_k)
  # The block that gathers a split tile reads the later pieces' slots without waiting for their
  # flags. At most sizes the pieces end together and the slots are written in time; not here: one
  # tile of ten k-tiles on three blocks (pieces of 3, 3 and 4 k-tiles), the gathering block's piece
  # the shortest, and one launch with no warm-up, so that the slots it reads have never been written.
  cs_add_broken_copy(split_k_no_wait 20_split_k PARAMS 128x256x64/s4 FIND "cs::wait_for_flag(flag)" REPLACE "static_cast<void>(flag)")
  cs_add_run_test(broken_split_k_no_wait.caught_128x256x640 broken_split_k_no_wait GPU
                  ARGS --m 128 --n 256 --k 640 --blocks 3 --split always --reps 1 --warmup 0
                  CAUGHT_REGEX "Result = FAIL")
  # The last block holding a piece of the tile left out of the gathering: its k-tiles are missing
  # (four tiles on three blocks: the fourth is split in three).
  cs_add_broken_copy(split_k_gather_short 20_split_k PARAMS 128x256x64/s4
    FIND "block < static_cast<int>(blockIdx.x) + parts" REPLACE "block < static_cast<int>(blockIdx.x) + parts - 1")
  cs_add_run_test(broken_split_k_gather_short.caught_131x300x200 broken_split_k_gather_short GPU
                  ARGS --m 131 --n 300 --k 200 --blocks 3 --split always --reps 1 CAUGHT_REGEX "Result = FAIL")
  # The flag of a piece not lowered after the gathering block has read it: the next launch finds it
  # raised, and reads the slot before the block holding the piece has written it again. Each
  # launch on its own is right, and so is a second launch on the same inputs (the slot holds the
  # same sums): the flow's checked launch follows timed launches on -A, so the stale slot holds the
  # negated piece. One timed run and the checked one, at the size above where the gathering
  # block's piece is the shortest.
  cs_add_broken_copy(split_k_flag_kept 20_split_k PARAMS 128x256x64/s4
    FIND "if (lane == 0) *flag = 0" REPLACE "static_cast<void>(flag)")
  cs_add_run_test(broken_split_k_flag_kept.caught_128x256x640 broken_split_k_flag_kept GPU
                  ARGS --m 128 --n 256 --k 640 --blocks 3 --split always --reps 1 --warmup 0
                  CAUGHT_REGEX "Result = FAIL")
  # A shifted row of C (n odd) where the fourth lane of each four takes column 2q + 2 from the next
  # lane, as the others do, instead of from the first lane's next 8 columns: every eighth column of
  # every other row wrong.
  cs_add_broken_copy(split_k_shuffle_wrong_lane 20_split_k PARAMS 128x256x64/s4 IN common/store_pair.cuh
    FIND "next = q == 3 ? next_eight : next_lane" REPLACE "next = next_lane + 0.0f * next_eight")
  cs_add_run_test(broken_split_k_shuffle_wrong_lane.caught_131x67x71 broken_split_k_shuffle_wrong_lane GPU
                  ARGS --m 131 --n 67 --k 71 --reps 1 CAUGHT_REGEX "Result = FAIL")
endif()

if(TARGET 21_tma_store)
  # A staging buffer written again before the TMA has read the piece two before it out (the wait
  # for the bulk group left out), or ordinary stores to it not fenced from the TMA's reads (the
  # proxy fence left out), or the block ending with stores still reading (the last wait left out):
  # races, each a piece of C that may leave with another piece's values. Many tiles per block, rows
  # on 16-byte boundaries (the TMA's path), one run each.
  cs_add_broken_copy(tma_store_no_read_wait 21_tma_store PARAMS 128x256x64/s4
    FIND "if (issuer) cs::wait_stores_read<1>()" REPLACE "static_cast<void>(issuer)")
  cs_add_broken_copy(tma_store_no_fence 21_tma_store PARAMS 128x256x64/s4
    FIND "      cs::fence_for_async_proxy()" REPLACE "      static_cast<void>(0)")
  foreach(broken tma_store_no_read_wait tma_store_no_fence)
    cs_add_run_test(broken_${broken}.caught_2056x4096x64 broken_${broken} GPU
                    ARGS --m 2056 --n 4096 --k 64 --also 1104x1304x344 --blocks 3 --reps 1 --warmup 0
                    CAUGHT_REGEX "Result = FAIL")
  endforeach()
endif()

if(TARGET 22_unaligned_rows)
  # C's rows off 16-byte boundaries (n odd), stored a row of a warp's piece at a time:
  # - the stores keep the rows inside C but not the columns, so a row's store runs past C's last
  #   column into the next row's first ones (with the sums of B's zero columns). One block takes the
  #   tiles in order, the two columns of tiles of a row one after the other (131 x 301: the second
  #   column of tiles 45 wide), so the second writes its zeros over the first's, every time.
  cs_add_broken_copy(unaligned_rows_past_row_end 22_unaligned_rows PARAMS 128x256x64/s4
    FIND "if (first_row + row < m && col < n)" REPLACE "if (first_row + row < m)")
  cs_add_run_test(broken_unaligned_rows_past_row_end.caught_131x301x71 broken_unaligned_rows_past_row_end GPU
                  ARGS --m 131 --n 301 --k 71 --blocks 1 --reps 1 --warmup 0 CAUGHT_REGEX "Result = FAIL")
  # - no __syncwarp between the lanes' writes of a piece to the staging buffer and their reads of
  #   whole rows, which other lanes wrote: a race within the warp.
  cs_add_broken_copy(unaligned_rows_no_syncwarp 22_unaligned_rows PARAMS 128x256x64/s4
    FIND "        }\n      }\n      __syncwarp()" REPLACE "        }\n      }\n      static_cast<void>(0)")
endif()
# The race above corrupts no result as long as the warp's lanes run in step, so racecheck is its test
# (the stage's own racecheck run, at the same size, is the control).
if(TARGET broken_unaligned_rows_no_syncwarp AND CUDA_STAGES_COMPUTE_SANITIZER)
  add_test(NAME broken_unaligned_rows_no_syncwarp.caught_by_racecheck
           COMMAND "${CUDA_STAGES_COMPUTE_SANITIZER}" --tool racecheck --error-exitcode 1
                   $<TARGET_FILE:broken_unaligned_rows_no_syncwarp> --m 37 --n 29 --k 53 --reps 1 --warmup 0)
  set_tests_properties(broken_unaligned_rows_no_syncwarp.caught_by_racecheck PROPERTIES
    LABELS sanitizer SKIP_RETURN_CODE 77 SKIP_REGULAR_EXPRESSION "${CUDA_STAGES_NO_GPU_REGEX}"
    PASS_REGULAR_EXPRESSION "RACECHECK SUMMARY: [1-9]")
endif()
