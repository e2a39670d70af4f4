#!/usr/bin/env bash
# One performance check of the course lab (CTest label perf): a ratio of two kernels' median times,
# measured on this GPU in this test, never an absolute time. Usage:
#
#   perf_ratio.sh <min-speedup> <fast-variant> <slow-variant> -- <program> <args...> [-- <program> <args...>]
#
# Runs the first program (and the second, if one is given) with --json and passes when
#   median_ms(slow-variant) / median_ms(fast-variant) >= min-speedup,
# the fast variant taken from the first run, the slow one from the second run (or the first). Each
# run must pass its own verification: the speed of a wrong result is not graded. Exit status: 0
# pass, 1 fail, 2 bad usage, 77 no usable GPU (CTest reports the test skipped).
set -u
(($# >= 5)) && [[ $4 == -- ]] || {
  sed -n '5p' "$0" | sed 's/^# *//' >&2
  exit 2
}
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

# Runs one program with --json; prints its JSON object. Returns 77 without a GPU, 1 when the run
# failed (its last lines are shown): the caller stops there.
run_json() {
  local output code
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
  grep '^{"stage"' <<<"$output" | tail -n 1
}

# Prints the median_ms of the variant named $1 in the JSON object on stdin (the flat format of
# common/report.cpp: one {"name":...} object per variant).
median_ms() {
  awk -v variant="$1" '{
    count = split($0, parts, /\{"name":"/)
    for (i = 2; i <= count; i++) {
      name = parts[i]
      sub(/".*/, "", name)
      if (name == variant && match(parts[i], /"median_ms":[0-9.eE+-]+/)) {
        print substr(parts[i], RSTART + 12, RLENGTH - 12)
        exit
      }
    }
  }'
}

fast_json=$(run_json "${first[@]}") || exit
slow_json=$fast_json
if ((${#second[@]})); then slow_json=$(run_json "${second[@]}") || exit; fi
fast_ms=$(median_ms "$fast_variant" <<<"$fast_json")
slow_ms=$(median_ms "$slow_variant" <<<"$slow_json")
[[ -n $fast_ms ]] || { echo "FAIL: no time for variant '$fast_variant' in the report"; exit 1; }
[[ -n $slow_ms ]] || { echo "FAIL: no time for variant '$slow_variant' in the report"; exit 1; }

awk -v fast="$fast_variant" -v slow="$slow_variant" -v fast_ms="$fast_ms" -v slow_ms="$slow_ms" \
  -v needed="$min_speedup" 'BEGIN {
    speedup = slow_ms / fast_ms
    verdict = speedup >= needed ? "PASS" : "FAIL"
    printf "%s: %s %.4g ms, %s %.4g ms: %s is %.2fx faster (needed: %sx)\n", verdict, fast, fast_ms,
           slow, slow_ms, fast, speedup, needed
    exit verdict == "PASS" ? 0 : 1
  }'
