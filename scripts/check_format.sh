#!/usr/bin/env bash
# Checks that every C++ and CUDA source (*.cu *.cuh *.cpp *.hpp that git tracks or would track) is
# formatted as the root .clang-format says. Usage:
#
#   scripts/check_format.sh          lists the files that are not, exit status 1 if there is any
#   scripts/check_format.sh --fix    formats them in place
#
# Needs clang-format ($CLANG_FORMAT, else clang-format on the PATH; the files are formatted with
# version 14, and other versions may disagree on details). Building and testing do not need it.
# Exit status: 0 all formatted (or fixed), 1 some are not, 2 bad usage or no clang-format.
set -euo pipefail
cd "$(dirname "$0")/.."
fix=0
case ${1:-} in
  --fix) fix=1 ;;
  "") ;;
  *) echo "usage: scripts/check_format.sh [--fix]" >&2; exit 2 ;;
esac
clang_format=${CLANG_FORMAT:-clang-format}
command -v "$clang_format" >/dev/null 2>&1 || { echo "error: $clang_format not found" >&2; exit 2; }

# The sources: from git where this is a checkout (new files included, ignored ones not), else all.
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files --cached --others --exclude-standard -- '*.cu' '*.cuh' '*.cpp' '*.hpp')
else
  mapfile -t files < <(find . -path ./build -prune -o -type f \( -name '*.cu' -o -name '*.cuh' \
    -o -name '*.cpp' -o -name '*.hpp' \) -print | sed 's|^\./||')
fi

unformatted=()
for file in "${files[@]}"; do
  [[ -f $file ]] || continue # deleted, not yet committed
  if [[ $fix == 1 ]]; then
    "$clang_format" -i "$file"
  elif ! "$clang_format" --dry-run --Werror "$file" >/dev/null 2>&1; then
    unformatted+=("$file")
  fi
done

version=$("$clang_format" --version)
if [[ $fix == 1 ]]; then
  echo "formatted ${#files[@]} files ($version)"
elif ((${#unformatted[@]})); then
  printf 'not formatted: %s\n' "${unformatted[@]}"
  echo "${#unformatted[@]} of ${#files[@]} files differ from .clang-format ($version): run scripts/check_format.sh --fix"
  exit 1
else
  echo "format: all ${#files[@]} C++/CUDA files match .clang-format ($version)"
fi
