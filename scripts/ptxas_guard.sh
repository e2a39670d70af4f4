#!/usr/bin/env bash
# The compiler launcher of the Hopper stages (CMake's CUDA_COMPILER_LAUNCHER, set by
# cs_require_architecture for sm_90a code): runs the compile command it is given, passes its output
# on, and fails the compile when ptxas reports a "Potential Performance Loss" (C7504 .. C7519:
# wgmma serialized, setmaxnreg ignored, ...). Those are printed as "info", the build would go on,
# and the kernel would run the slow path without a word: here they stop it, naming the function.
# Usage (by the build tool): ptxas_guard.sh <compiler> <arguments>...
set -u
output=$("$@" 2>&1)
status=$?
[[ -n $output ]] && printf '%s\n' "$output" >&2
if ((status == 0)) && grep -q 'Potential Performance Loss' <<<"$output"; then
  object=""
  previous=""
  for argument in "$@"; do
    [[ $previous == -o ]] && object=$argument
    previous=$argument
  done
  [[ -n $object ]] && rm -f "$object"
  echo "error: ptxas reports a potential performance loss (above) in ${object:-this compile}: the" \
    "kernel would run serialized; see chapter 20 (wgmma and the registers it accumulates into)" >&2
  exit 1
fi
exit "$status"
