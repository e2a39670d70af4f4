#!/usr/bin/env bash
# Tests check_plan.cmake without the stages: small scripts stand in for them and print a right or a
# wrong launch plan. Each case checks the exit status and a line the check must print. Registered in
# tests/grader/CMakeLists.txt; exit status 0 when every case holds.
set -u
here=$(cd "$(dirname "$0")" && pwd)
cmake=${CMAKE_COMMAND:-cmake}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0

# stand_in <name> <lines...>: a program that prints the lines, whatever its arguments.
stand_in() {
  local name=$1
  shift
  printf '#!/bin/sh\ncat <<'"'"'EOF'"'"'\n' >"$work/$name"
  printf '%s\n' "$@" >>"$work/$name"
  printf 'EOF\n' >>"$work/$name"
  chmod +x "$work/$name"
}

# expect <status> <text the output must hold> <program> <kind> <args, '|'-separated>
expect() {
  local status=$1 text=$2 program=$3 kind=$4 args=$5 output code
  output=$("$cmake" "-DPROGRAM=$work/$program" "-DARGS=$args" "-DKIND=$kind" -P "$here/check_plan.cmake" 2>&1)
  code=$?
  if (((status == 0) == (code == 0))) && [[ $output == *"$text"* ]]; then
    echo "ok (exit $code): $text"
  else
    echo "FAILED: $program $kind $args: expected exit $status and the text '$text'"
    echo "  exit $code; output:"
    while IFS= read -r line; do echo "  | $line"; done <<<"$output"
    failures=$((failures + 1))
  fi
}

# 03: 1000 x 777 in blocks of 16 rows x 8 columns needs 98 x 63 blocks of 8 x 16 threads, in either
# way of printing a grid; a grid one block short along x, and one of a single block, are named.
stand_in right03 "03_multiblock: C (1000x777x5) = A * B" \
  "launch multiblock: grid (x, y) = (98, 63) blocks, block (x, y) = (8, 16) threads (6174 blocks x 128 threads), 0 bytes of shared memory per block"
stand_in right03_old "launch multiblock: grid 98 x 63 blocks, block 8 x 16 threads (6174 blocks x 128 threads), 0 bytes of shared memory per block"
stand_in short03 "launch multiblock: grid (x, y) = (97, 63) blocks, block (x, y) = (8, 16) threads (6111 blocks x 128 threads), 0 bytes of shared memory per block"
stand_in stub03 "launch multiblock: grid (x, y) = (1, 1) blocks, block (x, y) = (16, 8) threads (1 blocks x 128 threads), 0 bytes of shared memory per block"
args03="--plan|--m|1000|--n|777|--k|5|--block|16x8"
expect 0 "the launch plan is right" right03 multiblock "$args03"
expect 0 "the launch plan is right" right03_old multiblock "$args03"
expect 1 "03.grid: 777 columns of C in blocks of 8 columns need 98 blocks along x; the plan has 97" short03 multiblock "$args03"
expect 1 "03.grid: 1000 rows of C in blocks of 16 rows need 63 blocks along y; the plan has 1 along y and 1 along z" stub03 multiblock "$args03"
expect 1 "blocks of 8 x 16 threads (x across the columns); the plan has 16 x 8" stub03 multiblock "$args03"
# Past 65535 rows of blocks the grid goes on along z.
stand_in tall03 "launch multiblock: grid (x, y) = (2, 65535) blocks, block (x, y) = (32, 1) threads, 0 bytes of shared memory per block"
expect 1 "65535 along y in 2 layers along z; the plan has 65535 along y and 1 along z" tall03 multiblock \
  "--plan|--m|65536|--n|33|--k|7|--block|1x32"

# 07: a 64 x 64 tile at 16 elements per thread is 256 threads.
stand_in stub07 "launch register1d_64x64x4/16: grid (x, y) = (9, 16) blocks, block (x, y) = (1, 1) threads (144 blocks x 1 threads), 2048 bytes of shared memory per block"
expect 1 "07.block: a 64 x 64 tile of C at 16 elements of a column per thread needs 256 threads per block, in one dimension; the plan has 1" \
  stub07 register1d "--plan|--m|1023|--n|517|--k|771|--params|64x64x4/16"

# 05: the 64-row tile needs ceil(1000 / 64) = 16 blocks along y.
plan05=(
  "  memcpy        cudaMemcpy device to device of 4228000 bytes, the yardstick"
  "  copy          grid (x, y) = (34, 32) blocks, block (x, y) = (32, 32) threads, 0 bytes of shared memory per block"
  "  copy_32x8     grid (x, y) = (34, 32) blocks, block (x, y) = (32, 8) threads, 0 bytes of shared memory per block"
  "  naive         grid (x, y) = (34, 32) blocks, block (x, y) = (32, 32) threads, 0 bytes of shared memory per block"
  "  tiled         grid (x, y) = (34, 32) blocks, block (x, y) = (32, 32) threads, 4096 bytes of shared memory per block"
  "  tiled_padded  grid (x, y) = (34, 32) blocks, block (x, y) = (32, 32) threads, 4224 bytes of shared memory per block")
stand_in right05 "${plan05[@]}" \
  "  padded_64x32  grid (x, y) = (34, 16) blocks, block (x, y) = (32, 8) threads, 8448 bytes of shared memory per block"
stand_in wrong05 "${plan05[@]}" \
  "  padded_64x32  grid (x, y) = (34, 32) blocks, block (x, y) = (32, 8) threads, 8192 bytes of shared memory per block"
expect 0 "the launch plan is right" right05 transpose "--plan|--height|1000|--width|1057"
expect 1 "05_transpose padded_64x32: 1000 input rows in tiles of 64 rows need 16 blocks along y; the plan has 32" \
  wrong05 transpose "--plan|--height|1000|--width|1057"
expect 1 "05_transpose padded_64x32: 8448 bytes of shared memory per block (2112 floats); the plan has 8192" \
  wrong05 transpose "--plan|--height|1000|--width|1057"

# 06: the book's grid is min(32, ceil(N / block)); the others depend on the GPU too ("up to").
plan06=(
  "  sm_grid  grid up to 3907 blocks, block 256 threads, 1024 bytes of shared memory per block"
  "  atomic   grid up to 3907 blocks, block 256 threads, 1024 bytes of shared memory per block"
  "  shuffle  grid up to 977 blocks, block 256 threads, 128 bytes of shared memory per block")
stand_in right06 "  book     grid 32 blocks, block 256 threads, 1024 bytes of shared memory per block" "${plan06[@]}"
stand_in wrong06 "  book     grid 3907 blocks, block 256 threads, 1024 bytes of shared memory per block" "${plan06[@]}"
expect 0 "the launch plan is right" right06 dot "--plan|--n|1000003"
expect 1 "06_dot_reduction book: N = 1000003 in blocks of 256 threads, at most 32 blocks as the book: 32 blocks; the plan has 3907" \
  wrong06 dot "--plan|--n|1000003"

# A program that does not print its plan (exit 77: it looked for a GPU) fails with its exit code.
printf '#!/bin/sh\necho "SKIP: no usable CUDA GPU"\nexit 77\n' >"$work/no_plan"
chmod +x "$work/no_plan"
expect 1 "got exit code '77'" no_plan multiblock "$args03"

if ((failures)); then
  echo "$failures case(s) failed"
  exit 1
fi
echo "every case passed"
