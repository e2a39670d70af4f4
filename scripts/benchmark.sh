#!/usr/bin/env bash
# The benchmark behind the chapters' "Measured" tables: each GPU stage at the sizes its chapter
# reports, with the library yardstick measured in the same run. Usage:
#   scripts/benchmark.sh <build-dir> <log-dir>
# Writes one log per run into <log-dir> and prints every RESULT line. Not a test: timings on a
# shared GPU drift, so compare ratios from one run, never absolute times across runs. A stage this
# GPU cannot run (exit 77: 14 and 15 need compute capability 9.0) is listed as skipped; the exit
# status is 1 when a run failed, 77 when every run was skipped (no usable GPU), else 0.
set -u
build=${1:?usage: benchmark.sh <build-dir> <log-dir>}
logs=${2:?usage: benchmark.sh <build-dir> <log-dir>}
mkdir -p "$logs"
status=0 ran=0
run() { # name, then the command
  local name=$1 code=0
  shift
  echo "== $name: $*" | sed "s|$build/||"
  "$@" >"$logs/$name.log" 2>&1 || code=$?
  if ((code == 77)); then
    grep -m1 '^SKIP' "$logs/$name.log" | sed 's/^SKIP: /   skipped: /'
    return
  fi
  ran=1
  ((code == 0)) || status=1
  grep -i -E "$highlights" "$logs/$name.log" | sed 's/^/   /'
}
# The lines worth seeing at once (the whole output stays in the log), matched ignoring case: the
# final line, each variant's check, the clock64 stamps (a heading and three indented lines), the
# global loads per element of C (04), the padding gain (05), and any line that says what is faster.
highlights='^(RESULT|  [a-z_0-9]+ check:|clock64|  (max\(end\)|longest single|the kernel by)| *global loads|.*padding column|.*faster)'

{
  echo "date: $(date -u +%Y-%m-%dT%H:%MZ)"
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader 2>/dev/null
} | tee "$logs/machine.txt"

m=4096
run 02_n$m "$build/02_naive_kernel/02_naive_kernel" --size $m --check sample --reps 10 --json
run 03_n$m "$build/03_multiblock/03_multiblock" --size $m --check sample --reps 10 --json
for tile in 8 16 32; do
  run 04_n${m}_t$tile "$build/04_shared_tiled/04_shared_tiled" --size $m --tile $tile --check sample --reps 10 --json
done
# The register-tiled stages: every parameter set each offers (its --help lists them) at 4096^3, and
# its default at the sizes where edges and the L2 cache matter: 2048, 4099 (odd: edges everywhere,
# rows not 16-byte aligned) and 8192.
for stage in 07_register_tile_1d 08_register_tile_2d 09_vectorized 10_warp_tiling 11_pipelined 12_bf16_inputs 13_tensor_cores 14_ldmatrix_swizzle 15_wgmma 16_wgmma_async 17_tma 18_warp_specialized 19_persistent 20_split_k 21_tma_store 22_unaligned_rows 23_kernel_choice 24_clusters 25_wide_k_steps 26_tiles_of_192 27_even_streams 28_row_neighbours; do
  exe="$build/$stage/$stage"
  [[ -x $exe ]] || continue
  params=$("$exe" --help | sed -n 's/^ *--params \([^ ]*\).*/\1/p' | tr '|' ' ')
  for p in $params; do
    run "${stage%%_*}_n${m}_${p//[^a-zA-Z0-9]/_}" "$exe" --size $m --params "$p" --check sample --reps 10 --json
  done
  for size in 2048 4099 8192; do
    run "${stage%%_*}_n$size" "$exe" --size $size --check sample --reps 10 --json
  done
  # From 11 on, also a small square and two rectangles: a short, wide C and a short K.
  if [[ $stage > 11 ]]; then
    run "${stage%%_*}_n1024" "$exe" --size 1024 --check sample --reps 10 --json
    run "${stage%%_*}_8192x1024x4096" "$exe" --m 8192 --n 1024 --k 4096 --check sample --reps 10 --json
    run "${stage%%_*}_4096x4096x512" "$exe" --m 4096 --n 4096 --k 512 --check sample --reps 10 --json
  fi
done
run 05_n8192 "$build/05_transpose/05_transpose" --size 8192 --reps 20 --json
run 05_n1024 "$build/05_transpose/05_transpose" --size 1024 --reps 20
run 06_n2p28 "$build/06_dot_reduction/06_dot_reduction" --n 268435456 --inputs random --reps 20 --json
run 06_book "$build/06_dot_reduction/06_dot_reduction"
((ran)) || exit 77
exit $status
