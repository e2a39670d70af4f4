# Stage 27's new hazard: the rule's preference for buffers of 128 columns of K, which must hold where A
# streams through the L2 and only there, and only between twins, the same tile in both kinds of
# buffers. Nothing is wrong in C either way, only slow; the stage's plan checks see it without a GPU:
# each broken copy's plan, at the shape of the check it breaks, does not match it. The plans run with
# the GPU hidden, so the copies keep the new instance alone. (Included from
# tests/broken/CMakeLists.txt; cs_add_broken_copy is defined in broken_copy.cmake.)

if(TARGET 27_even_streams)
  # The preference wherever a twin is weighed, A in the L2 or not: at 4096 x 256 x 4096 (A of 34 MB)
  # 64 x 128 tiles go into four buffers of 128 columns, where eight of 64 are faster.
  cs_add_broken_copy(even_streams_everywhere 27_even_streams PARAMS 64x128x128/s4
    FIND "narrow = a_streams_through_l2(shape, machine) && tile.block_k == 64 &&"
    REPLACE "narrow = tile.block_k == 64 &&")
  add_test(NAME broken_even_streams_everywhere.caught_by_plan
           COMMAND bash -c "out=$(\"$0\" --plan --m 4096 --n 256 --k 4096) || exit 1; printf '%s\\n' \"$out\" | grep chosen; ! grep -q 'chosen: 64x128x64/s8, split' <<<\"$out\""
                   $<TARGET_FILE:broken_even_streams_everywhere>)
  # Twins by their step along K alone: where A streams and any tile in buffers of 128 columns is
  # weighed, every tile in buffers of 64 gives way, whatever its size. At 8192^3 the rule's 128 x 256
  # tiles give way to 64 x 128 (or 64 x 64) tiles in buffers of 128 columns.
  cs_add_broken_copy(even_streams_twin_by_k 27_even_streams PARAMS 64x128x128/s4
    FIND "return twin.block_m == tile.block_m && twin.block_n == tile.block_n && twin.block_k == 128"
    REPLACE "return twin.block_k == 128")
  add_test(NAME broken_even_streams_twin_by_k.caught_by_plan
           COMMAND bash -c "out=$(\"$0\" --plan --size 8192) || exit 1; printf '%s\\n' \"$out\" | grep chosen; ! grep -q 'chosen: 128x256x64/s4, split never' <<<\"$out\""
                   $<TARGET_FILE:broken_even_streams_twin_by_k>)
  set_tests_properties(broken_even_streams_everywhere.caught_by_plan broken_even_streams_twin_by_k.caught_by_plan
                       PROPERTIES LABELS cpu ENVIRONMENT "CUDA_VISIBLE_DEVICES=")
endif()
