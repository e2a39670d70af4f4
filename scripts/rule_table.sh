#!/usr/bin/env bash
# Keeps chapter 23's table of the rule's choices true to the code: for each shape of
# scripts/shape_grid.txt, what `23_kernel_choice --plan` chooses for an H200's figures (the ones the
# rule takes when it sees no GPU: the script hides any there is, so that the table is the same on
# every machine). The chapter marks the table with
#   <!-- rule-table -->
#   ...generated, never edited by hand...
#   <!-- /rule-table -->
# Usage: scripts/rule_table.sh <23_kernel_choice program> [--check]   (--check changes nothing and
# fails when the table is stale; a CTest test runs it)
set -euo pipefail
program=${1:?usage: scripts/rule_table.sh <23_kernel_choice program> [--check]}
check=0
[[ ${2:-} == --check ]] && check=1
root=$(cd "$(dirname "$0")/.." && pwd)
chapter=$root/23_kernel_choice/README.md

table() {
  echo "| m x n x k | instance | split | tiles | k-tiles of the busiest block | products | bytes | edges | estimate | bound by |"
  echo "|---|---|---|---:|---:|---:|---:|---:|---:|---|"
  local shapes first rest m n k
  read -r -a shapes <<<"$(sed 's/#.*//' "$root/scripts/shape_grid.txt" | tr -s ' \n' '  ')"
  first=${shapes[0]}
  rest=$(IFS=,; echo "${shapes[*]:1}")
  IFS=x read -r m n k <<<"$first"
  # One process plans every shape (--also), in the grid's order; each plan has one line
  # "chosen: 64x128x64/s8, split always: 64 tiles of 128 k-tiles, at most 64 k-tiles a block;
  #  products 14.9 us, bytes 32.8 us, edges 7.0 us: 39.8 us"
  local chosen
  chosen=$(CUDA_VISIBLE_DEVICES= "$program" --plan --m "$m" --n "$n" --k "$k" --also "$rest" | grep '^ *chosen: ') || true
  if [[ $(grep -c . <<<"$chosen") -ne ${#shapes[@]} ]]; then
    echo "error: $(grep -c . <<<"$chosen") choices in the plans of ${#shapes[@]} shapes" >&2
    exit 1
  fi
  paste -d'|' <(printf '%s\n' "${shapes[@]}") <(sed -E 's/^ *chosen: ([^,]+), split ([a-z]+): ([0-9]+) tiles of [0-9]+ k-tiles, at most ([0-9]+) k-tiles a block; products ([0-9.]+) us, bytes ([0-9.]+) us, edges ([0-9.]+) us: ([0-9.]+) us$/\1|\2|\3|\4|\5|\6|\7|\8/' <<<"$chosen") |
    awk -F'|' '{ bound = ($6 + 0 >= $7 + 0) ? "products" : "bytes"
      printf "| %s | %s | %s | %s | %s | %s µs | %s µs | %s µs | %s µs | %s |\n", $1, $2, $3, $4, $5, $6, $7, $8, $9, bound }'
}

generated=$(table)
current=$(awk '/^<!-- \/rule-table -->$/ { inside = 0 } inside { print } /^<!-- rule-table -->$/ { inside = 1 }' "$chapter")
grep -q '^<!-- rule-table -->$' "$chapter" || { echo "error: $chapter has no <!-- rule-table --> marker" >&2; exit 1; }
if [[ $generated == "$current" ]]; then
  echo "the rule's table in 23_kernel_choice/README.md is current ($(grep -c '^| [0-9]' <<<"$generated") shapes)"
  exit 0
fi
if ((check)); then
  echo "stale: the rule's table in 23_kernel_choice/README.md; run scripts/rule_table.sh <program>" >&2
  diff <(echo "$current") <(echo "$generated") | head -20 >&2
  exit 1
fi
awk -v table="$generated" '
  /^<!-- rule-table -->$/ { print; print table; skip = 1; next }
  /^<!-- \/rule-table -->$/ { skip = 0 }
  !skip { print }' "$chapter" >"$chapter.tmp" && mv "$chapter.tmp" "$chapter"
echo "updated: the rule's table in 23_kernel_choice/README.md"
