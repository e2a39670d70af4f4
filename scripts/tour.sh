#!/usr/bin/env bash
# The tour: runs every built stage in order at the size that shows its lesson and prints one
# result line each. Usage: scripts/tour.sh <build-dir>   (the 'tour' target calls it).
# Exit status: 0 when every stage that ran passed (stages skipped for want of a GPU count as
# passed), 1 otherwise.
set -u
build=${1:?usage: tour.sh <build-dir>}
stages=(01_cpu_matmul 02_naive_kernel 03_multiblock 04_shared_tiled 05_transpose 06_dot_reduction)
failed=0 skipped=() lines=()

for stage in "${stages[@]}"; do
  exe="$build/$stage/$stage"
  [[ -x "$exe" ]] || continue
  echo "== $stage" >&2
  output=$("$exe" 2>&1)
  code=$?
  case $code in
    0) ;;
    77) skipped+=("$stage"); lines+=("$stage: skipped (no usable CUDA GPU)"); continue ;;
    *) failed=1 ;;
  esac
  result=$(grep '^RESULT ' <<<"$output" | tail -n 1)
  if [[ -z $result ]]; then
    failed=1
    lines+=("$stage: FAILED (exit $code, no result line)")
    printf '%s\n' "$output" | tail -n 5 >&2
  else
    lines+=("${result#RESULT }")
  fi
done

echo
echo "cuda-stages tour"
printf '  %s\n' "${lines[@]}"
if ((${#skipped[@]})); then
  echo "No usable CUDA GPU here, so ${skipped[*]} did not run: run the tour on a machine with one."
fi
exit $failed
