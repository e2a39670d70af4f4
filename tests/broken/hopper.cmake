# Stage 14's new hazard: the matrix descriptors, which tell the tensor cores how a tile lies in shared
# memory; stage 15's: the asynchrony of wgmma, whose reads of a tile run on after the instruction is
# issued. (Included from tests/broken/CMakeLists.txt; cs_add_broken_copy is defined in
# tensor_cores.cmake.)

if(TARGET 14_wgmma)
  # The descriptors say "no swizzle" while the tiles are stored swizzled.
  cs_add_broken_copy(wg_descriptor_unswizzled 14_wgmma
    FIND "static_cast<std::uint64_t>(group_bytes >> 4) << 32 | 1ull << 62"
    REPLACE "static_cast<std::uint64_t>(group_bytes >> 4) << 32 | 0ull << 62")
  # B's stripes said to be half as far apart as they are: columns 64 .. 127 read from the middle of
  # the first stripe (so the odd size has n > 64).
  cs_add_broken_copy(wg_stripe_bytes 14_wgmma
    FIND "matrix_descriptor(tile_b + i * 64, kBlockK * 128, 1024)"
    REPLACE "matrix_descriptor(tile_b + i * 64, kBlockK * 64, 1024)")
  foreach(broken wg_descriptor_unswizzled wg_stripe_bytes)
    cs_add_run_test(broken_${broken}.caught_aligned broken_${broken} GPU
                    ARGS --m 136 --n 72 --k 88 --reps 1 PASS_REGEX "Result = FAIL")
    cs_add_run_test(broken_${broken}.caught_odd broken_${broken} GPU
                    ARGS --m 131 --n 67 --k 71 --reps 1 PASS_REGEX "Result = FAIL")
  endforeach()
endif()

if(TARGET 15_wgmma_async)
  # Stage 14's ring distance kept with one group left in flight: tiles copied kStages - 1 ahead, so
  # step t copies into the buffer of tile t - 1, whose wgmma may still be reading it.
  cs_add_broken_copy(wa_ring_ahead 15_wgmma_async
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
                  ARGS --size 1024 --params 128x256x64/s4 --reps 1 PASS_REGEX "Result = FAIL")
  cs_add_run_test(broken_wa_ring_ahead.caught_long_k broken_wa_ring_ahead GPU
                  ARGS --m 2048 --n 2048 --k 8192 --params 128x256x64/s3 --check sample --reps 1
                  PASS_REGEX "Result = FAIL")
endif()
