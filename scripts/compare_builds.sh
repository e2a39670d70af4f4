#!/usr/bin/env bash
# Two builds of the matrix-product stages, side by side on one GPU: each stage at each size in
# build A and in build B, one process each, alternating, several rounds, so that both see the same
# machine. For a change that must not move a stage's speed (a refactoring), or must move it (a fix):
# the ratio of the two medians is the figure, never either time alone. Usage:
#   scripts/compare_builds.sh <build-a> <build-b> <log-dir> [--stages "12 13 ..."] [--sizes "4096 8192 4099"]
#                             [--rounds N] [--reps N]
# Each run is `<stage> --size N --check sample --reps R` (every result must PASS); prints one row per
# stage and size: the median over the rounds of each build's kernel time (ms), B / A in speed, and
# each build's % of cuBLAS in its own processes. Exit status: 0 when every run passed, 1 otherwise.
set -u
export LC_ALL=C
a=${1:?usage: compare_builds.sh <build-a> <build-b> <log-dir> [options]}
b=${2:?usage: compare_builds.sh <build-a> <build-b> <log-dir> [options]}
logs=${3:?usage: compare_builds.sh <build-a> <build-b> <log-dir> [options]}
shift 3
stages="12 13 14 15 16 17 18 19 20 21 22" sizes="4096 8192 4099" rounds=2 reps=20
while (($#)); do
  case $1 in
    --stages) stages=$2; shift ;;
    --sizes) sizes=$2; shift ;;
    --rounds) rounds=$2; shift ;;
    --reps) reps=$2; shift ;;
    *) echo "error: unknown option '$1'" >&2; exit 2 ;;
  esac
  shift
done
mkdir -p "$logs"
status=0
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$2"; }
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
printf '%-22s %-6s %10s %10s %8s %9s %9s\n' stage size "A ms" "B ms" "B/A" "A %cuBLAS" "B %cuBLAS"
for number in $stages; do
  for size in $sizes; do
    declare -A times=() pcts=()
    stage=""
    for ((round = 1; round <= rounds; ++round)); do
      for side in a b; do
        build=${!side}
        exe=$(ls -d "$build"/"$number"_*/ 2>/dev/null | head -1)
        [[ -n $exe ]] || continue
        stage=$(basename "$exe")
        log="$logs/${side}_${stage}_${size}_$round.log"
        "$exe/$stage" --size "$size" --check sample --reps "$reps" >"$log" 2>&1
        line=$(grep '^RESULT' "$log" | tail -1)
        if [[ $line != *"Result = PASS"* ]]; then
          echo "FAIL: $side $stage $size (see $log)" >&2
          status=1
          continue
        fi
        times[$side]+="$(field time_ms "$line") "
        pcts[$side]+="$(field pct_cuBLAS "$line") "
      done
    done
    [[ -n $stage ]] || continue
    ta=$(tr ' ' '\n' <<<"${times[a]:-}" | grep . | median)
    tb=$(tr ' ' '\n' <<<"${times[b]:-}" | grep . | median)
    pa=$(tr ' ' '\n' <<<"${pcts[a]:-}" | grep . | median)
    pb=$(tr ' ' '\n' <<<"${pcts[b]:-}" | grep . | median)
    ratio=$(awk -v x="$ta" -v y="$tb" 'BEGIN { if (x == "-" || y == "-") print "-"; else printf "%.3f", x / y }')
    printf '%-22s %-6s %10s %10s %8s %9s %9s\n' "$stage" "$size" "$ta" "$tb" "$ratio" "$pa" "$pb"
    unset times pcts
  done
done
exit $status
