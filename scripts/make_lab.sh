#!/usr/bin/env bash
# Writes a course lab from the stages (docs/instructor.md). Usage:
#
#   scripts/make_lab.sh <out-dir> [--solutions] [--fill <submission>] [--force]
#   scripts/make_lab.sh --export <submission>   every solution, as a submission file ('-': stdout)
#   scripts/make_lab.sh --list                  the marked regions: id, file:line, hint
#
# <out-dir> must be new or empty (a lab may hold a student's work); --force replaces a lab this
# script wrote before, and nothing else.
#
# The stages mark the lines a student writes with a pair of comments and a one-line hint:
#
#   // LAB 04.tile_loop: <hint>
#   // LAB-STUB: <code>        optional: what the exercise keeps instead, where an empty region
#   ...the solution...                   would not build cleanly (a variable used later, say)
#   // END LAB
#
# and the passages of the chapters and comments that would give a region's answer away with a pair
# of HTML comments, the first asking the question the passage answers (invisible on GitHub and in
# Doxygen; in a source comment, after its `//` or `///`):
#
#   <!-- LAB-ANSWER 03.grid: How many blocks along x and along y cover C? -->
#   ...the passage, whole lines...
#   <!-- END LAB-ANSWER -->
#
# The lab is a copy of the repository (what git tracks or would track; without git, all but
# build/, results/ and .git) in which every region is replaced by `// TODO(lab <id>): <hint>` and its
# stub lines, and every passage by its question, `Lab question (<id>): ...`, so that it builds as it
# is, gives no answer away, and its tests fail until the work is done. It is a CMake project with
# the same commands as the repository, and its tests are the grader: they also check performance
# ratios (CUDA_STAGES_LAB_PERF is ON) and that no TODO is left. Its README.md is the students' own
# (scripts/lab/README.md.in: what to write, the stages, the commands, the grading, with the
# performance checks read from tests/grader/perf_checks.cmake). --solutions keeps every solution
# and every passage, and drops the markers. --fill takes the regions a submission names from it: a
# file of sections, each a `// LAB <id>` line (a hint after a colon is allowed), the lines of the
# region, and `// END LAB`; lines outside sections are ignored. Regions it does not name get their
# TODO, or with --solutions their solution; the passages of a filled region are kept. Left out of
# the lab: what is for instructors or for this repository only (docs/instructor.md, CI in .ci/, the
# tests of this generator in tests/lab/, this script and its template in scripts/lab/), the
# deliberately broken kernels (tests/broken/ and tests/broken_*.cu, which hold copies of
# solutions), and the chapters' generated stage diffs (they show the solutions).
#
# Exit status: 0 done, 1 malformed markers in the sources, 2 bad usage (an output directory that is
# not empty, without --force, included) or a bad submission file.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd -P)
here=$PWD
readonly stamp_name=.cuda-stages-lab

die() { # status, message
  echo "error: $2" >&2
  exit "$1"
}
usage() { sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; }

# --- the command line ------------------------------------------------------------------------
out="" solutions=0 fill="" export_to="" list_only=0 force=0
while (($#)); do
  case $1 in
    --solutions) solutions=1 ;;
    --fill) (($# >= 2)) || die 2 "--fill needs a submission file"; fill=$2; shift ;;
    --fill=*) fill=${1#--fill=} ;;
    --export) (($# >= 2)) || die 2 "--export needs a file name ('-' for stdout)"; export_to=$2; shift ;;
    --export=*) export_to=${1#--export=} ;;
    --list) list_only=1 ;;
    --force) force=1 ;;
    -h | --help) usage; exit 0 ;;
    -*) die 2 "unknown option '$1' (see --help)" ;;
    *) [[ -z $out ]] || die 2 "more than one output directory: '$out' and '$1'"; out=$1 ;;
  esac
  shift
done
if [[ -n $export_to || $list_only == 1 ]]; then
  [[ -z $out && -z $fill && $solutions == 0 && $force == 0 ]] || die 2 "--export and --list write no lab: give them alone"
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

