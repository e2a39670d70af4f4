#!/usr/bin/env bash
# Tests scripts/ptxas_guard.sh, the Hopper stages' compiler launcher. Usage:
#   ptxas_guard_test.sh <project-dir> [<nvcc>]
# With stand-in compilers (no GPU, no nvcc needed): a compile whose output reports a "Potential
# Performance Loss" fails and leaves no object; a clean one passes, its object kept. With <nvcc>:
# stage 20 with its pin_sums call left out (one kernel instance, the unaligned one, whose shuffled
# stores read the sums) must fail to build, ptxas naming C7514, compiled as the build compiles
# (--split-compile: on several threads).
set -u
root=$1
nvcc=${2:-}
guard="$root/scripts/ptxas_guard.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0
check() { # description, expected exit status, command...
  local what=$1 expected=$2
  shift 2
  "$@" >"$work/out" 2>&1
  local status=$?
  if ((status == expected)); then echo "ok: $what"; else
    echo "FAIL: $what (exit $status, expected $expected)"; cat "$work/out"; failed=1
  fi
}
check "a report of a performance loss fails the compile" 1 bash "$guard" sh -c \
  'echo "ptxas info    : (C7514) Potential Performance Loss: wgmma.mma_async instructions are serialized"; touch "$1"' \
  compiler "$work/slow.o" -o "$work/slow.o"
[[ ! -e $work/slow.o ]] || { echo "FAIL: the object of a failed compile is left behind"; failed=1; }
check "a clean compile passes" 0 bash "$guard" sh -c 'echo "ptxas info : Used 168 registers"; touch "$1"' \
  compiler "$work/fast.o" -o "$work/fast.o"
[[ -e $work/fast.o ]] || { echo "FAIL: the object of a clean compile is gone"; failed=1; }
check "a failing compile keeps its own status" 3 bash "$guard" sh -c 'exit 3'
if [[ -n $nvcc ]]; then
  # Stage 20 without the pin, one instance: the table keeps its first row, and that row's aligned
  # instance is replaced by the unaligned one (the only one the shuffles are in).
  sed -e '/^    cs::pin_sums(sums);$/d' "$root/20_split_k/main.cu" | awk '
    /^const cs::KernelTable/ { declaration = 1 }
    declaration { print; if (/kKernels = \{$/) { declaration = 0; table = 1;
      print "    {\"128x256x64/s4\", matmul_wgmma<128, 256, 64, 4, false>},"; } next }
    table && /^};/ { table = 0 }
    table { next }
    { print }' >"$work/main.cu"
  grep -q 'cs::pin_sums' "$work/main.cu" && { echo "FAIL: the pin is still there"; exit 1; }
  check "stage 20 without pin_sums fails to build (C7514)" 1 bash "$guard" "$nvcc" -I"$root/common" -O3 \
    -std=c++17 -gencode=arch=compute_90a,code=sm_90a --split-compile=0 -c "$work/main.cu" -o "$work/main.o"
  grep -q 'C7514' "$work/out" || { echo "FAIL: no C7514 named"; cat "$work/out"; failed=1; }
fi
exit $failed
