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
plan=(
  "01_cpu_matmul|--size 1000|CPU triple loop: i-j-k, then i-k-j"
  "02_naive_kernel|--size 1000|one GPU thread per element of C"
  "03_multiblock|--size 1000|2-D grid of 2-D blocks, a tile of C each"
  "04_shared_tiled|--size 1000|shared-memory tiles along K"
  "05_transpose|--size 8192|transpose: coalesced both ways via a padded tile"
  "06_dot_reduction|--n 268435456 --inputs random|dot product: tree, atomics, warp shuffles"
)

failed=0 skipped=() json_objects=() rows=()
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
    rows+=("$stage|-|$changed|-|-|-|-|-|-|SKIPPED")
    continue
  fi
  json=$(grep '^{"stage"' <<<"$output" | tail -n 1)
  if [[ -z $json ]]; then
    failed=1
    rows+=("$stage|-|$changed|-|-|-|-|-|-|FAILED (exit $code)")
    printf '%s\n' "$output" | tail -n 8 >&2
    continue
  fi
  [[ $code -eq 0 ]] || failed=1
  json_objects+=("$json")
  # One CSV row per variant, and the stage's headline row for the table.
  awk -v stage="$stage" -v changed="$changed" -v csv="$csv" -f "$here/tour_rows.awk" <<<"$json" >>"$results/.rows"
done

# The progression table: one row per stage (its headline variant), speed-up over the previous
# stage when both solved the same problem at the same size.
{
  printf '\n%-17s %-44s %-9s %10s %12s %8s %8s %7s  %s\n' stage "what changed" variant "time ms" rate "x prev" "% lib" "% peak" result
  prev_size="" prev_ms=""
  while IFS='|' read -r stage changed variant size ms rate unit pct_lib pct_peak result; do
    speedup="-"
    if [[ -n $prev_size && $size == "$prev_size" && $ms != "-" && $prev_ms != "-" ]]; then
      speedup=$(awk -v a="$prev_ms" -v b="$ms" 'BEGIN { printf "%.1fx", a / b }')
    fi
    printf '%-17s %-44s %-9s %10s %12s %8s %8s %7s  %s\n' "$stage" "$changed" "$variant" "$ms" "$rate $unit" "$speedup" "$pct_lib" "$pct_peak" "$result"
    prev_size=$size prev_ms=$ms
  done < <(cat "$results/.rows" 2>/dev/null; for r in "${rows[@]+"${rows[@]}"}"; do echo "$r"; done)
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
  echo "No usable CUDA GPU here: ${skipped[*]} did not run. Stage 01 needs none; run the tour on a"
  echo "machine with an NVIDIA GPU and the CUDA driver for the rest."
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