# --- the answer passages ---------------------------------------------------------------------
# One awk program reads a file of the lab and, by mode, only checks its LAB-ANSWER passages
# ("check"), replaces each by its question ("exercise"), or keeps it ("solutions"); a passage of a
# region named in `keep` (filled from a submission) is kept in every mode. Marker lines go in every
# mode. A marker is a whole line: indentation, an optional `//` or `///` and one space, the comment.
# The chapters' stage diffs (<!-- stage-diff --> blocks) are passed through untouched, and in
# Markdown a marker inside a fenced code block is an error: GitHub would show it.
answers_awk='
function die(message, line) {
  printf "error: %s:%d: %s\n", path, line ? line : FNR, message > "/dev/stderr"
  failed = 1
  exit 1
}
BEGIN {
  count = split(known_ids, list, " ")
  for (i = 1; i <= count; ++i) known[list[i]] = 1
  count = split(keep_ids, list, " ")
  for (i = 1; i <= count; ++i) keep[list[i]] = 1
  markdown = path ~ /[.]md$/
}
markdown && /^<!-- stage-diff: / {
  if (inside) die("a stage diff inside LAB-ANSWER passage " id)
  opaque = 1
}
opaque {
  if ($0 == "<!-- /stage-diff -->") opaque = 0
  if (mode != "check") print
  next
}
markdown && /^[ \t]*(```|~~~)/ { fenced = !fenced }
/<!-- (END )?LAB-ANSWER/ && fenced { die("a LAB-ANSWER marker inside a fenced code block (GitHub shows it): put it outside the fence") }
/^[ \t]*(\/\/\/? )?<!-- LAB-ANSWER [0-9][0-9][.][a-z0-9_]+: .*[^ ] -->[ \t]*$/ {
  if (inside) die("a LAB-ANSWER passage opens inside passage " id)
  prefix = $0
  sub(/<!--.*$/, "", prefix)
  id = $0
  sub(/^.*<!-- LAB-ANSWER /, "", id)
  question = id
  sub(/:.*$/, "", id)
  sub(/^[^:]*: */, "", question)
  sub(/ -->[ \t]*$/, "", question)
  if (!(id in known)) die("LAB-ANSWER names region " id ", which no stage has (scripts/make_lab.sh --list)")
  inside = 1
  start = FNR
  shown = mode == "solutions" || (id in keep)
  # In a chapter the question is a paragraph of its own (blank lines around it), even where the
  # passage it stands for was part of a paragraph.
  if (mode == "exercise" && !shown) {
    if (markdown) print ""
    print prefix (markdown ? "**Lab question (" id "):** " : "Lab question (" id "): ") question
    if (markdown) print ""
  }
  next
}
/^[ \t]*(\/\/\/? )?<!-- END LAB-ANSWER -->[ \t]*$/ {
  if (!inside) die("END LAB-ANSWER without a LAB-ANSWER line")
  if (FNR == start + 1) die("LAB-ANSWER passage " id " is empty")
  inside = 0
  next
}
/<!-- (END )?LAB-ANSWER/ {
  die("malformed LAB-ANSWER marker (expected <!-- LAB-ANSWER <id>: <question> --> or <!-- END LAB-ANSWER -->, alone on a line): " $0)
}
mode != "check" && (!inside || shown) { print }
END {
  if (failed) exit 1
  if (inside) die("LAB-ANSWER passage " id " has no END LAB-ANSWER", start)
}'

# What goes into a lab: every file git tracks or would track (without git, all but the build
# outputs), less what only instructors or this repository need, or what holds solutions.
left_out() { # path -> true when the lab leaves it out
  case $1 in
    tests/lab/* | tests/broken/* | tests/broken_*.cu | scripts/make_lab.sh | scripts/lab/* | .ci/* | \
      docs/instructor.md | "$stamp_name") return 0 ;;
  esac
  return 1
}
if git -C "$root" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  files() { git -C "$root" ls-files -z --cached --others --exclude-standard; }
else
  files() {
    find . \( -path ./build -o -path ./results -o -path ./.git -o -path ./.cache -o -path ./.vscode \
      -o -path ./.idea \) -prune -o -type f -print0 |
      sed -z 's|^\./||'
  }
fi
shipped=()
while IFS= read -r -d '' file; do
  if [[ -f $file ]] && ! left_out "$file"; then shipped+=("$file"); fi
done < <(files)
# The repository's README.md gives way to the students' own (below); its passages are not read.
passage_files=()
while IFS= read -r file; do
  if [[ $file != README.md ]]; then passage_files+=("$file"); fi
done < <(grep -l -F 'LAB-ANSWER' -- "${shipped[@]}" || true)
known_ids=$(cut -f1 <<<"${regions%$'\n'}" | paste -sd ' ')
for file in "${passage_files[@]}"; do
  awk -v mode=check -v path="$file" -v known_ids="$known_ids" "$answers_awk" "$file" || exit 1
done

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
# the next one, unless it lies under build/ or somewhere git ignores. A directory that is not empty
# may hold a student's work: only --force replaces it, and only if this script wrote it.
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
    die 2 "'$out' is not empty and is not a lab this script wrote (--force replaces only a lab it wrote): choose another directory"
  ((force)) ||
    die 2 "'$out' already holds a lab, perhaps with a student's work in it: give --force to replace it, or choose another directory"
  rm -rf "$out"
fi
mkdir -p "$out" || die 2 "cannot create '$out'"

# --- copy the tree ---------------------------------------------------------------------------
printf '%s\0' "${shipped[@]}" | tar -C "$root" --null -T - -cf - | tar -C "$out" -xf -

# --- the regions, the chapters' diffs, the passages, the grader's switch ----------------------
keep_ids=""
[[ -z $fill ]] || keep_ids=$(paste -sd ' ' <<<"$named")
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
for file in "${passage_files[@]}"; do
  awk -v mode="$mode" -v path="$file" -v known_ids="$known_ids" -v keep_ids="$keep_ids" "$answers_awk" \
    "$out/$file" >"$out/$file.new"
  mv "$out/$file.new" "$out/$file"
done
# The lab's tests grade performance too.
sed -i 's/^\(option(CUDA_STAGES_LAB_PERF .*\) OFF)$/\1 ON)/' "$out/CMakeLists.txt"
grep -q '^option(CUDA_STAGES_LAB_PERF .* ON)$' "$out/CMakeLists.txt" ||
  die 1 "CMakeLists.txt has no 'option(CUDA_STAGES_LAB_PERF ... OFF)' line to switch on"

# --- README.md: the students' own ------------------------------------------------------------
# From scripts/lab/README.md.in: what is left to write (@LAB_TODOS@), the stages in order with
# their chapters (@LAB_STAGES@), and the performance checks as the grader defines them (@LAB_PERF@).
todos=$(cd "$out" && grep -n 'TODO(lab ' "${marked[@]}" || true)
filled=""
[[ -z $fill ]] || filled=$(paste -sd ' ' <<<"$named")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
{
  if [[ -n $todos ]]; then
    echo "| id | where | what to write |"
    echo "|---|---|---|"
    while IFS= read -r todo; do
      where=${todo%%:*}:$(cut -d: -f2 <<<"$todo")
      text=${todo#*TODO(lab }
      printf '| %s | %s | %s |\n' "${text%%)*}" "$where" "${text#*): }"
    done <<<"$todos"
    [[ -z $filled ]] || printf '\nAlready filled in, from %s: %s.\n' "$(basename "$fill")" "$filled"
  elif [[ -n $filled ]]; then
    echo "Nothing: every region is filled in, $filled from $(basename "$fill"), any other with the"
    echo "course's solution. Every test should pass."
  else
    echo "Nothing: every region holds the course's solution (the instructor's copy), and every test"
    echo "should pass."
  fi
} >"$work/todos"
for chapter in "$out"/[0-9][0-9]_*/README.md; do
  [[ -f $chapter ]] || continue
  stage=$(basename "$(dirname "$chapter")")
  title=$(sed -n '1{s/^# *//;s/^[0-9][0-9] — //;p;q}' "$chapter")
  count=$( (grep -c "TODO(lab ${stage:0:2}[.]" <<<"$todos") || true)
  printf '| [%s](%s/README.md) | %s | %s |\n' "$stage" "$stage" "$title" "${count:-0}"
done >"$work/stages"
perf_list=$("${CMAKE_COMMAND:-cmake}" -P "$root/tests/grader/list_perf_checks.cmake" 2>&1) ||
  die 1 "cannot read the performance checks (tests/grader/list_perf_checks.cmake): $perf_list"
while IFS=$'\t' read -r name min fast_target fast_variant fast_args slow_target slow_variant; do
  [[ -n $name ]] || continue
  against="\`$slow_variant\`"
  [[ $slow_target == "$fast_target" ]] || against+=" of \`$slow_target\`"
  printf '  - `%s`: `%s` of `%s` at least %sx as fast as %s (`%s`)\n' "$name" "$fast_variant" \
    "$fast_target" "$min" "$against" "$fast_args"
done <<<"$perf_list" >"$work/perf"
[[ -s $work/perf ]] || die 1 "tests/grader/perf_checks.cmake defines no performance check"
awk -v todos="$work/todos" -v stages="$work/stages" -v perf="$work/perf" '
  function insert(file,    line) {
    while ((getline line < file) > 0) print line
    close(file)
  }
  $0 == "@LAB_TODOS@" { insert(todos); next }
  $0 == "@LAB_STAGES@" { insert(stages); next }
  $0 == "@LAB_PERF@" { insert(perf); next }
  { print }' "$root/scripts/lab/README.md.in" >"$out/README.md"
if grep -n '@LAB_[A-Z]*@' "$out/README.md" >&2; then die 1 "scripts/lab/README.md.in: a placeholder left (above)"; fi
echo "generated by scripts/make_lab.sh ($mode${filled:+, filled: $filled})" >"$out/$stamp_name"

count=$(grep -c . <<<"${regions%$'\n'}")
echo "lab written to $out: $count regions, $([[ -n $todos ]] && grep -c . <<<"$todos" || echo 0) left as TODO" \
  "(its README.md lists them), ${#passage_files[@]} files with answer passages"
echo "next: cd $out && cmake --workflow --preset default"
