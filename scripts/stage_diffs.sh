#!/usr/bin/env bash
# Keeps the "what changed from the previous stage" diffs in the chapters true to the code.
#
# A chapter marks where a diff goes with a pair of comments:
#   <!-- stage-diff: 02_naive_kernel/main.cu 03_multiblock/main.cu -->
#   ...generated, never edited by hand...
#   <!-- /stage-diff -->
# `scripts/stage_diffs.sh` rewrites what is between them with `diff -u` of the two files, and the
# count in "<N> lines removed or added in all" (as `diff A B | grep -c '^[<>]'` counts them) where
# the chapter has that phrase and one diff. A chapter that walks through a header of common/ (the
# instruction wrappers its stage introduces) shows it the same way, whole, from the source:
#   <!-- listing: common/mbarrier.cuh -->
#   ...generated...
#   <!-- /listing -->
# `scripts/stage_diffs.sh --check` changes nothing and fails when any chapter is stale (a CTest
# test runs it).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
check=0
[[ ${1:-} == --check ]] && check=1

render() { # chapter -> the chapter with every marked block regenerated, on stdout
  local chapter=$1 line inside=0
  blocks=0 changed=0 # read after the call: how many diffs, and the lines of the last one
  while IFS= read -r line || [[ -n $line ]]; do
    if [[ $line =~ ^\<\!--\ stage-diff:\ ([^ ]+)\ ([^ ]+)\ --\>$ ]]; then
      printf '%s\n' "$line"
      printf '```diff\n'
      (cd "$root" && diff -u --label "${BASH_REMATCH[1]}" --label "${BASH_REMATCH[2]}" \
        "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}") || true
      printf '```\n'
      inside=1
      blocks=$((blocks + 1))
      changed=$(cd "$root" && diff "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}" | grep -c '^[<>]' || true)
    elif [[ $line =~ ^\<\!--\ listing:\ ([^ ]+)\ --\>$ ]]; then
      printf '%s\n' "$line"
      printf '```cpp\n'
      cat "$root/${BASH_REMATCH[1]}"
      printf '```\n'
      inside=1
    elif [[ $line == '<!-- /stage-diff -->' || $line == '<!-- /listing -->' ]]; then
      printf '%s\n' "$line"
      inside=0
    elif ((!inside)); then
      printf '%s\n' "$line"
    fi
  done <"$chapter"
}

stale=0
for chapter in "$root"/[0-9][0-9]_*/README.md; do
  grep -q '^<!-- \(stage-diff\|listing\): ' "$chapter" || continue
  fresh=$(mktemp)
  render "$chapter" >"$fresh"
  # One diff in the chapter: the prose's count of its lines is that diff's.
  if ((blocks == 1)); then
    sed -i -E "s/[0-9]+ lines removed or added in all/$changed lines removed or added in all/" "$fresh"
  fi
  if ! cmp -s "$fresh" "$chapter"; then
    if ((check)); then
      echo "stale: ${chapter#"$root"/} (run scripts/stage_diffs.sh)"
      stale=1
    else
      cp "$fresh" "$chapter"
      echo "updated: ${chapter#"$root"/}"
    fi
  fi
  rm -f "$fresh"
done
((check)) && ((stale == 0)) && echo "every stage diff and listing in the chapters is current"
exit $stale
