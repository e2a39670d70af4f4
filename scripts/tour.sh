#!/usr/bin/env bash
# The tour: runs every built stage in order, at the size that shows its lesson, and prints one
# progression table. Usage: scripts/tour.sh <build-dir> [results-dir]   (the 'tour' target runs it)
#
# Writes <results-dir>/tour.json (every stage's --json object), tour.csv (one row per variant) and,
# where python3 with matplotlib is installed, tour.png. Exit status: 0 when every stage that ran
# passed (a stage skipped for want of a GPU counts as passed), 1 otherwise.
set -u
build=${1:?usage: tour.sh <build-dir> [results-dir]}
results=${2:-$build/results}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$results"

# stage | arguments that show its lesson | what changed from the previous stage
# (the GPU matmul stages run at 4096^3, where the GPU is full; the CPU loop at 1000^3, where it
# finishes in seconds: GFLOP/s compare across the two sizes, times do not)
plan=(
  "01_cpu_matmul|--size 1000|CPU loops: i-j-k, then i-k-j"
  "02_naive_kernel|--size 4096|one GPU thread per element of C"
  "03_multiblock|--size 4096|2-D grid of 2-D blocks, C in tiles"
  "04_shared_tiled|--size 4096|shared-memory tiles walk along K"
  "05_transpose|--size 8192|transpose through a padded tile"
  "06_dot_reduction|--n 268435456 --inputs random|dot: tree, atomics, warp shuffles"
)

failed=0 skipped=() json_objects=()
rm -f "$results/.rows"
csv="$results/tour.csv"
echo "stage,variant,what,size,median_ms,rate,unit,pct_peak,pct_yardstick,yardstick,check" >"$csv"
total=${#plan[@]} index=0
for entry in "${plan[@]}"; do
  IFS='|' read -r stage args changed <<<"$entry"
  index=$((index + 1))
  exe="$build/$stage/$stage"
  [[ -x "$exe" ]] || continue
  echo "[$index/$total] $stage $args" >&2
  # shellcheck disable=SC2086
  output=$("$exe" $args --json 2>&1)
  code=$?
  if [[ $code -eq 77 ]]; then
    skipped+=("$stage")
    echo "$stage|$changed|-|-|-|-||-|-|SKIPPED" >>"$results/.rows"
    continue
  fi
  json=$(grep '^{"stage"' <<<"$output" | tail -n 1)
  if [[ -z $json ]]; then
    failed=1
    echo "$stage|$changed|-|-|-|-||-|-|FAILED (exit $code)" >>"$results/.rows"
    printf '%s\n' "$output" | tail -n 8 >&2
    continue
  fi
  [[ $code -eq 0 ]] || failed=1
  json_objects+=("$json")
  # One CSV row per variant, and the stage's headline row for the table.
  awk -v stage="$stage" -v changed="$changed" -v csv="$csv" -f "$here/tour_rows.awk" <<<"$json" >>"$results/.rows"
done

# The progression table: one row per stage (its headline variant). "x prev" is the speed-up over
# the previous stage, as a ratio of GFLOP/s, for the matrix-multiply stages (one problem); the
# transpose and the dot product are problems of their own.
{
  printf '\n%-17s %-36s %-13s %-15s %10s %15s %7s %6s %6s  %s\n' stage "what changed" variant size "time ms" rate \
    "x prev" "% lib" "% peak" result
  prev_rate="" prev_unit=""
  while IFS='|' read -r stage changed variant size ms rate unit pct_lib pct_peak result; do
    speedup="-"
    if [[ $unit == GFLOP/s && $prev_unit == GFLOP/s && $rate != "-" && $prev_rate != "-" ]]; then
      speedup=$(awk -v a="$rate" -v b="$prev_rate" 'BEGIN { printf "%.1fx", a / b }')
    fi
    printf '%-17s %-36s %-13s %-15s %10s %15s %7s %6s %6s  %s\n' "$stage" "$changed" "$variant" "$size" "$ms" \
      "$rate $unit" "$speedup" "$pct_lib" "$pct_peak" "$result"
    prev_rate=$rate prev_unit=$unit
  done <"$results/.rows"
} | tee "$results/tour.txt"
rm -f "$results/.rows"

# Every stage's JSON object, as one array.
{
  echo "["
  for i in "${!json_objects[@]}"; do
    printf '%s%s\n' "${json_objects[$i]}" "$([[ $i -lt $((${#json_objects[@]} - 1)) ]] && echo ,)"
  done
  echo "]"
} >"$results/tour.json"

echo
echo "results: $results/tour.json, $results/tour.csv, $results/tour.txt"
if ((${#skipped[@]})); then
  echo "No usable CUDA GPU here, so ${#skipped[@]} GPU stage(s) did not run (${skipped[*]})."
  echo "Stage 01 needs no GPU; run the tour on a machine with an NVIDIA GPU and its driver for the rest."
fi
plotted=0
for python in python3 /usr/bin/python3; do
  if command -v "$python" >/dev/null 2>&1 && "$python" -c 'import matplotlib' >/dev/null 2>&1; then
    "$python" "$here/plot_tour.py" "$results/tour.json" "$results/tour.png" && echo "plot: $results/tour.png"
    plotted=1
    break
  fi
done
((plotted)) || echo "plot: skipped (python3 with matplotlib not found)"
exit $failed
