#!/usr/bin/env bash
# The tour: runs every built stage in order, at the size that shows its lesson, and prints one
# progression table. Usage: scripts/tour.sh <build-dir> [results-dir] [--quick]   (the 'tour' target
# runs it; --quick runs every stage at a small size, to check the tour works, not to measure: its test)
#
# Writes <results-dir>/tour.json (every stage's --json object, in one array), tour.meta.json (the run:
# GPU, driver, toolkit, date, commit, command, and each stage's arguments and outcome), tour.csv (one
# row per variant), tour.txt (the table) and, where python3 with matplotlib is installed, tour.png.
# scripts/results_table.py makes the README's results table and chart from the first two. The
# reports are read by CMake's JSON parser (scripts/read_report.cmake). A stage that finds no usable
# GPU exits 77 with one line `SKIP: no usable CUDA GPU: <reason>`; the tour lists it as skipped and
# keeps the reason it gave, under the table and in the plot. In a lab, a stage whose code still holds a
# TODO(lab ...) line is not run (NOT WRITTEN). Exit status: 0 when every stage that ran passed (a
# stage skipped for want of a GPU counts as passed) and none is left unwritten, 1 otherwise.
set -u
export LC_ALL=C # a decimal point in printf and awk, whatever the locale
quick=0
args=()
for arg in "$@"; do if [[ $arg == --quick ]]; then quick=1; else args+=("$arg"); fi; done
build=${args[0]:?usage: tour.sh <build-dir> [results-dir] [--quick]}
results=${args[1]:-$build/results}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
command_line="scripts/tour.sh $*"
command_line=${command_line//"$root"\//} # paths inside the repository, relative to it
started=$(date -u +%Y-%m-%dT%H:%M:%SZ)
mkdir -p "$results"
# The cmake that configured the build reads the reports.
cmake=$(sed -n 's/^CMAKE_COMMAND:INTERNAL=//p' "$build/CMakeCache.txt" 2>/dev/null)
cmake=${cmake:-cmake}

# One line per stage, in reading order: stage | arguments that show its lesson | what changed from
# the previous stage. A stage that is not built is left out. (The GPU matmul stages run at 4096^3,
# where the GPU is full; 22 at 4099^3, rows off 16-byte boundaries; 23 at 128 x 8192 x 8192, a short
# A; 24 at 3000^3, rows that are not whole 128-byte lines; 25 at 64 x 4096 x 4096, 64 x 64 tiles; 26 at
# 3000^3 again, 192 x 192 tiles in pairs; 27 at 4096 x 128 x 14336, an A larger than the L2; 28 at
# 4096 x 128 x 4096, a row's two tiles on neighbouring blocks; the CPU loop at 1000^3, where it
# finishes in seconds: GFLOP/s compare across the sizes, times do not.)
plan=(
  "01_cpu_matmul|--size 1000|CPU loops: i-j-k, then i-k-j"
  "02_naive_kernel|--size 4096|one GPU thread per element of C"
  "03_multiblock|--size 4096|2-D grid of 2-D blocks, C in tiles"
  "04_shared_tiled|--size 4096|shared-memory tiles walk along K"
  "05_transpose|--size 8192|transpose through a padded tile"
  "06_dot_reduction|--n 268435456 --inputs random|dot: tree, atomics, warp shuffles"
  "07_register_tile_1d|--size 4096|a column of C per thread, in registers"
  "08_register_tile_2d|--size 4096|a 2-D tile of C per thread, outer products"
  "09_vectorized|--size 4096|16-byte loads, A's tile transposed"
  "10_warp_tiling|--size 4096|block, warp and thread tiles"
  "11_pipelined|--size 4096|next tiles load during the products"
  "12_bf16_inputs|--size 4096|bf16 A and B, FP32 products widened"
  "13_tensor_cores|--size 4096|bf16 on the tensor cores: mma.sync"
  "14_ldmatrix_swizzle|--size 4096|ldmatrix from XOR-swizzled tiles"
  "15_wgmma|--size 4096|a warpgroup's wgmma reads shared memory"
  "16_wgmma_async|--size 4096|wgmma runs on while the warps go on"
  "17_tma|--size 4096|TMA copies the tiles, mbarriers count them"
  "18_warp_specialized|--size 4096|a producer warpgroup copies, consumers multiply"
  "19_persistent|--size 4096|one block per SM walks tile after tile"
  "20_split_k|--size 4096|the last round split along K, odd rows realigned"
  "21_tma_store|--size 4096|C out through shared memory by TMA stores"
  "22_unaligned_rows|--size 4099|rows off 16-byte lines: C a row per store"
  "23_kernel_choice|--m 128 --n 8192 --k 8192|the tile and the split chosen for the problem"
  "24_clusters|--size 3000|pairs of blocks share B: rows read in place"
  "25_wide_k_steps|--m 64 --n 4096 --k 4096|buffers of 128 columns of K for 64 x 64 tiles"
  "26_tiles_of_192|--size 3000|192 x 192 tiles on three consumer warpgroups"
  "27_even_streams|--m 4096 --n 128 --k 14336|A streams in buffers of 128 columns of K"
  "28_row_neighbours|--m 4096 --n 128 --k 4096|a row's two tiles on neighbouring blocks"
)

# format <printf-format> <value>: the value formatted, or '-' when there is none.
# shellcheck disable=SC2059 # the format is the caller's
format() { if [[ $2 == - ]]; then printf -; else printf "$1" "$2"; fi; }
# rate <value>: four significant digits, but whole numbers from 10000 up (no exponent: 47480, not 4.748e+04).
rate() { if [[ $1 != - ]] && awk -v r="$1" 'BEGIN { exit !(r >= 10000) }'; then format %.0f "$1"; else format %.4g "$1"; fi; }
# csv_number <value>: six significant digits (as the report prints them), empty when there is none.
csv_number() { [[ $1 == - ]] || printf '%.6g' "$1"; }

csv=$results/tour.csv
echo "stage,variant,what,size,median_ms,rate,unit,pct_peak,pct_yardstick,yardstick,check" >"$csv"
# One table row per stage: stage|changed|variant|size|ms|rate|unit|% lib|% peak|result
rows=() json_objects=() skipped=() skip_reasons=() failed=0 index=0
outcomes=() # one per stage of the plan, for tour.meta.json: stage|args|changed|ran, skipped, failed or not built|reason
device_lines=""  # the first GPU stage's description of its device
for entry in "${plan[@]}"; do
  IFS='|' read -r stage args changed <<<"$entry"
  if ((quick)); then # small sizes: 01 at 300, the matrix products at 512 (515 and 600 for the odd
    # 4099 and 3000, n and k of 1024), transpose 2048, dot 2^22
    args=$(sed -e 's/--size 1000/--size 300/; s/--size 4096/--size 512/; s/--size 8192/--size 2048/' \
      -e 's/--size 4099/--size 515/; s/--size 3000/--size 600/' \
      -e 's/--n 8192 --k 8192/--n 1024 --k 1024/; s/--n 4096 --k 4096/--n 1024 --k 1024/' \
      -e 's/--n 268435456/--n 4194304/' <<<"$args")
  fi
  index=$((index + 1))
  exe=$build/$stage/$stage
  if [[ ! -x $exe ]]; then
    outcomes+=("$stage|$args|$changed|not built|")
    continue
  fi
  # In a lab (scripts/make_lab.sh), a stage whose code still holds a TODO is not run: a kernel with a
  # step left out can wait forever on a barrier. It fails the tour, naming its TODOs.
  todos=$(grep -ho 'TODO(lab [^)]*)' "$root/$stage"/*.cu "$root/$stage"/*.cuh "$root/$stage"/*.cpp 2>/dev/null |
    sort -u | tr '\n' ' ')
  if [[ -n $todos ]]; then
    failed=1
    rows+=("$stage|$changed|-|-|-|-||-|-|NOT WRITTEN")
    outcomes+=("$stage|$args|$changed|failed|not written: ${todos% } left")
    echo "[$index/${#plan[@]}] $stage: not run, ${todos% } left" >&2
    continue
  fi
  echo "[$index/${#plan[@]}] $stage $args" >&2
  # shellcheck disable=SC2086 # $args is a list of arguments
  output=$("$exe" $args --json 2>&1)
  code=$?
  if ((code == 77)); then
    # The stage's own words: which of the no-GPU reasons it is (common/device_info.cuh).
    reason=$(grep -m1 '^SKIP: ' <<<"$output") || reason="SKIP: exit 77 without a SKIP: line"
    skipped+=("$stage")
    skip_reasons+=("${reason#SKIP: }")
    rows+=("$stage|$changed|-|-|-|-||-|-|SKIPPED")
    outcomes+=("$stage|$args|$changed|skipped|${reason#SKIP: }")
    continue
  fi
  json=$(grep '^{"stage"' <<<"$output" | tail -n 1) # the report's JSON line
  if [[ -z $json ]] || ! report=$("$cmake" -D "JSON=$json" -P "$here/read_report.cmake"); then
    failed=1
    rows+=("$stage|$changed|-|-|-|-||-|-|FAILED (exit $code)")
    outcomes+=("$stage|$args|$changed|failed|exit $code, no report")
    tail -n 8 <<<"$output" >&2
    continue
  fi
  ((code == 0)) || failed=1
  if ((code == 0)); then outcomes+=("$stage|$args|$changed|ran|"); else outcomes+=("$stage|$args|$changed|failed|exit $code"); fi
  # The device the first GPU stage ran on: "Device 0: <name> (compute capability X.Y)", its SMs, its clock.
  if [[ -z $device_lines ]] && grep -q '^Device [0-9]*: ' <<<"$output"; then
    device_lines=$(grep -m1 -A3 '^Device [0-9]*: ' <<<"$output")
  fi
  json_objects+=("$json")
  # One CSV row per variant; the stage's headline variant makes its row of the table.
  while IFS='|' read -r _ size unit yardstick headline result variant what ms rate pct_peak pct_lib check _; do
    [[ $yardstick != - ]] || yardstick=""
    printf '%s,%s,"%s",%s,%s,%s,%s,%s,%s,%s,%s\n' "$stage" "$variant" "${what//\"/\"\"}" "$size" \
      "$(csv_number "$ms")" "$(csv_number "$rate")" "$unit" "$(csv_number "$pct_peak")" \
      "$(csv_number "$pct_lib")" "$yardstick" "$check" >>"$csv"
    if [[ $variant == "$headline" ]]; then
      rows+=("$stage|$changed|$variant|$size|$(format %.4g "$ms")|$(rate "$rate")|$unit|$(format %.1f \
        "$pct_lib")|$(format %.1f "$pct_peak")|$result")
    fi
  done <<<"$report"
done

# The progression table, one row per stage (its headline variant). "x prev" is the speed-up over the
# previous matrix-multiply stage, as a ratio of GFLOP/s (07 follows 04; the transpose and the dot
# product are problems of their own), given only where both ran the same size: stage 01 runs at
# 1000^3 and stage 22 at 4099^3, and a ratio across sizes would compare problems, not stages. The
# first three columns are as wide as their texts.
stage_width=17 changed_width=36 variant_width=13
for row in "${rows[@]}"; do
  IFS='|' read -r stage changed variant _ <<<"$row"
  ((${#stage} <= stage_width)) || stage_width=${#stage}
  ((${#changed} <= changed_width)) || changed_width=${#changed}
  ((${#variant} <= variant_width)) || variant_width=${#variant}
done
line="%-${stage_width}s %-${changed_width}s %-${variant_width}s %-15s %10s %15s %7s %6s %6s  %s\n"
{
  # shellcheck disable=SC2059 # the format is built above
  printf "\n$line" stage "what changed" variant size "time ms" rate "x prev" "% lib" "% peak" result
  prev_rate="" prev_unit="" prev_size=""
  for row in "${rows[@]}"; do
    IFS='|' read -r stage changed variant size ms rate unit pct_lib pct_peak result <<<"$row"
    speedup=-
    if [[ $unit == GFLOP/s && $prev_unit == GFLOP/s && $rate != - && $prev_rate != - && $size == "$prev_size" ]]; then
      speedup=$(awk -v a="$rate" -v b="$prev_rate" 'BEGIN { printf "%.1fx", a / b }')
    fi
    # shellcheck disable=SC2059
    printf "$line" "$stage" "$changed" "$variant" "$size" "$ms" "$rate $unit" "$speedup" "$pct_lib" "$pct_peak" "$result"
    [[ $unit == GFLOP/s ]] && prev_rate=$rate prev_unit=$unit prev_size=$size
  done
  # Why the skipped stages did not run, in their words: once when they all say the same.
  if ((${#skipped[@]})); then
    echo
    distinct=$(printf '%s\n' "${skip_reasons[@]}" | sort -u | wc -l)
    if ((${#skipped[@]} > 1 && distinct == 1)); then
      echo "SKIPPED, all ${#skipped[@]}: ${skip_reasons[0]}"
    else
      for i in "${!skipped[@]}"; do echo "SKIPPED ${skipped[$i]}: ${skip_reasons[$i]}"; done
    fi
    echo "(docs/troubleshooting.md says what each reason means and what to do)"
  fi
} | tee "$results/tour.txt"

# Every stage's JSON object, as one array.
{
  echo "["
  for i in "${!json_objects[@]}"; do
    ((i == 0)) || echo ","
    printf '%s' "${json_objects[$i]}"
  done
  printf '\n]\n'
} >"$results/tour.json"

# The run itself, for whoever reads tour.json later (scripts/results_table.py names it under its
# table): where it ran, with what, from which commit, by which command, and what became of each stage.
json_string() { # a JSON string: backslashes and quotes escaped, control characters dropped
  local s=${1//\\/\\\\}
  s=${s//\"/\\\"}
  printf '"%s"' "$(tr -d '\000-\037' <<<"$s")"
}
json_or_null() { if [[ -n $1 ]]; then json_string "$1"; else printf null; fi; }
gpu=$(sed -n '1s/^Device [0-9]*: \(.*\) (compute capability \([0-9.]*\))$/\1/p' <<<"$device_lines")
capability=$(sed -n '1s/^Device [0-9]*: .* (compute capability \([0-9.]*\))$/\1/p' <<<"$device_lines")
sms=$(sed -n 's/^  SMs \([0-9]*\),.*/\1/p' <<<"$device_lines")
sm_clock=$(sed -n 's/^  SM clock \([0-9]*\) MHz,.*/\1/p' <<<"$device_lines")
driver=""
if [[ -n $gpu ]] && command -v nvidia-smi >/dev/null 2>&1; then
  driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -n 1)
fi
toolkit=$(grep -h -m1 -o 'CMAKE_CUDA_COMPILER_VERSION "[^"]*"' "$build"/CMakeFiles/*/CMakeCUDACompiler.cmake 2>/dev/null |
  head -n 1 | sed 's/.*"\(.*\)"/\1/')
commit="" tree=""
if git -C "$root" rev-parse --verify -q HEAD >/dev/null 2>&1; then
  commit=$(git -C "$root" rev-parse HEAD)
  # What a results table would not show: sources changed since that commit (results/ and build/ aside).
  if [[ -n $(git -C "$root" status --porcelain --untracked-files=no 2>/dev/null) ]]; then tree=modified; else tree=clean; fi
fi
{
  printf '{\n  "gpu": %s,\n' "$(json_or_null "$gpu")"
  printf '  "compute_capability": %s,\n' "$(json_or_null "$capability")"
  printf '  "sms": %s,\n' "${sms:-null}"
  printf '  "sm_clock_mhz": %s,\n' "${sm_clock:-null}"
  printf '  "driver": %s,\n' "$(json_or_null "$driver")"
  printf '  "cuda": %s,\n' "$(json_or_null "$toolkit")"
  printf '  "date": %s,\n' "$(json_string "$started")"
  printf '  "commit": %s,\n' "$(json_or_null "$commit")"
  printf '  "tree": %s,\n' "$(json_or_null "$tree")"
  printf '  "command": %s,\n' "$(json_string "$command_line")"
  printf '  "quick": %s,\n' "$( ((quick)) && echo true || echo false)"
  printf '  "stages": ['
  for i in "${!outcomes[@]}"; do
    IFS='|' read -r stage args changed status reason <<<"${outcomes[$i]}"
    ((i == 0)) || printf ','
    printf '\n    {"stage": %s, "args": %s, "changed": %s, "status": %s, "reason": %s}' "$(json_string "$stage")" \
      "$(json_string "$args")" "$(json_string "$changed")" "$(json_string "$status")" "$(json_or_null "$reason")"
  done
  printf '\n  ]\n}\n'
} >"$results/tour.meta.json"

echo
echo "results: $results/tour.json, $results/tour.meta.json, $results/tour.csv, $results/tour.txt"
# The plot: the first python3 that has matplotlib (the system's, /usr/bin/python3, may have it when
# the one on the PATH does not). It names the skipped stages and their reasons too.
skipped_args=()
for i in "${!skipped[@]}"; do skipped_args+=(--skipped "${skipped[$i]}|${skip_reasons[$i]}"); done
plotted=0
for python in python3 /usr/bin/python3; do
  if command -v "$python" >/dev/null 2>&1 && "$python" -c 'import matplotlib' >/dev/null 2>&1; then
    "$python" "$here/plot_tour.py" "$results/tour.json" "$results/tour.png" ${skipped_args[@]+"${skipped_args[@]}"} &&
      echo "plot: $results/tour.png"
    plotted=1
    break
  fi
done
((plotted)) || echo "plot: skipped (python3 with matplotlib not found)"
exit $failed
