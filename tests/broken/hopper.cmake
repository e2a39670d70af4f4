# Stage 14's new hazard: the matrix descriptors, which tell the tensor cores how a tile lies in shared
# memory. (Included from tests/broken/CMakeLists.txt; cs_add_broken_copy is defined in
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

