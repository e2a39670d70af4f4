#!/usr/bin/env bash
# Says, as the last lines of a test run, why the GPU tests were skipped. CTest lists each of them as
# "(Skipped)" and counts them among the passed ("100% tests passed"), and never says why: this asks a
# GPU stage, as the tests ask it, and prints the stage's own `SKIP: no usable CUDA GPU: <reason>`
# line last. CTest runs it after every test run (CTEST_CUSTOM_POST_TEST in <build>/CTestCustom.cmake,
# which tests/CMakeLists.txt writes); it always exits 0, since a non-zero exit would fail the run.
#
#   gpu_skip_reason.sh <a GPU stage program> <build dir>
#
# It speaks only when a test of this run was skipped for want of a GPU: when the log CTest is writing
# (<build>/Testing/Temporary/LastTest.log.tmp, complete by now) has a test's `SKIP: no usable CUDA GPU`
# line, or, where CTest writes no such file, whenever the probe finds no GPU. So `ctest -N` and a
# run of CPU tests alone say nothing.
probe=${1:-} build=${2:-}
[[ -x $probe ]] || exit 0 # not built yet: its tests could not run either, and CTest says so
log=$build/Testing/Temporary/LastTest.log.tmp
if [[ -f $log ]] && ! grep -q '^SKIP: no usable CUDA GPU' "$log"; then exit 0; fi
output=$("$probe" --size 1 --reps 1 --warmup 0 --check none 2>&1)
if (($? == 77)); then
  reason=$(grep -m1 '^SKIP: ' <<<"$output") || reason="SKIP: $(basename "$probe") exited 77 without a SKIP: line"
  echo
  echo "The GPU tests (label gpu, and sanitizer) were skipped, not passed: no GPU here that the stages can use."
  echo "docs/troubleshooting.md says what the reason means and what to do. In the stages' words:"
  echo "$reason"
fi
exit 0
