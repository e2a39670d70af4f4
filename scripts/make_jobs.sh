#!/usr/bin/env bash
# make, with one job per core where it was asked for "as many as it likes". The presets build with
# the build tool's own parallelism ("jobs": 0), which `cmake --build` hands to make as a bare -j:
# every file that is ready at once, dozens of nvcc processes on a machine of two cores. CMakeLists.txt
# names this script as CMAKE_MAKE_PROGRAM for the Makefile generator; it gives a bare -j the number
# of cores and passes everything else on unchanged (a -j with a number, as CMAKE_BUILD_PARALLEL_LEVEL=N
# or --parallel N makes it, too). Ninja runs about one job per core by itself.
make=$(command -v gmake || command -v make) || { echo "make_jobs.sh: no make on the PATH" >&2; exit 127; }
cores=$(nproc 2>/dev/null || getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)
args=("$@")
for i in "${!args[@]}"; do
  next=${args[i + 1]:-}
  if [[ ${args[i]} == -j && ! $next =~ ^[0-9]+$ ]]; then args[i]=-j$cores; fi
done
exec "$make" "${args[@]}"
