#!/usr/bin/env bash
# The instructor guide's table of the lab's regions (docs/instructor.md, between the lines
# `<!-- lab-regions -->` and `<!-- /lab-regions -->`), written from `scripts/make_lab.sh --list`:
# one row per region the stages mark, with its file and the hint the lab gives, so that the table
# cannot drift from the regions. The test lab.regions_table_current runs --check, which also fails
# when the guide's prose names (in backticks) a region that no stage marks.
#
#   scripts/lab/regions_table.sh            writes the table into docs/instructor.md
#   scripts/lab/regions_table.sh --check    exit 1, showing the difference, when the table is stale
#
# Exit status: 0 done (or current), 1 stale, 2 bad usage or no table markers in the guide.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
guide=$root/docs/instructor.md
check=0
case ${1:-} in
  "") ;;
  --check) check=1 ;;
  *) echo "usage: scripts/lab/regions_table.sh [--check]" >&2; exit 2 ;;
esac
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

regions=$(bash "$root/scripts/make_lab.sh" --list)
{
  echo "| region | in | what the student writes (the lab's hint) |"
  echo "|---|---|---|"
  while IFS=$'\t' read -r id where hint; do
    file=${where%%:*}
    printf '| `%s` | [%s](../%s) | %s |\n' "$id" "$file" "$file" "${hint//|/\\|}"
  done <<<"$regions"
} >"$work/table"

awk -v table="$work/table" '
  $0 == "<!-- lab-regions -->" {
    print
    while ((getline line < table) > 0) print line
    skip = 1
    found++
    next
  }
  $0 == "<!-- /lab-regions -->" { skip = 0; ended++ }
  !skip { print }
  END { if (found != 1 || ended != 1) exit 3 }' "$guide" >"$work/guide" || {
  echo "error: docs/instructor.md needs one <!-- lab-regions --> line and one <!-- /lab-regions --> line after it" >&2
  exit 2
}

if ((check)); then
  if ! diff -u "$guide" "$work/guide" >"$work/diff"; then
    cat "$work/diff"
    echo "FAIL: the table of regions in docs/instructor.md is not what scripts/make_lab.sh --list gives" \
      "(- the guide, + the regions): run scripts/lab/regions_table.sh"
    exit 1
  fi
  # The guide's prose names regions too (`07.block`): each must be one the stages mark.
  unknown=$(grep -o '`[0-9][0-9][.][a-z0-9_]*`' "$guide" | tr -d '`' | sort -u | grep -vxF -f <(cut -f1 <<<"$regions") || true)
  if [[ -n $unknown ]]; then
    grep -n -F -e "$(sed 's/.*/`&`/' <<<"$unknown")" "$guide"
    echo "FAIL: docs/instructor.md names regions no stage marks (above): $(echo $unknown)"
    exit 1
  fi
  echo "ok: docs/instructor.md lists the $(grep -c . <<<"$regions") regions scripts/make_lab.sh --list gives"
  exit 0
fi
cp "$work/guide" "$guide"
echo "written: the table of $(grep -c . <<<"$regions") regions in docs/instructor.md"
