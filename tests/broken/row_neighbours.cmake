# Stage 28's new hazards: which tile each of a pair of neighbours takes, and where a split tile's first
# piece finds the later ones, now that a unit is two blocks that are not a cluster; and the rule's
# preference for neighbours, which must hold where two blocks read each of A's rows and only there.
# (Included from tests/broken/CMakeLists.txt; cs_add_broken_copy is defined in broken_copy.cmake.)
# The copies run on a GPU keep the 192 x 192 instance beside the new ones: the plan asks its pairs how
# many clusters fit on the GPU.

if(TARGET 28_row_neighbours)
  # Both neighbours take the left tile: the right tiles of C are never written (and the left one is
  # written twice, the same sums). The poison the flow writes into C before each run stays there, and
  # the check reports FAIL.
  cs_add_broken_copy(neighbours_same_column 28_row_neighbours PARAMS 64x64x128/s6 192x192x64/s4
    FIND "block_col = (kNeighbours ? unit_col * 2 + rank : unit_col) * kBlockN"
    REPLACE "block_col = (kNeighbours ? unit_col * 2 : unit_col) * kBlockN")
  cs_add_run_test(broken_neighbours_same_column.caught_131x200x392 broken_neighbours_same_column GPU
                  ARGS --m 131 --n 200 --k 392 --neighbours yes --params 64x64x128/s6 --reps 1 --warmup 0
                  CAUGHT_REGEX "Result = FAIL")
  # A split tile's first piece looks for the later ones a block on, as in a cluster of one: with
  # neighbours, the block next to it is its neighbour, which holds the first piece of the other tile
  # and never raises a flag. The first piece waits for ever (or, were the flag raised, adds the sums
  # of another tile): hang_or_fail.sh, as for stage 26's stripes.
  cs_add_broken_copy(neighbours_gather_a_block_on 28_row_neighbours PARAMS 64x64x128/s6 192x192x64/s4
    FIND "for (int block = blockIdx.x + kUnit" REPLACE "for (int block = blockIdx.x + kCluster")
  add_test(NAME broken_neighbours_gather_a_block_on.caught_131x300x392
           COMMAND bash "${CMAKE_CURRENT_SOURCE_DIR}/hang_or_fail.sh" 6
                   $<TARGET_FILE:broken_neighbours_gather_a_block_on> --m 131 --n 300 --k 392 --blocks 4
                   --split always --neighbours yes --params 64x64x128/s6 --reps 1 --warmup 0)
  set_tests_properties(broken_neighbours_gather_a_block_on.caught_131x300x392 PROPERTIES LABELS gpu COST 20
                       SKIP_RETURN_CODE 77 SKIP_REGULAR_EXPRESSION "${CUDA_STAGES_NO_GPU_REGEX}")
  # The rule's preference, broken two ways; nothing is wrong in C either way, only slow, and the
  # stage's plan checks see it without a GPU (the plans run with the GPU hidden, so these copies keep
  # the rule's instances at the shapes they plan). Neighbours with one column of tiles: at 4096 x 64 x
  # 4096 every pair's right block has nothing to do. Each check passes where the plan is not the one the
  # stage's check expects.
  cs_add_broken_copy(neighbours_one_column 28_row_neighbours PARAMS 64x64x128/s6
    FIND "shape.m > shape.n && shape.n > tile.block_n" REPLACE "shape.m > shape.n")
  add_test(NAME broken_neighbours_one_column.caught_by_plan
           COMMAND bash -c "out=$(\"$0\" --plan --m 4096 --n 64 --k 4096) || exit 1; printf '%s\\n' \"$out\" | grep chosen: ; ! grep -qE 'chosen: 64x64x128/s6, split [a-z]+: 64 tiles' <<<\"$out\""
                   $<TARGET_FILE:broken_neighbours_one_column>)
  # Neighbours whatever the larger input: at 256 x 4096 x 4096 (A of 2 MB, B of 34 MB) the rule's 64 x
  # 128 tiles go to neighbours, which read the same few rows of A that every block reads anyway.
  cs_add_broken_copy(neighbours_short_a 28_row_neighbours PARAMS 64x128x64/s8
    FIND "shape.m > shape.n && shape.n > tile.block_n" REPLACE "shape.n > tile.block_n")
  add_test(NAME broken_neighbours_short_a.caught_by_plan
           COMMAND bash -c "out=$(\"$0\" --plan --m 256 --n 4096 --k 4096) || exit 1; printf '%s\\n' \"$out\" | grep chosen: ; ! grep -qE 'chosen: [0-9x/s]+, split [a-z]+: [0-9]+ tiles' <<<\"$out\""
                   $<TARGET_FILE:broken_neighbours_short_a>)
  set_tests_properties(broken_neighbours_one_column.caught_by_plan broken_neighbours_short_a.caught_by_plan
                       PROPERTIES LABELS cpu ENVIRONMENT "CUDA_VISIBLE_DEVICES=")
endif()
