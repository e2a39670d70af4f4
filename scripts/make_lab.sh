#!/usr/bin/env bash
# Writes a course lab from the stages (docs/instructor.md). Usage:
#
#   scripts/make_lab.sh <out-dir> [--solutions] [--fill <submission>]
#   scripts/make_lab.sh --export <submission>   every solution, as a submission file ('-': stdout)
#   scripts/make_lab.sh --list                  the marked regions: id, file:line, hint
#
# The stages mark the lines a student writes with a pair of comments and a one-line hint:
#
#   // LAB 04.tile_loop: <hint>
#   // LAB-STUB: <code>        optional: what the exercise keeps instead, where an empty region
#   ...the solution...                   would not build cleanly (a variable used later, say)
#   // END LAB
#
# The lab is a copy of the repository (what git tracks or would track; without git, all but
# build/, results/ and .git) in which every region is replaced by `// TODO(lab <id>): <hint>` and its
# stub lines, so that it builds as it is and its tests fail until the work is done. It is a CMake
# project with the same commands as the repository, and its tests are the grader: they also check
# performance ratios (CUDA_STAGES_LAB_PERF is ON) and that no TODO is left. --solutions keeps every
# solution and drops the markers. --fill takes the regions a submission names from it: a file of
# sections, each a `// LAB <id>` line (a hint after a colon is allowed), the lines of the region,
# and `// END LAB`; lines outside sections are ignored. Regions it does not name get their TODO, or
# with --solutions their solution. Left out of the lab: the tests of this generator (tests/lab/),
# the deliberately broken kernels (tests/broken/ and tests/broken_*.cu, which hold copies of solutions), this
# script, and the chapters' generated stage diffs (they show the solutions).
#
# <out-dir> must be new, empty, or a lab this script wrote before (which it replaces). Exit status:
# 0 done, 1 malformed markers in the sources, 2 bad usage or a bad submission file.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd -P)
here=$PWD
readonly stamp_name=.cuda-stages-lab

die() { # status, message
  echo "error: $2" >&2
  exit "$1"
}
usage() { sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'; }

# --- the command line ------------------------------------------------------------------------
out="" solutions=0 fill="" export_to="" list_only=0
while (($#)); do
  case $1 in
    --solutions) solutions=1 ;;
    --fill) (($# >= 2)) || die 2 "--fill needs a submission file"; fill=$2; shift ;;
    --fill=*) fill=${1#--fill=} ;;
    --export) (($# >= 2)) || die 2 "--export needs a file name ('-' for stdout)"; export_to=$2; shift ;;
    --export=*) export_to=${1#--export=} ;;
    --list) list_only=1 ;;
    -h | --help) usage; exit 0 ;;
    -*) die 2 "unknown option '$1' (see --help)" ;;
    *) [[ -z $out ]] || die 2 "more than one output directory: '$out' and '$1'"; out=$1 ;;
  esac
  shift
done
if [[ -n $export_to || $list_only == 1 ]]; then
  [[ -z $out && -z $fill && $solutions == 0 ]] || die 2 "--export and --list write no lab: give them alone"
  [[ -z $export_to || $list_only == 0 ]] || die 2 "give --export or --list, not both"
else
  [[ -n $out ]] || die 2 "no output directory given (see --help)"
