#!/usr/bin/env bash
# Builds the Doxygen site and checks it: Doxygen must give no warning (the docs target treats one
# as an error), no link inside the site may be broken (scripts/check_links.py: every href and src
# names a file of the site, every #fragment an anchor of its page), and no heading may show markup
# instead of rendering it (a code span in a Markdown heading prints as "<tt>...</tt>"). CI runs it.
#
#   scripts/check_docs.sh [<build dir>]     default: build/default (from cmake --preset default)
#
# Exit status: 0 the site is whole, 1 a Doxygen warning, a broken link or a heading that shows
# markup, 2 bad usage or a missing tool.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build/default}
command -v python3 >/dev/null 2>&1 || { echo "error: python3 is needed to check the site's links" >&2; exit 2; }
[[ -f $build/CMakeCache.txt ]] ||
  { echo "error: '$build' is not a configured build directory (run: cmake --preset default)" >&2; exit 2; }

cmake --build "$build" --target docs ||
  { echo "docs: the build failed: a Doxygen warning, a broken link or a heading that shows markup (each is listed above)"; exit 1; }
python3 "$root/scripts/check_links.py" "$build/docs/html" || exit 1
pages=$(find "$build/docs/html" -maxdepth 1 -name 'side_by_side_*.html' | wc -l)
echo "docs: built with no warnings, no broken link and no stray markup in a heading ($pages side-by-side stage diffs) in $build/docs/html"
