#!/usr/bin/env bash
# The size sweep: every matrix-multiply stage, and cuBLAS measured by each stage in the same
# process on the same buffers, over square sizes from 256 to 8192 (powers of two and odd sizes), or
# over any list of sizes and shapes (m x n x k).
usage() {
  cat <<'EOF'
usage: scripts/sweep.sh <build-dir> [results-dir] [--sizes "256 512 ..." | --grid] [--stages "04_shared_tiled ..."]
                        [--processes N]

Runs each matrix-multiply stage at each size of the list, a square size N (m = n = k = N) or a
shape MxNxK, with --json and writes, in results-dir (default: <build-dir>/results):
  sweep.csv   one row per stage and size: stage,size,gflops,pct_cublas,cublas_gflops,result,inputs
  sweep.json  every stage's report, in one array
  sweep.txt   the two tables printed: GFLOP/s (rows = sizes, columns = stages + cuBLAS), % of cuBLAS
              with each stage's geometric mean and its number of sizes under 95%
  sweep.png   GFLOP/s against the square sizes, one line per stage plus cuBLAS (where python3 has
              matplotlib; shapes are in the tables only)
  sweep_heatmap.png  where shapes were swept: % of cuBLAS of each stage as heat maps, short A
              (m <= 512) and narrow C (n <= 512) by rows against the other two sizes, the other
              shapes in a strip (scripts/plot_heatmap.py)

  --sizes LIST    square sizes N and shapes MxNxK (each from 1 to 65536), default
                  "256 512 1000 1024 2048 4096 4099 8192"; e.g. "4096 64x8192x8192 5000x3000x2000"
  --grid          the 46 shapes of scripts/shape_grid.txt: short A, narrow C, squares, short and
                  long K, odd sizes
  --stages LIST   stage directories (or their numbers: "04 07"), default every built stage whose
                  --plan names a product C = A * B (the matrix-multiply stages)
  --processes N   run each stage at each size in N processes (1 to 9, default 1), in N rounds over
                  the whole list, and report the median of their figures: a kernel of 15-20 us
                  moves by up to 10% from one process to the next
  --help          this text

The cuBLAS figure of a size is the median of the cuBLAS measurements the stages made at that size,
one column for the FP32 stages (cuBLAS FP32) and one for the tensor-core stages (cuBLAS with bf16 A
and B, FP32 sums); "% of cuBLAS" is each stage's own ratio, kernel and cuBLAS timed in one process.
Exit status: 0 when every run passed its check (a stage skipped for want of a GPU counts as
passed), 1 when a run failed or broke (everything is still written), 2 for bad arguments.
EOF
}
set -u
export LC_ALL=C # a decimal point in printf and awk, whatever the locale
here=$(cd "$(dirname "$0")" && pwd)

