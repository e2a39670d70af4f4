# Stage 12's hazards: what bf16 changes in stage 11's kernel. A 16-byte chunk of a row is 8 elements
# now, not 4, so a row is on 16-byte lines only when its length is a multiple of 8; and a thread
# reads a pair of A along K for two steps at once, each half of which must meet its own row of B.
# Both broken copies are made from the stage's own source with one passage changed
# (cs_add_broken_copy), so they follow the stage whenever it changes. (Included from
# tests/broken/CMakeLists.txt.)

if(TARGET 12_bf16_inputs)
  # The 16-byte path chosen as for FP32, wherever n and k are multiples of 4: at n = 36, k = 44 the
  # rows of A and B start 8 bytes off a 16-byte line every other row, and a 16-byte cp.async from
  # there is a misaligned address (the flow reports the CUDA error and exits non-zero).
  cs_add_broken_copy(bf16_chunks_of_four 12_bf16_inputs PARAMS 128x128x32/64x32/8x8/s3
    FIND "kKernels.find(params, cs::rows_are_16_byte_aligned(p))"
    REPLACE "kKernels.find(params, p.n % 4 == 0 && p.k % 4 == 0)")
  cs_add_run_test(broken_bf16_chunks_of_four.caught_40x36x44 broken_bf16_chunks_of_four GPU
                  ARGS --m 40 --n 36 --k 44 --params 128x128x32/64x32/8x8/s3 --reps 1 --warmup 0
                  CAUGHT_REGEX "misaligned address")
  # The two halves of A's pair crossed: A[row][i] multiplied by row i + 1 of B and A[row][i + 1] by
  # row i. Every term is a real product of the inputs, so no value is out of range: only the sums are
  # wrong, at an aligned size (16-byte copies) and an odd one (2-byte copies).
  cs_add_broken_copy(bf16_pair_crossed 12_bf16_inputs PARAMS 128x128x32/64x32/8x8/s3
    FIND "sums[r][cc] += fragment_a[r].x * fragment_b[0][cc]" REPLACE "sums[r][cc] += fragment_a[r].x * fragment_b[1][cc]"
    FIND "sums[r][cc] += fragment_a[r].y * fragment_b[1][cc]" REPLACE "sums[r][cc] += fragment_a[r].y * fragment_b[0][cc]")
  cs_add_run_test(broken_bf16_pair_crossed.caught_aligned_and_odd broken_bf16_pair_crossed GPU
                  ARGS --m 136 --n 72 --k 88 --also 37x29x53 --params 128x128x32/64x32/8x8/s3 --reps 1
                  CAUGHT_REGEX "Result = FAIL.*Result = FAIL")
endif()