fi
absolute() { [[ $1 == /* ]] && echo "$1" || echo "$here/$1"; }
[[ -z $out ]] || out=$(absolute "$out")
[[ -z $export_to || $export_to == - ]] || export_to=$(absolute "$export_to")
if [[ -n $fill ]]; then
  [[ -f $fill && -r $fill ]] || die 2 "submission file '$fill' not found"
  fill=$(absolute "$fill")
fi

# --- the marked regions ----------------------------------------------------------------------
# One awk program reads a stage source and, by mode, lists its regions ("list"), prints them as
# a submission ("export"), or prints the source with each region as a TODO ("exercise") or as its
# solution ("solutions"); with a submission loaded, the regions it names come from it instead.
regions_awk='
function die(message, line) {
  printf "error: %s:%d: %s\n", path, line ? line : FNR, message > "/dev/stderr"
  failed = 1
  exit 1
}
function load_submission(file,    line, id, inside) {
  while ((getline line < file) > 0) {
    sub(/\r$/, "", line)
    if (line ~ /^[ \t]*\/\/ LAB [0-9][0-9][.][a-z0-9_]+(:.*)?[ \t]*$/) {
      id = line
      sub(/^[ \t]*\/\/ LAB /, "", id)
      sub(/[: \t].*$/, "", id)
      submitted[id] = ""
      inside = 1
    } else if (line ~ /^[ \t]*\/\/ END LAB[ \t]*$/) {
      inside = 0
    } else if (inside) {
      submitted[id] = submitted[id] line "\n"
    }
  }
  close(file)
}
BEGIN {
  if (submission != "") load_submission(submission)
  stage = substr(path, 1, 2)
}
/^[ \t]*\/\/ LAB [0-9][0-9][.][a-z0-9_]+: / {
  if (inside) die("a LAB region opens inside region " id)
  indent = $0
  sub(/[^ \t].*$/, "", indent)
  id = $0
  sub(/^[ \t]*\/\/ LAB /, "", id)
  hint = id
  sub(/:.*$/, "", id)
  sub(/^[^:]*: */, "", hint)
  if (substr(id, 1, 2) != stage) die("region " id " is not named after its stage (" stage ".<name>)")
  if (hint == "") die("region " id " has no hint after its colon")
  inside = 1
  in_stubs = 1
  start = FNR
  stubs = ""
  body = ""
  next
}
/^[ \t]*\/\/ LAB-STUB: / {
  if (!inside || !in_stubs) die("a LAB-STUB line must follow its LAB line or another LAB-STUB line")
  code = $0
  sub(/^[ \t]*\/\/ LAB-STUB: /, "", code)
  stubs = stubs indent code "\n"
  next
}
/^[ \t]*\/\/ END LAB[ \t]*$/ {
  if (!inside) die("END LAB without a LAB line")
  inside = 0
  if (mode == "list") printf "%s\t%s:%d\t%s\n", id, path, start, hint
  else if (mode == "export") printf "// LAB %s: %s\n%s// END LAB\n\n", id, hint, body
  else if (id in submitted) printf "%s", submitted[id]
  else if (mode == "solutions") printf "%s", body
  else printf "%s// TODO(lab %s): %s\n%s", indent, id, hint, stubs
  next
}
/\/\/ (LAB|LAB-STUB|END LAB)([ :]|$)/ { die("malformed lab marker: " $0) }
{
  if (inside) {
    in_stubs = 0
    body = body $0 "\n"
  } else if (mode == "exercise" || mode == "solutions") {
    print
  }
}
END {
  if (failed) exit 1
  if (inside) die("region " id " has no END LAB", start)
}'

cd "$root"
sources=()
for file in [0-9][0-9]_*/*.cpp [0-9][0-9]_*/*.cu [0-9][0-9]_*/*.hpp [0-9][0-9]_*/*.cuh; do
  if [[ -f $file ]]; then sources+=("$file"); fi
done
regions=""
marked=()
for file in "${sources[@]}"; do
  found=$(awk -v mode=list -v path="$file" "$regions_awk" "$file") || exit 1
  if [[ -n $found ]]; then
    regions+=$found$'\n'
    marked+=("$file")
  fi
done
[[ -n $regions ]] || die 1 "no LAB regions in the stage sources under $root (is this a lab already?)"
duplicates=$(cut -f1 <<<"${regions%$'\n'}" | sort | uniq -d)
[[ -z $duplicates ]] || die 1 "region ids used more than once: $duplicates"

if ((list_only)); then
  printf '%s' "$regions"
  exit 0
fi
if [[ -n $export_to ]]; then
  {
    echo "// Every solution of the cuda-stages course lab, as a submission file: one section per region,"
    echo "// from its \`// LAB <id>\` line to \`// END LAB\`. scripts/make_lab.sh --fill reads it back."
    echo
    for file in "${marked[@]}"; do awk -v mode=export -v path="$file" "$regions_awk" "$file"; done
  } >"$([[ $export_to == - ]] && echo /dev/stdout || echo "$export_to")"
  exit 0
fi

# A submission may only name regions that exist, each once.
if [[ -n $fill ]]; then
  named=$(sed -n 's/\r$//; s/^[[:blank:]]*\/\/ LAB \([0-9][0-9][.][a-z0-9_]*\)\(:.*\)\{0,1\}[[:blank:]]*$/\1/p' "$fill")
  [[ -n $named ]] || die 2 "submission '$fill' has no '// LAB <id>' section"
  again=$(sort <<<"$named" | uniq -d)
  [[ -z $again ]] || die 2 "submission '$fill' has more than one section for: $again"
  while IFS= read -r id; do
    grep -q "^$id"$'\t' <<<"$regions" ||
      die 2 "submission '$fill' names region '$id', which no stage has (scripts/make_lab.sh --list)"
  done <<<"$named"
fi

# --- the output directory --------------------------------------------------------------------
# Checked before anything is created or removed: a lab inside the repository would be copied into
# the next one, unless it lies under build/ or somewhere git ignores.
[[ ! -e $out || -d $out ]] || die 2 "'$out' exists and is not a directory"
existing=$out missing=""
while [[ ! -d $existing ]]; do
  missing=/$(basename "$existing")$missing
  existing=$(dirname "$existing")
done
out=$(cd "$existing" && pwd -P)$missing
case $out/ in
  "$root"/*)
    if [[ $out != "$root"/build/* ]] && ! git -C "$root" check-ignore -q "$out" 2>/dev/null; then
      die 2 "'$out' lies inside the repository, where the next lab would copy it: use build/... or a directory outside"
    fi
    ;;
esac
if [[ -d $out && -n $(ls -A "$out") ]]; then
  [[ -f $out/$stamp_name ]] ||
    die 2 "'$out' is not empty and is not a lab this script wrote: choose another directory"
  rm -rf "$out"
fi
mkdir -p "$out" || die 2 "cannot create '$out'"

# --- copy the tree ---------------------------------------------------------------------------
left_out() { # path -> true when the lab leaves it out
  case $1 in
    tests/lab/* | tests/broken/* | tests/broken_*.cu | scripts/make_lab.sh | "$stamp_name") return 0 ;;
  esac
  return 1
}
file_list=$(mktemp)
trap 'rm -f "$file_list"' EXIT
if git -C "$root" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  files() { git -C "$root" ls-files -z --cached --others --exclude-standard; }
else
  files() {
    find . \( -path ./build -o -path ./results -o -path ./.git -o -path ./.cache -o -path ./.vscode \
      -o -path ./.idea \) -prune -o -type f -print0 |
      sed -z 's|^\./||'
  }
fi
while IFS= read -r -d '' file; do
  if [[ -f $file ]] && ! left_out "$file"; then printf '%s\0' "$file"; fi
done < <(files) >"$file_list"
tar -C "$root" --null -T "$file_list" -cf - | tar -C "$out" -xf -

# --- the regions, the chapters' diffs, the grader's switch -----------------------------------
mode=$([[ $solutions == 1 ]] && echo solutions || echo exercise)
for file in "${marked[@]}"; do
  awk -v mode="$mode" -v path="$file" -v submission="$fill" "$regions_awk" "$file" >"$out/$file"
done
# The chapters embed `diff -u` of consecutive stages (scripts/stage_diffs.sh): in a lab it would
# show the solutions, and it goes stale as soon as a student writes one, so it becomes a note.
for chapter in "$out"/[0-9][0-9]_*/README.md; do
  [[ -f $chapter ]] && grep -q '^<!-- stage-diff: ' "$chapter" || continue
  awk '
    /^<!-- stage-diff: [^ ]+ [^ ]+ -->$/ {
      printf "*In the lab the diff of %s and %s is left out: it shows the code the exercises ask for. ", $3, $4
      printf "Once both are written, `diff -u %s %s` shows what changed.*\n", $3, $4
      skip = 1
      next
    }
    skip && /^<!-- \/stage-diff -->$/ { skip = 0; next }
    !skip { print }' "$chapter" >"$chapter.new"
  mv "$chapter.new" "$chapter"
done
# The lab's tests grade performance too.
sed -i 's/^\(option(CUDA_STAGES_LAB_PERF .*\) OFF)$/\1 ON)/' "$out/CMakeLists.txt"
grep -q '^option(CUDA_STAGES_LAB_PERF .* ON)$' "$out/CMakeLists.txt" ||
  die 1 "CMakeLists.txt has no 'option(CUDA_STAGES_LAB_PERF ... OFF)' line to switch on"

# --- LAB.md: what is left to do --------------------------------------------------------------
todos=$(cd "$out" && grep -n 'TODO(lab ' "${marked[@]}" || true)
filled=""
[[ -z $fill ]] || filled=$(paste -sd ' ' <<<"$named")
{
  echo "# Course lab"
  echo
  if [[ -n $todos ]]; then
    echo "These are the stages of cuda-stages with their key lines taken out. Each place to fill in is"
    echo "marked \`TODO(lab <id>)\` with a hint; the comment above the function says what it must do, and"
    echo "the stage's chapter (its README.md) explains the idea. Where the TODO is followed by a line of"
    echo "code, that line only keeps the program compiling: replace it. Delete each TODO line once its"
    echo "code is written."
    echo
    echo "| id | where | what to write |"
    echo "|---|---|---|"
    while IFS= read -r todo; do
      where=${todo%%:*}:$(cut -d: -f2 <<<"$todo")
      text=${todo#*TODO(lab }
      printf '| %s | %s | %s |\n' "${text%%)*}" "$where" "${text#*): }"
    done <<<"$todos"
    [[ -z $filled ]] || printf '\nAlready filled in, from %s: %s.\n' "$(basename "$fill")" "$filled"
  elif [[ -n $filled ]]; then
    echo "Every region is filled in: $filled from $(basename "$fill"), any other with the"
    echo "repository's solution."
  else
    echo "Every region holds the repository's solution (the instructor's copy): every test should pass."
  fi
  cat <<'EOF'

## Build and test

The same commands as the repository's README; the tests are the grader.

```sh
cmake --workflow --preset default                  # configure, build, run every test
ctest --test-dir build/default -R 04_shared_tiled  # one stage's tests
ctest --test-dir build/default -L cpu              # what runs without a GPU
ctest --test-dir build/default -L perf             # the performance checks only
```

- **Correctness**: every stage runs at random and odd sizes with fixed seeds, its output poisoned
  first, and is checked against a CPU reference. An element your kernel never writes is reported
  as *never written*.
- **compute-sanitizer** (label `sanitizer`, where it is installed): memcheck, racecheck and
  synccheck find out-of-bounds accesses and missing barriers even when the result happened to be
  right.
- **Performance** (label `perf`): ratios between kernels timed on your GPU in the same run, never
  absolute times, e.g. stage 04 at least 1.5x stage 03 (tests/grader/CMakeLists.txt lists them).
  A run that fails its own check is not timed.
- **lab.no_todo_left** fails while a `TODO(lab ...)` line is left, naming each one.

Without a GPU every GPU test reports *skipped*: stage 01 and the TODO check still run. Build and
test on a machine with an NVIDIA GPU (a lab machine, a cluster node) for the rest.
EOF
} >"$out/LAB.md"
echo "generated by scripts/make_lab.sh ($mode${filled:+, filled: $filled})" >"$out/$stamp_name"

count=$(grep -c . <<<"${regions%$'\n'}")
echo "lab written to $out: $count regions, $([[ -n $todos ]] && grep -c . <<<"$todos" || echo 0) left as TODO" \
  "(LAB.md lists them)"
echo "next: cd $out && cmake --workflow --preset default"