# ---- Arguments: two positional directories and two options, in any order.
bad() {
  echo "error: $*" >&2
  echo "usage: scripts/sweep.sh <build-dir> [results-dir] [--sizes LIST | --grid] [--stages LIST] [--processes N] (--help: more)" >&2
  exit 2
}
build="" results="" sizes="256 512 1000 1024 2048 4096 4099 8192" stages="" processes=1
while (($#)); do
  case $1 in
    --help | -h) usage && exit 0 ;;
    --grid) sizes=$(sed 's/#.*//' "$here/shape_grid.txt" | tr -s ' \n' '  ') ;;
    --sizes | --stages)
      (($# >= 2)) || bad "$1 needs a list"
      if [[ $1 == --sizes ]]; then sizes=$2; else stages=$2; fi
      shift
      ;;
    --processes)
      (($# >= 2)) || bad "$1 needs a number"
      processes=$2
      shift
      ;;
    --sizes=*) sizes=${1#*=} ;;
    --stages=*) stages=${1#*=} ;;
    --processes=*) processes=${1#*=} ;;
    -*) bad "unknown option $1" ;;
    *) if [[ -z $build ]]; then build=$1; elif [[ -z $results ]]; then results=$1; else bad "one argument too many: $1"; fi ;;
  esac
  shift
done
[[ -n $build ]] || bad "no build directory given"
[[ -d $build ]] || bad "build directory $build does not exist"
results=${results:-$build/results}
[[ -n ${sizes// /} ]] || bad "--sizes is empty"
[[ $processes =~ ^[1-9]$ ]] || bad "--processes: '$processes' is not a number of processes in [1, 9]"
for n in $sizes; do
  for d in ${n//x/ }; do
    if ! [[ $n =~ ^[1-9][0-9]{0,4}(x[1-9][0-9]{0,4}x[1-9][0-9]{0,4})?$ ]] || ((d > 65536)); then
      bad "--sizes: '$n' is neither a size N nor a shape MxNxK with each in [1, 65536]"
    fi
  done
done

# ---- The stages: those named, or every built stage whose plan is a matrix product.
list=()
if [[ -n $stages ]]; then
  for name in $stages; do
    # A number stands for the stage directory it begins: "04" -> 04_shared_tiled.
    for dir in "$build/$name" "$build/$name"_*; do
      [[ -x $dir/$(basename "$dir") ]] && list+=("$(basename "$dir")") && continue 2
    done
    bad "--stages: no stage '$name' is built in $build"
  done
else
  for dir in "$build"/[0-9][0-9]_*; do
    name=$(basename "$dir")
    # A matrix-multiply stage's plan names its product: "NN_name: C (MxNxK) = A * B".
    [[ -x $dir/$name ]] && "$dir/$name" --plan --size 16 2>/dev/null | grep -q '^[^ ]*: C (.*) = A \* B$' && list+=("$name")
  done
fi
((${#list[@]})) || bad "no matrix-multiply stage is built in $build"
mkdir -p "$results" || exit 2

# The cmake that configured the build reads the reports (CMake's JSON parser).
cmake=$(sed -n 's/^CMAKE_COMMAND:INTERNAL=//p' "$build/CMakeCache.txt" 2>/dev/null)
cmake=${cmake:-cmake}

# problem <size>: the stage's arguments for a size of the list: --size N, or --m M --n N --k K.
problem() {
  if [[ $1 == *x* ]]; then
    local m n k
    IFS=x read -r m n k <<<"$1"
    echo "--m $m --n $n --k $k"
  else
    echo "--size $1"
  fi
}
# run_options <stage> <size>: the repetitions, warm-ups and check of one run. Enough repetitions
# for a steady median, few enough that ~8 stages x 8 sizes take minutes; the sampled check at the
# large sizes (a full CPU reference of 8192^3 would take hours). The naive stages (02, 03) take
# ~200 ms a run at 8192, so they get fewer runs above 4099. A shape counts as the cube of its
# products: m·n·k against 1024^3 and 4099^3.
run_options() {
  local stage=$1 work reps=20 warmup=3 check=auto
  if [[ $2 == *x* ]]; then work=$((${2//x/ * })); else work=$(($2 * $2 * $2)); fi
  ((work <= 1024 ** 3)) || reps=10 check=sample
  ((work <= 4099 ** 3)) || reps=5
  if [[ $stage == 0[23]_* ]] && ((work > 4099 ** 3)); then reps=3 warmup=1; fi
  echo "--reps $reps --warmup $warmup --check $check"
}

# ---- The runs. Figures per "stage size" key: rate, % of cuBLAS, cuBLAS rate (each a list, one
# figure per process, until the medians are taken), verdict.
declare -A rate pct cublas verdict inputs
json_objects=() skipped=() failed=0 skip_reason=""
total=$((processes * ${#list[@]} * $(wc -w <<<"$sizes"))) index=0
for ((round = 1; round <= processes; round++)); do
  for stage in "${list[@]}"; do
    for n in $sizes; do
      index=$((index + 1))
      key="$stage $n"
      if [[ " ${skipped[*]} " == *" $stage "* ]]; then # no GPU for this stage: no other size either
        verdict[$key]=SKIPPED
        continue
      fi
      [[ ${verdict[$key]:-PASS} == PASS ]] || continue # failed in an earlier round: once is enough
      options="$(problem "$n") $(run_options "$stage" "$n")"
      echo "[$index/$total] $stage $options" >&2
      # shellcheck disable=SC2086 # $options is a list of arguments
      output=$("$build/$stage/$stage" $options --json 2>&1)
      code=$?
      if ((code == 77)); then
        skipped+=("$stage")
        verdict[$key]=SKIPPED
        # The stage's own reason (no driver, an old one, no device ...), the first one given.
        [[ -n $skip_reason ]] || skip_reason=$(grep -m1 '^SKIP:' <<<"$output" | sed 's/^SKIP: //')
        continue
      fi
      json=$(grep '^{"stage"' <<<"$output" | tail -n 1) # the report's JSON line
      if [[ -z $json ]] || ! row=$("$cmake" -D "JSON=$json" -P "$here/sweep_rows.cmake"); then
        failed=1
        verdict[$key]="ERROR"
        echo "$stage at $n: exit $code, no report; its last lines:" >&2
        tail -n 8 <<<"$output" >&2
        continue
      fi
      json_objects+=("$json")
      IFS='|' read -r result r p c type <<<"$row"
      inputs[$stage]=$type # fp32, or bf16 for the tensor-core stages (whose cuBLAS is bf16 too)
      ((code == 0)) && [[ $result != FAIL ]] || failed=1
      verdict[$key]=$result rate[$key]+="$r " pct[$key]+="$p " cublas[$key]+="$c "
    done
  done
done

# ---- Helpers for the tables and the CSV (figures arrive as the JSON parser holds them).
# fixed <decimals> <value>: the value with that many decimals; '' for none ('-' or empty).
fixed() { if [[ -z ${2:-} || $2 == - ]]; then printf ''; else printf "%.$1f" "$2"; fi; }
# median <values...>: the median of the values given ('' when none).
median() {
  printf '%s\n' "$@" | grep -v '^-\?$' | sort -g |
    awk '{ v[NR] = $1 } END { if (NR) printf "%.4f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
# Each figure of a stage and size: the median of its processes' (--processes), each taken alone.
for key in "${!pct[@]}"; do
  # shellcheck disable=SC2086 # the lists of figures, one word each
  rate[$key]=$(median ${rate[$key]}) pct[$key]=$(median ${pct[$key]}) cublas[$key]=$(median ${cublas[$key]})
done
# cell <key> <decimals> <figure>: what a table shows for one run: the figure, or why there is none.
cell() {
  case ${verdict[$1]:-} in
    SKIPPED) echo skipped ;;
    ERROR) echo error ;;
    FAIL) echo FAIL ;;
    "") echo - ;;
    *) local v && v=$(fixed "$2" "$3") && echo "${v:--}" ;;
  esac
}

# ---- sweep.csv: one row per stage and size.
{
  echo "stage,size,gflops,pct_cublas,cublas_gflops,result,inputs"
  for stage in "${list[@]}"; do
    for n in $sizes; do
      key="$stage $n"
      echo "$stage,$n,$(fixed 1 "${rate[$key]:-}"),$(fixed 2 "${pct[$key]:-}"),$(fixed 1 "${cublas[$key]:-}"),${verdict[$key]:-},${inputs[$stage]:-fp32}"
    done
  done
} >"$results/sweep.csv"

# ---- sweep.json: every stage's report, as one array.
{
  printf '['
  for i in "${!json_objects[@]}"; do
    ((i == 0)) || printf ','
    printf '\n%s' "${json_objects[$i]}"
  done
  printf '\n]\n'
} >"$results/sweep.json"

# No GPU: every stage exited 77, so there is nothing to tabulate.
if ((${#json_objects[@]} == 0 && ${#skipped[@]} == ${#list[@]})); then
  echo "sweep: skipped, every stage exited 77: ${skip_reason:-no usable CUDA GPU}"
  echo "(docs/troubleshooting.md says what each reason means and what to do)"
  exit 0
fi

# ---- The tables: rows = sizes; columns = stages (and cuBLAS: the median of the stages' cuBLAS runs).
# One cuBLAS column per element type among the stages that ran: fp32, bf16 or both.
types=()
for type in fp32 bf16; do
  for stage in "${list[@]}"; do [[ ${inputs[$stage]:-} == "$type" ]] && types+=("$type") && break; done
done
((${#types[@]})) || types=(fp32)
width=11 size_width=6
for stage in "${list[@]}"; do ((${#stage} <= width)) || width=${#stage}; done
for n in $sizes; do ((${#n} <= size_width)) || size_width=${#n}; done
{
  for table in rate pct; do
    if [[ $table == rate ]]; then
      printf '\nGFLOP/s (median of the timed runs; cuBLAS: median over the stages of its figure at that size)\n'
    else
      printf '\n%% of cuBLAS (each stage against the cuBLAS run of its own process)\n'
    fi
    ((processes == 1)) || printf '(each figure the median of %d processes)\n' "$processes"
    printf "%${size_width}s" size
    printf "  %${width}s" "${list[@]}"
    [[ $table == pct ]] || printf "  %${width}s" "${types[@]/#/cuBLAS }"
    printf '\n'
    for n in $sizes; do
      printf "%${size_width}s" "$n"
      library_fp32=() library_bf16=()
      for stage in "${list[@]}"; do
        key="$stage $n"
        if [[ $table == rate ]]; then
          printf "  %${width}s" "$(cell "$key" 0 "${rate[$key]:-}")"
          if [[ ${inputs[$stage]:-fp32} == bf16 ]]; then library_bf16+=("${cublas[$key]:-}"); else library_fp32+=("${cublas[$key]:-}"); fi
        else
          printf "  %${width}s" "$(cell "$key" 1 "${pct[$key]:-}")"
        fi
      done
      if [[ $table == rate ]]; then
        for type in "${types[@]}"; do
          if [[ $type == bf16 ]]; then value=$(median "${library_bf16[@]}"); else value=$(median "${library_fp32[@]}"); fi
          printf "  %${width}s" "$(fixed 0 "$value")"
        done
      fi
      printf '\n'
    done
  done
  # Under the % table: each stage's geometric mean over the sizes it passed, and how many of them
  # are under 95% of cuBLAS.
  printf "%${size_width}s" geomean
  for stage in "${list[@]}"; do
    values=()
    for n in $sizes; do [[ ${verdict["$stage $n"]:-} == PASS ]] && values+=("${pct["$stage $n"]:-}"); done
    printf "  %${width}s" "$(printf '%s\n' "${values[@]}" | grep -v '^-\?$' |
      awk '$1 > 0 { s += log($1); c++ } END { if (c) printf "%.1f", exp(s / c); else printf "-" }')"
  done
  printf "\n%${size_width}s" "< 95%"
  for stage in "${list[@]}"; do
    under=0
    for n in $sizes; do
      [[ ${verdict["$stage $n"]:-} == PASS ]] && awk -v p="${pct["$stage $n"]:-}" 'BEGIN { exit !(p != "" && p != "-" && p < 95) }' &&
        under=$((under + 1))
    done
    printf "  %${width}s" "$under"
  done
  printf '\n'
} | tee "$results/sweep.txt"

echo
echo "results: $results/sweep.csv, $results/sweep.json, $results/sweep.txt"
broken=()
for stage in "${list[@]}"; do
  for n in $sizes; do
    case ${verdict["$stage $n"]:-} in FAIL | ERROR) broken+=("$stage at $n (${verdict["$stage $n"]})") ;; esac
  done
done
if ((${#broken[@]})); then
  printf 'failed: %s\n' "${broken[@]}"
fi
if ((${#skipped[@]})); then
  echo "skipped: ${skipped[*]} (exit 77: ${skip_reason:-no usable CUDA GPU})"
fi
# The plot: the first python3 that has matplotlib (the system's may have it when the PATH's does not).
if ((${#json_objects[@]})); then
  plotted=0
  for python in python3 /usr/bin/python3; do
    if command -v "$python" >/dev/null 2>&1 && "$python" -c 'import matplotlib' >/dev/null 2>&1; then
      "$python" "$here/plot_sweep.py" "$results/sweep.csv" "$results/sweep.png" && echo "plot: $results/sweep.png"
      if [[ $sizes == *x* ]]; then
        "$python" "$here/plot_heatmap.py" "$results/sweep.csv" "$results/sweep_heatmap.png" &&
          echo "heat map: $results/sweep_heatmap.png"
      fi
      plotted=1
      break
    fi
  done
  ((plotted)) || echo "plot: skipped (python3 with matplotlib not found)"
fi
exit $failed
