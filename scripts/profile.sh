#!/usr/bin/env bash
# Nsight Compute table: profiles one launch of a matrix-multiply stage's own kernel (not cuBLAS)
# and prints the counters that explain why one step is faster than the one before.
usage() {
  cat <<'EOF'
usage: scripts/profile.sh <stage> [<stage>...] [<build-dir>] [--size N] [--results DIR] [-- stage args]
       scripts/profile.sh --compare <stageA> <stageB> [<build-dir>] [--size N] [-- stage args]

Runs each stage once under Nsight Compute at N x N x N (default 4096) with --warmup 1 --reps 1
--check none, measures one launch of the stage's own kernel (the timed one, after the warm-up; its
name starts with matmul_, cuBLAS's never do) with the clocks left as they are (ncu --clock-control
none), and prints a Markdown table: one row per metric, one column per stage.

  <stage>        a stage directory (04_shared_tiled), its number (04), or either followed by
                 comma-separated stage options for that column alone: 04,--tile=16
  <build-dir>    a configured build directory (default: build/default in the repository)
  --size N       the square size, default 4096 (or pass --m/--n/--k after --)
  --results DIR  where the reports go (default: <build-dir>/results/profile): per stage the
                 .ncu-rep (open it in the Nsight Compute GUI), its raw CSV and ncu's log, and the
                 table as a .md
  --compare      say that several stages follow (the same as naming several)
  -- ARGS        options passed to every stage (e.g. -- --tile 16)
  --help         this text

Exit status: 0 done, 1 ncu or a stage failed, 2 bad arguments, 77 no ncu or no usable GPU.
EOF
}
set -u
export LC_ALL=C # a decimal point in printf and awk, whatever the locale
here=$(cd "$(dirname "$0")" && pwd)

