#!/usr/bin/env bash
# One performance check of the course lab (CTest label perf): a ratio of two kernels' median times,
# measured on this GPU in this test, never an absolute time. Usage:
#
#   perf_ratio.sh <min-speedup> <fast-variant> <slow-variant> -- <program> <args...> [-- <program> <args...>]
#
# Runs the first program (and the second, if one is given) with --json and passes when
#   median_ms(slow-variant) / median_ms(fast-variant) >= min-speedup,
# the fast variant taken from the first run, the slow one from the second run (or the first). Each
# run must pass its own verification: the speed of a wrong result is not graded. The reports are
# read by CMake's JSON parser (scripts/read_report.cmake, with the cmake in $CMAKE_COMMAND, else the
# one on the PATH). Exit status: 0 pass, 1 fail, 2 bad usage, 77 no usable GPU (CTest: skipped).
set -u
export LC_ALL=C # a decimal point in awk, whatever the locale
(($# >= 5)) && [[ $4 == -- ]] || {
  sed -n '5p' "$0" | sed 's/^# *//' >&2
  exit 2
}
reader=$(cd "$(dirname "$0")/../../scripts" && pwd)/read_report.cmake
min_speedup=$1 fast_variant=$2 slow_variant=$3
shift 4
first=() second=()
while (($#)) && [[ $1 != -- ]]; do
  first+=("$1")
  shift
done
if (($#)); then
  shift
  second=("$@")
fi

# Runs one program with --json and prints its report, one line per variant (read_report.cmake).
# Returns 77 without a GPU, 1 when the run failed (its last lines are shown): the caller stops there.
run_report() {
  local output code json
  output=$("$@" --json 2>&1)
  code=$?
  if ((code == 77)); then
    grep -m1 '^SKIP' <<<"$output" >&2
    return 77
  fi
  if ((code != 0)); then
    tail -n 12 <<<"$output" >&2
    echo "FAIL: $(basename "$1") did not pass its own checks (exit $code), so its speed is not graded" >&2
    return 1
  fi
  grep -m1 '^RESULT' <<<"$output" >&2
  json=$(grep '^{"stage"' <<<"$output" | tail -n 1)
  [[ -n $json ]] || { echo "FAIL: $(basename "$1") printed no JSON report" >&2; return 1; }
  "${CMAKE_COMMAND:-cmake}" -D "JSON=$json" -P "$reader" ||
    { echo "FAIL: the JSON report of $(basename "$1") could not be read (above)" >&2; return 1; }
}

# Prints the median_ms of the variant named $1 in the report lines on stdin, if it has one.
median_ms() {
  local variant ms
  while IFS='|' read -r _ _ _ _ _ _ variant _ ms _; do
    if [[ $variant == "$1" && $ms != - ]]; then
      echo "$ms"
      return
    fi
  done
}

fast_report=$(run_report "${first[@]}") || exit
slow_report=$fast_report
if ((${#second[@]})); then slow_report=$(run_report "${second[@]}") || exit; fi
fast_ms=$(median_ms "$fast_variant" <<<"$fast_report")
slow_ms=$(median_ms "$slow_variant" <<<"$slow_report")
[[ -n $fast_ms ]] || { echo "FAIL: no time for variant '$fast_variant' in the report"; exit 1; }
[[ -n $slow_ms ]] || { echo "FAIL: no time for variant '$slow_variant' in the report"; exit 1; }

# The verdict (awk for the floating-point arithmetic).
awk -v fast="$fast_variant" -v slow="$slow_variant" -v fast_ms="$fast_ms" -v slow_ms="$slow_ms" \
  -v needed="$min_speedup" 'BEGIN {
    speedup = slow_ms / fast_ms
    verdict = speedup >= needed ? "PASS" : "FAIL"
    printf "%s: %s %.4g ms, %s %.4g ms: %s is %.2fx faster (needed: %sx)\n", verdict, fast, fast_ms,
           slow, slow_ms, fast, speedup, needed
    exit verdict == "PASS" ? 0 : 1
  }'