# ---- Arguments.
bad() {
  echo "error: $*" >&2
  echo "usage: scripts/profile.sh <stage>... [<build-dir>] [--size N] [--results DIR] [-- stage args] (--help: more)" >&2
  exit 2
}
specs=() build="" results="" size=4096 compare=0 extra=()
while (($#)); do
  case $1 in
    --help | -h) usage && exit 0 ;;
    --compare) compare=1 ;;
    --size | --results)
      (($# >= 2)) || bad "$1 needs a value"
      if [[ $1 == --size ]]; then size=$2; else results=$2; fi
      shift
      ;;
    --size=*) size=${1#*=} ;;
    --results=*) results=${1#*=} ;;
    --) shift && extra=("$@") && break ;;
    -*) bad "unknown option $1 (stage options go after --)" ;;
    *) # a build directory (configured, or a path), or a stage
      if [[ -f $1/CMakeCache.txt || ${1%%,*} == */* ]]; then
        [[ -z $build ]] || bad "two build directories given: $build and $1"
        build=$1
      else
        specs+=("$1")
      fi
      ;;
  esac
  shift
done
build=${build:-$(dirname "$here")/build/default}
[[ -f $build/CMakeCache.txt ]] || bad "$build is not a configured build directory (give one: scripts/profile.sh <stage> <build-dir>)"
results=${results:-$build/results/profile}
((${#specs[@]})) || bad "no stage given"
((!compare || ${#specs[@]} >= 2)) || bad "--compare needs two stages or more"
if ! [[ $size =~ ^[1-9][0-9]{0,4}$ ]] || ((size > 65536)); then bad "--size must be an integer in [1, 65536], got '$size'"; fi

# ---- The stages: directory, label, arguments and problem shape of each column.
# A spec is a stage name or number, then comma-separated options for it alone: 04,--tile=16.
stages=() labels=() stage_args=() shapes=() input_bytes=()
for spec in "${specs[@]}"; do
  IFS=',' read -r -a words <<<"$spec"
  stage=""
  for dir in "$build/${words[0]}" "$build/${words[0]}"_*; do # "04" -> 04_shared_tiled
    if [[ -x $dir/$(basename "$dir") ]]; then stage=$(basename "$dir") && break; fi
  done
  [[ -n $stage ]] || bad "no stage '${words[0]}' is built in $build"
  args=(--size "$size" "${extra[@]}" "${words[@]:1}")
  # --plan checks the arguments without a GPU and prints the shape: "NN_name: C (MxNxK) = A * B".
  if ! plan=$("$build/$stage/$stage" "${args[@]}" --plan 2>&1); then
    echo "$plan" >&2
    exit 2
  fi
  shape=$(sed -n 's/^[^ ]*: C (\([0-9]*x[0-9]*x[0-9]*\)) = A \* B$/\1/p' <<<"$plan" | head -n 1)
  [[ -n $shape ]] || bad "$stage --plan did not print its shape: is it a matrix-multiply stage?"
  stages+=("$stage")
  labels+=("$(printf '%s ' "$stage" "${words[@]:1}" | sed 's/ $//')")
  stage_args+=("$(IFS=$'\x1f' && echo "${args[*]}")") # joined by the unit separator (0x1f)
  shapes+=("$shape")
  # The bytes of an element of A and B: 2 for the tensor-core stages (their plan speaks of bf16), else 4.
  if grep -q bf16 <<<"$plan"; then input_bytes+=(2); else input_bytes+=(4); fi
done

# ---- Nsight Compute and a GPU, or exit 77.
# ncu: on the PATH, else beside the CUDA compiler the build was configured with.
ncu=$(command -v ncu || true)
nvcc=$(sed -n 's/^CMAKE_CUDA_COMPILER:[A-Z]*=//p' "$build/CMakeCache.txt")
[[ -n $ncu || ! -x ${nvcc%/*}/ncu ]] || ncu=${nvcc%/*}/ncu
if [[ -z $ncu ]]; then
  echo "profile: skipped, Nsight Compute (ncu) is not on the PATH nor beside ${nvcc:-the CUDA compiler}"
  exit 77
fi
# The smallest run of the first stage: exit 77 means no usable GPU.
probe=$("$build/${stages[0]}/${stages[0]}" --size 16 --warmup 0 --reps 1 --check none 2>&1)
if (($? == 77)); then
  echo "profile: skipped, no usable GPU; ${stages[0]} says: $(tail -n 1 <<<"$probe")"
  exit 77
fi
mkdir -p "$results" || exit 1

# ---- The metrics. Base units (--print-units base): ns, bytes, %, counts. A metric this ncu does
# not know is dropped (its rows read n/a) and the run repeated without it; see profile_stage.
stalls=(long_scoreboard short_scoreboard mio_throttle barrier math_pipe_throttle not_selected selected
  wait lg_throttle dispatch_stall no_instruction branch_resolving membar drain imc_miss tex_throttle sleeping misc)
metrics=(
  gpu__time_duration.sum
  launch__block_size launch__grid_size launch__registers_per_thread
  launch__shared_mem_per_block_static launch__shared_mem_per_block_dynamic
  sm__maximum_warps_per_active_cycle_pct sm__warps_active.avg.pct_of_peak_sustained_active
  smsp__sass_thread_inst_executed_op_ffma_pred_on.sum
  smsp__inst_executed_pipe_tensor_op_hmma.sum sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active
  smsp__inst_executed_pipe_tensor_op_gmma.sum
  smsp__inst_executed_op_ldsm.sum
  smsp__inst_executed_op_shared_ld.sum l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum
  l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum
  l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum
  smsp__inst_executed_op_local_ld.sum
  dram__bytes_read.sum dram__bytes_write.sum lts__t_sector_hit_rate.pct
  sm__throughput.avg.pct_of_peak_sustained_elapsed gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed
  sm__inst_issued.avg.pct_of_peak_sustained_active sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active
  smsp__average_warp_latency_per_inst_issued.ratio
)
for reason in "${stalls[@]}"; do metrics+=("smsp__average_warps_issue_stalled_${reason}_per_issue_active.ratio"); done
commands=() # every ncu command run, for the record

# quoted <words...>: the words as one shell command line, quoting only those that need it.
quoted() {
  local word line=""
  for word in "$@"; do
    [[ $word =~ ^[A-Za-z0-9_@%+=:,./^-]+$ ]] || word="'${word//\'/\'\\\'\'}'"
    line+="${line:+ }$word"
  done
  echo "$line"
}

# profile_stage <index>: runs ncu on one stage; writes <file>.ncu-rep, <file>.csv and <file>.log.
profile_stage() {
  local i=$1 file=$2 attempt
  local args
  IFS=$'\x1f' read -r -a args <<<"${stage_args[$i]}"
  for ((attempt = 0; attempt <= ${#metrics[@]}; ++attempt)); do
    # The kernel filter: the stage's kernels are named matmul_*, cuBLAS's never are. Function names
    # only (no template arguments, no parameters); skip the warm-up launch, measure the next one.
    local command=("$ncu" --clock-control none --kernel-name-base function --kernel-name 'regex:^matmul_'
      --launch-skip 1 --launch-count 1 --metrics "$(IFS=, && echo "${metrics[*]}")" -f -o "$file"
      "$build/${stages[$i]}/${stages[$i]}" "${args[@]}" --warmup 1 --reps 1 --check none)
    echo "\$ $(quoted "${command[@]}")" >&2
    rm -f "$file.ncu-rep" "$file.csv" # never read a report left by an earlier run
    "${command[@]}" >"$file.log" 2>&1
    local code=$?
    # A metric this ncu does not know: "==ERROR== Failed to find metric <name or regex of it>".
    local missing
    missing=$(grep 'Failed to find metric' "$file.log")
    if [[ -z $missing ]]; then
      commands+=("$(quoted "${command[@]}")")
      ((code == 0)) || echo "note: ncu exited with status $code (its log: $file.log)" >&2
      break
    fi
    local kept=() metric dropped=0
    for metric in "${metrics[@]}"; do
      if grep -qE "(^|[^a-z0-9_])${metric%%.*}([^a-z0-9_]|$)" <<<"$missing"; then
        echo "note: this ncu does not know $metric; its row reads n/a" >&2
        dropped=1
      else
        kept+=("$metric")
      fi
    done
    ((dropped)) || break # an error naming none of ours: reported below
    metrics=("${kept[@]}")
  done
  if [[ ! -f $file.ncu-rep ]]; then
    echo "profile: ncu did not profile ${stages[$i]}; the end of its log ($file.log):" >&2
    tail -n 12 "$file.log" >&2
    return 1
  fi
  # Read the report back as CSV: one header row, one row of units, one row per profiled launch.
  "$ncu" --import "$file.ncu-rep" --csv --page raw --print-units base >"$file.csv" 2>>"$file.log"
}

# read_csv <csv>: "column<TAB>value<TAB>unit" for each column of the first profiled launch.
# Fields are quoted and may hold commas ("(32, 32, 1)", kernel signatures), so each line is split
# by a small quote-aware loop; thousands separators in numbers are dropped.
read_csv() {
  awk '
    function split_csv(line, out,    n, i, c, field, quoted) {
      n = 0; field = ""; quoted = 0
      for (i = 1; i <= length(line); i++) {
        c = substr(line, i, 1)
        if (quoted && c == "\"" && substr(line, i + 1, 1) == "\"") { field = field c; i++ }  # "" inside quotes
        else if (c == "\"") quoted = !quoted
        else if (c == "," && !quoted) { out[++n] = field; field = "" }
        else field = field c
      }
      out[++n] = field
      return n
    }
    !header && /^"ID"/ { columns = split_csv($0, name); header = 1; next }
    header && !done {
      split_csv($0, field)
      if (field[1] == "") { for (i = 1; i <= columns; i++) unit[i] = field[i]; next }  # the units row
      for (i = 1; i <= columns; i++) {
        value = field[i]
        if (value ~ /^-?[0-9][0-9,]*(\.[0-9]+)?([eE][-+]?[0-9]+)?$/) gsub(/,/, "", value)
        printf "%s\t%s\t%s\n", name[i], value, unit[i]
      }
      done = 1
    }' "$1"
}

# derive <m> <n> <k> <bytes per element of A and B>: reads read_csv lines and prints the table's rows, "name|cell", in a fixed order.
derive() {
  awk -F'\t' -v m="$1" -v n="$2" -v k="$3" -v bytes="$4" -v stall_list="${stalls[*]}" '
    { value[$1] = $2; unit[$1] = $3 }
    function has(key) { return (key in value) && value[key] ~ /^-?[0-9.]+([eE][-+]?[0-9]+)?$/ }
    function get(key) { return value[key] + 0 }
    # A metric in its base unit, whatever unit ncu printed it in.
    function base(key,    u) {
      u = unit[key]
      if (u == "usecond") return get(key) * 1e3
      if (u == "msecond") return get(key) * 1e6
      if (u == "second") return get(key) * 1e9
      if (u == "Kbyte") return get(key) * 1e3
      if (u == "Mbyte") return get(key) * 1e6
      if (u == "Gbyte") return get(key) * 1e9
      return get(key)
    }
    # cell(name, format, key[, divisor]): a row showing one metric (in base units / divisor), or n/a.
    function cell(name, format, key, divisor) {
      row(name, has(key) ? sprintf(format, base(key) / (divisor ? divisor : 1)) : "n/a")
    }
    function row(name, text) { printf "%s|%s\n", name, text }
    END {
      # The kernel: its name without the return type and the parameter list.
      kernel = value["Kernel Name"]; sub(/^void /, "", kernel); sub(/\(.*$/, "", kernel)
      row("kernel", kernel == "" ? "n/a" : "`" kernel "`")
      row("problem (m x n x k)", m "x" n "x" k)
      ns = "gpu__time_duration.sum"
      cell("duration (ms)", "%.3f", ns, 1e6)
      row("achieved rate (GFLOP/s, 2mnk / duration)", has(ns) ? sprintf("%.0f", 2 * m * n * k / base(ns)) : "n/a")
      # Launch shape and resources.
      threads = has("launch__block_size") ? get("launch__block_size") : ""
      if (threads == "" && value["Block Size"] ~ /^\(/) {  # "(32, 32, 1)" from the launch columns
        split(value["Block Size"], d, /[(), ]+/); threads = d[2] * d[3] * d[4]
      }
      row("threads per block", threads == "" ? "n/a" : threads)
      cell("blocks", "%.0f", "launch__grid_size")
      cell("registers per thread", "%.0f", "launch__registers_per_thread")
      s = "launch__shared_mem_per_block_static"; dyn = "launch__shared_mem_per_block_dynamic"
      row("shared memory per block (bytes)", has(s) ? sprintf("%.0f", base(s) + (has(dyn) ? base(dyn) : 0)) : "n/a")
      cell("theoretical occupancy (% of max warps)", "%.1f", "sm__maximum_warps_per_active_cycle_pct")
      cell("achieved occupancy (% of max warps)", "%.1f", "sm__warps_active.avg.pct_of_peak_sustained_active")
      # The arithmetic and how the shared memory feeds it.
      ffma = "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"
      cell("FP32 FMA instructions executed (thread-level)", "%.4g", ffma)
      cell("tensor-core (HMMA) instructions (warp-level)", "%.4g", "smsp__inst_executed_pipe_tensor_op_hmma.sum")
      cell("tensor pipe busy (%)", "%.1f", "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active")
      cell("tensor-core (wgmma: GMMA) instructions (warp-level)", "%.4g", "smsp__inst_executed_pipe_tensor_op_gmma.sum")
      cell("shared-memory load instructions (warp-level, ldmatrix not counted)", "%.4g", "smsp__inst_executed_op_shared_ld.sum")
      wave = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"
      cell("shared-memory load wavefronts", "%.4g", wave)
      row("warp FMAs per shared-load wavefront", has(ffma) && has(wave) && get(wave) > 0 ? sprintf("%.2f", get(ffma) / 32 / get(wave)) : "n/a")
      cell("shared-load bank conflicts (extra wavefronts)", "%.4g", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum")
      cell("ldmatrix instructions (warp-level; their wavefronts and conflicts count in the rows above)", "%.4g", "smsp__inst_executed_op_ldsm.sum")
      # Global memory, L2 and DRAM.
      sec = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"; req = "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"
      row("global load sectors per request (4 = 32 floats in a row)", has(sec) && has(req) && get(req) > 0 ? sprintf("%.2f", get(sec) / get(req)) : "n/a")
      cell("local-memory (spill) load instructions", "%.4g", "smsp__inst_executed_op_local_ld.sum")
      rd = "dram__bytes_read.sum"
      cell("DRAM bytes read (MB)", "%.1f", rd, 1e6)
      row("DRAM read / (A + B read once)", has(rd) ? sprintf("%.2f", base(rd) / (bytes * (m * k + k * n))) : "n/a")
      cell("DRAM bytes written (MB)", "%.1f", "dram__bytes_write.sum", 1e6)
      cell("L2 hit rate (%)", "%.1f", "lts__t_sector_hit_rate.pct")
      # How busy the SM is, and what its warps wait for.
      cell("SM throughput (% of peak)", "%.1f", "sm__throughput.avg.pct_of_peak_sustained_elapsed")
      cell("memory throughput (% of peak)", "%.1f", "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed")
      cell("issue slots used (%)", "%.1f", "sm__inst_issued.avg.pct_of_peak_sustained_active")
      cell("FMA pipe busy (%)", "%.1f", "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active")
      cell("warp cycles per issued instruction", "%.2f", "smsp__average_warp_latency_per_inst_issued.ratio")
      # The top three stall reasons, in cycles per issued instruction and as a share of the cycles
      # of all reasons. "selected" (the cycle of issuing itself) counts in the share, never ranks.
      count = split(stall_list, reason, " "); total = 0
      for (i = 1; i <= count; i++) {
        key = "smsp__average_warps_issue_stalled_" reason[i] "_per_issue_active.ratio"
        cycles[i] = has(key) ? get(key) : -1
        if (has(key)) total += cycles[i]
        if (reason[i] == "selected") cycles[i] = -1
      }
      for (place = 1; place <= 3; place++) {
        best = 0
        for (i = 1; i <= count; i++) if (cycles[i] >= 0 && (best == 0 || cycles[i] > cycles[best])) best = i
        text = "n/a"
        if (best && total > 0) { text = sprintf("%s %.2f (%.0f%%)", reason[best], cycles[best], 100 * cycles[best] / total); cycles[best] = -1 }
        row("stall #" place " (cycles per issued instruction, share)", text)
      }
    }'
}

# ---- Profile each stage, read its CSV, derive its column.
columns=() failed=0
for i in "${!stages[@]}"; do
  file=$results/profile_$(tr -c 'A-Za-z0-9_.=-' '_' <<<"${labels[$i]}" | sed 's/_*$//')
  echo "[$((i + 1))/${#stages[@]}] ${labels[$i]} at ${shapes[$i]}" >&2
  if profile_stage "$i" "$file" && [[ -n $(read_csv "$file.csv") ]]; then
    IFS='x' read -r m n k <<<"${shapes[$i]}"
    columns+=("$(read_csv "$file.csv" | derive "$m" "$n" "$k" "${input_bytes[$i]}")")
  else
    [[ ! -f $file.csv ]] || echo "profile: the report of ${labels[$i]} holds no launch of a matmul_ kernel" >&2
    failed=1
    columns+=("")
  fi
done

# ---- The table: one row per metric, one column per stage (a stage ncu could not profile: "failed").
names=""
for column in "${columns[@]}"; do [[ -z $column ]] || { names=$(cut -d'|' -f1 <<<"$column") && break; }; done
if [[ -z $names ]]; then
  echo "profile: no stage was profiled" >&2
  exit 1
fi
table=$results/profile_$(tr -c 'A-Za-z0-9_.=-' '_' <<<"${labels[*]}" | sed 's/_*$//').md
{
  echo "Nsight Compute, one launch of each stage's own kernel (clocks not locked: ncu --clock-control none):"
  echo
  printf '| metric |'
  printf ' %s |' "${labels[@]}"
  printf '\n|---|'
  printf -- '---:|%.0s' "${labels[@]}"
  printf '\n'
  row=0
  while IFS= read -r name; do
    row=$((row + 1))
    printf '| %s |' "$name"
    for column in "${columns[@]}"; do
      if [[ -z $column ]]; then printf ' failed |'; else printf ' %s |' "$(sed -n "${row}p" <<<"$column" | cut -d'|' -f2-)"; fi
    done
    printf '\n'
  done <<<"$names"
  # What the stall reasons in the table mean.
  echo
  for reason in "${stalls[@]}"; do
    printf '%s\n' "${columns[@]}" | grep -q "^stall #.*|$reason " || continue
    case $reason in
      long_scoreboard) text="waiting for a global or local memory load (L1TEX) to return" ;;
      short_scoreboard) text="waiting for a shared-memory load (or a special-function result)" ;;
      mio_throttle) text="the shared-memory instruction queue is full" ;;
      barrier) text="waiting at __syncthreads() for the rest of the block" ;;
      math_pipe_throttle) text="the FMA pipe is busy: the arithmetic itself is the limit (good)" ;;
      not_selected) text="ready, but another warp issued this cycle (enough work to hide latency)" ;;
      wait) text="a fixed-latency dependency on the previous instruction" ;;
      lg_throttle) text="the global-memory instruction queue is full" ;;
      dispatch_stall) text="the dispatcher could not issue the chosen instruction" ;;
      no_instruction) text="waiting for instructions (instruction cache)" ;;
      *) text="see Nsight Compute's Warp State Statistics section" ;;
    esac
    echo "- $reason: $text"
  done
  echo
  echo "Commands (the .ncu-rep files open in the Nsight Compute GUI):"
  printf '    %s\n' "${commands[@]}"
} >"$table"
cat "$table"
echo
echo "table: $table"
exit $failed
