#!/usr/bin/env bash
# The tests of the course lab and its grader (registered in tests/lab/CMakeLists.txt). Usage:
#
#   lab_check.sh build <work> [make_lab options...] [--target <target>]
#       writes a lab to <work>/tree with scripts/make_lab.sh, configures it in <work>/build with this
#       build's compilers and architectures (lab_config.sh), and builds it (all, or one target)
#   lab_check.sh grade <work> <tag> pass|fail [--gpu <probe>] [--may-skip <regex>]
#                [--must-fail <test>]... [--must-fail-all <regex>]... [--must-fail-any <regex>]...
#                [--must-say <text>]... -- <ctest arguments>
#       runs the lab's tests (its grader) with a JUnit report, <work>/junit-<tag>.xml, and checks
#       the verdict: pass (with --gpu: nothing skipped either, but the tests matching --may-skip:
#       stages this GPU cannot run), or fail with the named tests among
#       the failures (--must-fail-all: every test matching; --must-fail-any: at least one), and the
#       texts of --must-say in the tests' output
#   lab_check.sh generator <work>
#       checks scripts/make_lab.sh itself: the three kinds of tree, the students' README.md, the
#       answer passages, round trips, --force, and bad input
#   lab_check.sh answers <work>
#       checks that no file of an exercise tree holds a distinctive line of any solution, and that
#       the check finds lines planted in a chapter and in a source comment
#   lab_check.sh stage01 <work>
#       runs stage 01 of the lab built in <work> (the exercise tree: its i-k-j loop is a TODO) and
#       checks that it fails and claims no speed for the failed loop
#   lab_check.sh instructor <work> [--may-skip <regex>]
#       runs the instructor guide's grading commands (docs/instructor.md) as they are written, on a
#       student's lab written from the solutions, and checks that every stage was copied and graded;
#       and the guide's commands for a class without Hopper GPUs, on the same key
#
# --gpu <probe> runs <probe> (a GPU stage) first and exits 77, skipped, when there is no usable GPU.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd -P)
root=$(cd "$here/../.." && pwd -P)
make_lab=$root/scripts/make_lab.sh
# The build this test belongs to: cmake, ctest, generator, compilers, architectures.
# shellcheck source=/dev/null
source "${LAB_CONFIG:?LAB_CONFIG must name the lab_config.sh the build wrote}"

fail() {
  echo "FAIL: $*"
  exit 1
}
skip_without_gpu() { # probe program
  local output
  output=$("$1" --size 1 --reps 1 --warmup 0 --check none 2>&1)
  if (($? == 77)); then
    grep -m1 '^SKIP' <<<"$output" || echo "SKIP: no usable CUDA GPU"
    exit 77
  fi
}
show_log() { # log file, lines
  echo "---- last $2 lines of $1"
  tail -n "$2" "$1"
  echo "----"
}

build() {
  mkdir -p "$1" || fail "cannot create $1"
  local work
  work=$(cd "$1" && pwd -P)
  shift
  local lab_options=() targets=()
  while (($#)); do
    if [[ $1 == --target ]]; then
      targets=(--target "$2")
      shift 2
    else
      lab_options+=("$1")
      shift
    fi
  done
  rm -rf "$work/build" "$work"/junit-*.xml
  bash "$make_lab" "$work/tree" --force "${lab_options[@]}" || fail "make_lab.sh ${lab_options[*]} failed"
  echo "configuring $work/build"
  "$cmake_command" -S "$work/tree" -B "$work/build" -G "$generator" -DCMAKE_BUILD_TYPE="$build_type" \
    -DCMAKE_CXX_COMPILER="$cxx_compiler" -DCMAKE_CUDA_COMPILER="$cuda_compiler" \
    -DCMAKE_CUDA_ARCHITECTURES="$cuda_architectures" >"$work/configure.log" 2>&1 ||
    { show_log "$work/configure.log" 40; fail "the lab does not configure"; }
  echo "building ${targets[1]:-everything} with $build_jobs jobs"
  "$cmake_command" --build "$work/build" --parallel "$build_jobs" "${targets[@]}" >"$work/build.log" 2>&1 ||
    { show_log "$work/build.log" 60; fail "the lab does not build"; }
  if grep -i -E '(^|[^a-z_])warning' "$work/build.log"; then fail "the lab builds with warnings (above)"; fi
  echo "the lab configures and builds with no warnings"
}

grade() {
  [[ -d $1 ]] || fail "no lab built in $1"
  local work tag=$2 expect=$3
  work=$(cd "$1" && pwd -P)
  shift 3
  local must_fail=() must_fail_all=() must_fail_any=() must_say=() gpu=0 may_skip='^$'
  while (($#)) && [[ $1 != -- ]]; do
    case $1 in
      --gpu) skip_without_gpu "$2"; gpu=1 ;;
      --may-skip) may_skip=$2 ;;
      --must-fail) must_fail+=("$2") ;;
      --must-fail-all) must_fail_all+=("$2") ;;
      --must-fail-any) must_fail_any+=("$2") ;;
      --must-say) must_say+=("$2") ;;
      *) fail "lab_check.sh grade: unknown option $1" ;;
    esac
    shift 2
  done
  shift
  [[ -f $work/build/CTestTestfile.cmake ]] || fail "no lab built in $work/build"
  local junit=$work/junit-$tag.xml log=$work/ctest-$tag.log
  rm -f "$junit"
  echo "ctest --test-dir $work/build --output-junit $junit $*"
  "$ctest_command" --test-dir "$work/build" --output-junit "$junit" "$@" >"$log" 2>&1
  local code=$?
  # The summary CTest prints, then the report an autograder would read.
  sed -n '/tests passed/,$p' "$log" | grep -v -e '^$' -e '(Skipped)$' | head -n 60
  [[ -s $junit ]] || fail "ctest --output-junit wrote no report"
  local results
  results=$(grep -o '<testcase name="[^"]*" classname="[^"]*" time="[^"]*" status="[a-z]*"' "$junit" |
    sed 's/^<testcase name="\([^"]*\)".* status="\([a-z]*\)"$/\1 \2/')
  [[ -n $results ]] || fail "the JUnit report lists no test"
  local total failed skipped
  total=$(grep -c . <<<"$results")
  failed=$(awk '$2 == "fail" { print $1 }' <<<"$results")
  skipped=$(awk '$2 == "notrun" || $2 == "disabled" { print $1 }' <<<"$results")
  echo "JUnit report: $total tests, $(grep -c . <<<"$failed") failed, $(grep -c . <<<"$skipped") skipped ($junit)"
  echo "full output: $log"

  if [[ $expect == pass ]]; then
    ((code == 0)) && [[ -z $failed ]] || fail "the grader should pass this lab; failed: $(echo $failed)"
    local unexpected
    unexpected=$(grep -v -E -e "$may_skip" <<<"$skipped")
    if ((gpu)) && [[ -n $unexpected ]]; then fail "tests skipped on a GPU machine: $(echo $unexpected)"; fi
    echo "PASS: the grader passes this lab"
    return
  fi
  ((code != 0)) && [[ -n $failed ]] || fail "the grader should fail this lab, and it passed"
  local name pattern missing=()
  for name in "${must_fail[@]}"; do
    if ! awk -v name="$name" '$1 == name { found = 1 } END { exit !found }' <<<"$results"; then
      if [[ $name == *.sanitizer.* ]]; then
        echo "SKIP: $name is not registered here (compute-sanitizer not found), and it is what catches this"
        exit 77
      fi
      fail "no test named $name ran"
    fi
    grep -qxF -- "$name" <<<"$failed" || missing+=("$name")
  done
  for pattern in "${must_fail_all[@]}"; do
    while read -r name status; do
      [[ $name =~ $pattern && $status != fail ]] && missing+=("$name")
    done <<<"$results"
  done
  for pattern in "${must_fail_any[@]}"; do
    grep -qE -- "$pattern" <<<"$failed" || missing+=("any test matching $pattern")
  done
  ((${#missing[@]} == 0)) || fail "the grader failed this lab, but these should have failed too: ${missing[*]}"
  local text
  for text in "${must_say[@]}"; do
    grep -qF -- "$text" "$junit" || fail "the grader failed this lab, but no test output says: $text"
    echo "ok: a test says: $text"
  done
  echo "PASS: the grader fails this lab, as it should (failed: $(echo $failed))"
}

generator() {
  local work=$1 file
  rm -rf "$work"
  mkdir -p "$work" || fail "cannot create $work"
  work=$(cd "$work" && pwd -P)
  local regions count
  regions=$(bash "$make_lab" --list) || fail "make_lab.sh --list failed"
  count=$(grep -c . <<<"$regions")
  echo "$count marked regions"

  # The three trees. The solutions, exported and filled back into an exercise tree, give the
  # solutions tree again, and that is the stage sources without their marker lines.
  bash "$make_lab" "$work/exercise" >/dev/null || fail "the exercise tree"
  bash "$make_lab" "$work/solutions" --solutions >/dev/null || fail "the solutions tree"
  bash "$make_lab" --export "$work/solutions.lab" || fail "--export"
  bash "$make_lab" "$work/filled" --fill "$work/solutions.lab" >/dev/null || fail "--fill"
  diff -r -x README.md -x .cuda-stages-lab "$work/solutions" "$work/filled" ||
    fail "an exercise tree filled with the exported solutions differs from the solutions tree"
  for file in $(cut -f2 <<<"$regions" | cut -d: -f1 | sort -u); do
    grep -v -E '^[[:blank:]]*// (LAB [0-9][0-9][.][a-z0-9_]+: |LAB-STUB: |END LAB$)' "$root/$file" |
      grep -v -E '^[[:blank:]]*(///? )?<!-- (LAB-ANSWER [0-9][0-9][.][a-z0-9_]+: .* |END LAB-ANSWER )-->[[:blank:]]*$' |
      cmp -s - "$work/solutions/$file" || fail "$file in the solutions tree is not the stage's code"
  done
  echo "ok: export + fill = --solutions = the stages without their markers (LAB and LAB-ANSWER)"

  # The exercise tree: one TODO per region, no marker left in any source, the grader switched on, and
  # the generator, its tests and the broken kernels left out.
  local todos
  todos=$(cd "$work/exercise" && grep -rn 'TODO(lab ' --include='*.cu' --include='*.cpp' [0-9][0-9]_*)
  (($(grep -c . <<<"$todos") == count)) || fail "expected $count TODO lines, found: $todos"
  if grep -rn -E '// (LAB [0-9]|LAB-STUB:|END LAB)' --include='*.cu' --include='*.cpp' --include='*.cuh' \
    --include='*.hpp' "$work/exercise" "$work/solutions"; then
    fail "marker lines left in a lab (above)"
  fi
  grep -q '^option(CUDA_STAGES_LAB_PERF .* ON)$' "$work/exercise/CMakeLists.txt" ||
    fail "CUDA_STAGES_LAB_PERF is not ON in the lab"
  for file in tests/lab scripts/make_lab.sh scripts/lab tests/broken tests/broken_matmul.cu docs/instructor.md .ci \
    LAB.md; do
    [[ ! -e $work/exercise/$file ]] || fail "$file should be left out of the lab"
  done
  echo "ok: $count TODOs, no markers, perf checks on, generator, its tests and the instructors' pages left out"

  # The students' README.md: the TODOs (one place), the stages in order, the commands, the
  # performance checks exactly as the grader defines them, and nothing of the repository's own
  # README (the generator, its options and its tests are not in a lab).
  local readme=$work/exercise/README.md
  grep -q '^| 04.tile_loop | 04_shared_tiled/main.cu:[0-9]* | ' "$readme" || fail "README.md does not list 04.tile_loop"
  (($(grep -c '^| [0-9][0-9][.][a-z0-9_]* | ' "$readme") == count)) || fail "README.md does not list the $count TODOs"
  grep -q '^| \[03_multiblock\](03_multiblock/README.md) | .* | 2 |$' "$readme" ||
    fail "README.md does not list stage 03 with its chapter and its 2 TODOs"
  for text in 'cmake --workflow --preset default' 'ctest --test-dir build/default -R 04_shared_tiled' \
    'ctest --test-dir build/default -L cpu' '--plan' 'lab.no_todo_left'; do
    grep -qF -- "$text" "$readme" || fail "README.md does not mention $text"
  done
  local checks name min
  checks=$("${cmake_command:-cmake}" -P "$root/tests/grader/list_perf_checks.cmake") || fail "list_perf_checks.cmake"
  [[ -n $checks ]] || fail "list_perf_checks.cmake lists no performance check"
  while IFS=$'\t' read -r name min _; do
    grep -qF -- "- \`$name\`: " "$readme" && grep -F -- "- \`$name\`: " "$readme" | grep -qF " at least ${min}x " ||
      fail "README.md does not give the performance check $name with its minimum ${min}x"
  done <<<"$checks"
  if grep -n -E 'make_lab|--solutions|tests/lab|instructor|labmeta|@LAB_' "$readme"; then
    fail "README.md speaks of what a lab does not have (above)"
  fi
  grep -q '^| 04.tile_loop | ' "$work/solutions/README.md" && fail "the solutions tree's README.md lists TODOs"
  echo "ok: README.md lists the $count TODOs, the stages, the commands and the $(grep -c . <<<"$checks") performance checks"

  # The answer passages: in the exercise tree each is its question, with --solutions the passage;
  # no marker is left in either.
  grep -q '^\*\*Lab question (03.grid):\*\* ' "$work/exercise/03_multiblock/README.md" ||
    fail "chapter 03 in the exercise tree does not ask the 03.grid question"
  grep -q '^/// Lab question (03.grid): ' "$work/exercise/03_multiblock/main.cu" ||
    fail "03_multiblock/main.cu in the exercise tree does not ask the 03.grid question"
  if grep -n 'ceil(n / COLS) x ceil(m / ROWS)\|ceil(n / cols) x ceil(m / rows)' \
    "$work/exercise/03_multiblock/README.md" "$work/exercise/03_multiblock/main.cu"; then
    fail "the exercise tree still gives 03's grid away (above)"
  fi
  grep -q 'ceil(n / COLS) x ceil(m / ROWS)' "$work/solutions/03_multiblock/README.md" ||
    fail "the solutions tree lost chapter 03's grid"
  if grep -rn 'LAB-ANSWER' "$work/exercise" "$work/solutions"; then fail "LAB-ANSWER markers left in a lab (above)"; fi
  if grep -rn 'Lab question ([0-9]' "$work/solutions"; then fail "questions in the solutions tree (above)"; fi
  echo "ok: the answer passages are questions in the exercise tree and passages in the solutions tree"

  # Filling one region: that region from the submission, every other one a TODO.
  printf '// a comment outside any section\n// LAB 06.warp_sum\n  value += 0.0f; // submitted\n// END LAB\n' \
    >"$work/one.lab"
  bash "$make_lab" "$work/one" --fill "$work/one.lab" >/dev/null || fail "--fill with one section"
  grep -q '^  value += 0.0f; // submitted$' "$work/one/06_dot_reduction/main.cu" || fail "the section was not filled in"
  (($(grep -rn 'TODO(lab ' "$work/one"/[0-9][0-9]_* | grep -c .) == count - 1)) || fail "expected $((count - 1)) TODOs"
  # A filled region's passages stay; the others' are questions.
  printf '// LAB 03.grid\n  const std::int64_t blocks_x = 1, blocks_y = 1;\n// END LAB\n' >"$work/grid.lab"
  bash "$make_lab" "$work/grid" --fill "$work/grid.lab" >/dev/null || fail "--fill with 03.grid"
  grep -q 'ceil(n / COLS) x ceil(m / ROWS)' "$work/grid/03_multiblock/README.md" ||
    fail "--fill 03.grid: chapter 03 lost its 03.grid passage"
  grep -q '^\*\*Lab question (03.kernel):\*\* ' "$work/grid/03_multiblock/README.md" ||
    fail "--fill 03.grid: chapter 03 no longer asks the 03.kernel question"
  echo "ok: --fill takes the regions a submission names, with their passages, and leaves the others as TODOs"

  # A lab may hold a student's work: a second run refuses it, --force replaces it (a lab it wrote,
  # nothing else), and anything else it refuses.
  local output code
  touch "$work/exercise/student-work"
  output=$(bash "$make_lab" "$work/exercise" 2>&1)
  code=$?
  ((code == 2)) && [[ $output == error:*--force* ]] ||
    fail "a second run over a lab: expected exit 2 and an error naming --force, got exit $code: $output"
  [[ -f $work/exercise/student-work ]] || fail "make_lab.sh removed a lab without --force"
  echo "ok: a lab already there: $output"
  bash "$make_lab" "$work/exercise" --force >/dev/null || fail "a second run over its own lab with --force"
  [[ ! -e $work/exercise/student-work && -f $work/exercise/README.md ]] || fail "--force did not replace the lab"
  mkdir -p "$work/empty-dir"
  bash "$make_lab" "$work/empty-dir" >/dev/null || fail "an empty directory"
  echo "ok: --force replaces a lab it wrote, an empty directory needs no --force"
  expect_error() { # exit status, what, make_lab arguments...
    local status=$1 what=$2 output
    shift 2
    output=$(bash "$make_lab" "$@" 2>&1)
    local code=$?
    ((code == status)) && [[ $output == error:* ]] ||
      fail "$what: expected exit $status and 'error: ...', got exit $code: $output"
    echo "ok: $what: $output"
  }
  mkdir -p "$work/foreign" && touch "$work/foreign/keep"
  expect_error 2 "a directory it did not write" "$work/foreign"
  expect_error 2 "a directory it did not write, with --force" "$work/foreign" --force
  [[ -f $work/foreign/keep ]] || fail "make_lab.sh touched a directory it did not write"
  expect_error 2 "--force with --list" --list --force
  expect_error 2 "no output directory"
  expect_error 2 "an unknown option" "$work/x" --bogus
  expect_error 2 "a missing submission" "$work/x" --fill "$work/no-such-file"
  printf '// LAB 99.nothing\n\n// END LAB\n' >"$work/unknown.lab"
  expect_error 2 "a submission naming a region no stage has" "$work/x" --fill "$work/unknown.lab"
  printf '// LAB 06.warp_sum\n// END LAB\n// LAB 06.warp_sum\n// END LAB\n' >"$work/twice.lab"
  expect_error 2 "a submission naming a region twice" "$work/x" --fill "$work/twice.lab"
  printf 'nothing here\n' >"$work/empty.lab"
  expect_error 2 "a submission with no section" "$work/x" --fill "$work/empty.lab"
  expect_error 2 "an output directory inside the repository" "$root/docs/lab-inside"
  [[ ! -e $root/docs/lab-inside ]] || fail "make_lab.sh left $root/docs/lab-inside behind"

  # Malformed markers, in a stand-in repository holding just the script and one stage: a source
  # (01_x/main.cpp) and a chapter (01_x/README.md). It lies outside this repository, whose git would
  # otherwise list its files.
  local fake
  fake=$(mktemp -d) || fail "mktemp -d"
  # shellcheck disable=SC2064 # the path is fixed now
  trap "rm -rf '$fake'" EXIT
  malformed_in() { # file (main.cpp or README.md), what, then the lines of that file
    local file=$1 what=$2
    shift 2
    rm -rf "${fake:?}"/*
    mkdir -p "$fake/scripts" "$fake/01_x"
    cp "$make_lab" "$fake/scripts/"
    printf '%s\n' "  // LAB 01.f: one" "  return 1;" "  // END LAB" >"$fake/01_x/main.cpp"
    printf '%s\n' "# 01" "" "Text." >"$fake/01_x/README.md"
    printf '%s\n' "$@" >"$fake/01_x/$file"
    local output
    output=$(bash "$fake/scripts/make_lab.sh" --list 2>&1)
    local code=$?
    ((code == 1)) && [[ $output == error:*01_x/$file:[0-9]* ]] ||
      fail "$what: expected exit 1 and 'error: 01_x/$file:<line>: ...', got exit $code: $output"
    echo "ok: $what: $output"
  }
  malformed() { malformed_in main.cpp "$@"; }
  malformed "a region with no end" "int f() {" "  // LAB 01.f: return one" "  return 1;" "}"
  malformed "an end with no region" "int f() {" "  return 1;" "  // END LAB" "}"
  malformed "a region inside a region" "  // LAB 01.f: one" "  // LAB 01.g: two" "  // END LAB"
  malformed "a stub after the solution" "  // LAB 01.f: one" "  return 1;" "  // LAB-STUB: return 0;" "  // END LAB"
  malformed "a region named after another stage" "  // LAB 02.f: one" "  return 1;" "  // END LAB"
  malformed "a region without a hint" "  // LAB 01.f:" "  return 1;" "  // END LAB"
  local open='<!-- LAB-ANSWER 01.f: Which one? -->' close='<!-- END LAB-ANSWER -->'
  malformed_in README.md "a passage with no end" "Text." "$open" "It is one."
  malformed_in README.md "an end with no passage" "Text." "$close"
  malformed_in README.md "a passage inside a passage" "$open" "$open" "It is one." "$close" "$close"
  malformed_in README.md "a passage naming a region no stage has" "<!-- LAB-ANSWER 01.g: Which? -->" "One." "$close"
  malformed_in README.md "a passage without a question" "<!-- LAB-ANSWER 01.f: -->" "One." "$close"
  malformed_in README.md "a marker that is not alone on its line" "Text $open" "One." "$close"
  malformed_in README.md "an empty passage" "$open" "$close"
  malformed_in README.md "a marker in a fenced code block" '```' "$open" "return 1;" "$close" '```'
  malformed_in main.cpp "a passage in a source comment with no end" "/// $open" "/// It is one." "int f();" \
    "  // LAB 01.f: one" "  return 1;" "  // END LAB"
  echo "PASS: make_lab.sh writes the three kinds of lab and rejects bad input"
}

# The distinctive lines of every solution, "<id><TAB><line>" each, into <work>/distinctive.tsv: from
# the exported solutions, each line trimmed and without a trailing `// comment`, at least
# min_answer_chars long, not a comment or a preprocessor line, and found in no source file of a
# freshly written exercise tree (<work>/baseline: the stage sources outside the regions, with the
# stubs, and everything else a lab ships) but those of later stages. A line found there is code the
# exercise shows anyway. A later stage carries an earlier stage's answers as given code (a lesson
# region is written once, in the stage that teaches it): the lab is done in order.
later_stage() { # region id, path relative to a tree: is the path in a stage after the region's?
  local path=$2
  [[ $path =~ ^([0-9][0-9])_ ]] && ((10#${BASH_REMATCH[1]} > 10#${1%%.*}))
}
readonly min_answer_chars=12
distinctive_lines() { # work
  local work=$1
  rm -rf "$work/baseline"
  bash "$make_lab" "$work/baseline" >/dev/null || fail "make_lab.sh could not write $work/baseline"
  bash "$make_lab" --export "$work/solutions.lab" || fail "make_lab.sh --export failed"
  awk -v min="$min_answer_chars" '
    /^\/\/ LAB [0-9][0-9][.][a-z0-9_]+/ { id = $3; sub(/:$/, "", id); next }
    /^\/\/ END LAB$/ { id = ""; next }
    id != "" {
      line = $0
      sub(/[ \t]+\/\/ .*$/, "", line)
      gsub(/^[ \t]+|[ \t]+$/, "", line)
      if (length(line) >= min && line !~ /^(\/\/|#)/) print id "\t" line
    }' "$work/solutions.lab" | awk '!seen[$0]++' >"$work/candidates.tsv"
  [[ -s $work/candidates.tsv ]] || fail "no solution lines found in the exported solutions"
  local sources=()
  mapfile -d '' sources < <(find "$work/baseline" -type f \( -name '*.cu' -o -name '*.cpp' -o -name '*.cuh' \
    -o -name '*.hpp' \) -print0)
  local id line file shown
  : >"$work/distinctive.tsv"
  while IFS=$'\t' read -r id line; do
    shown=0
    while IFS= read -r file; do
      later_stage "$id" "${file#"$work/baseline"/}" || { shown=1; break; }
    done < <(grep -lF -e "$line" "${sources[@]}")
    ((shown)) || printf '%s\t%s\n' "$id" "$line" >>"$work/distinctive.tsv"
  done <"$work/candidates.tsv"
}

# Searches every file of <tree> for each distinctive line; prints "<id>: '<line>' in <file>:<n>"
# for each one found, and returns 1 when any was.
find_answers() { # work tree
  local work=$1 tree=$2 id line found=0 hit
  while IFS=$'\t' read -r id line; do
    while IFS= read -r hit; do
      [[ -n $hit ]] || continue
      hit=${hit#"$tree"/}
      later_stage "$id" "$hit" && continue
      echo "  $id: its solution line '$line' is in ${hit%%:*}:$(cut -d: -f2 <<<"$hit")"
      found=1
    done < <(grep -rnaF -e "$line" "$tree" | cut -c1-400)
  done <"$work/distinctive.tsv"
  return $((found))
}

answers() {
  local work=$1
  rm -rf "$work"
  mkdir -p "$work" || fail "cannot create $work"
  work=$(cd "$work" && pwd -P)
  distinctive_lines "$work"
  local regions ids
  regions=$(bash "$make_lab" --list | cut -f1) || fail "make_lab.sh --list failed"
  # A region none of whose lines is distinctive is given away by code the lab ships anyway, in its own
  # stage or an earlier one.
  ids=$(cut -f1 "$work/distinctive.tsv" | sort -u)
  local shown=""
  for id in $regions; do
    grep -qxF "$id" <<<"$ids" || shown+="  $id: every solution line is also code outside the regions"$'\n'
  done
  [[ -z $shown ]] || fail "the exercise tree shows these solutions in code outside their regions:
$shown"
  grep -qxF 03.grid <<<"$ids" && grep -qxF 06.book_tree <<<"$ids" ||
    fail "03.grid and 06.book_tree need distinctive lines for the planted-leak check below"
  echo "$(grep -c . "$work/distinctive.tsv") distinctive solution lines in $(grep -c . <<<"$regions") regions"

  # The exercise tree, every file of it: chapters, LAB.md, README, docs, scripts, tests.
  bash "$make_lab" "$work/exercise" >/dev/null || fail "make_lab.sh could not write the exercise tree"
  local output
  output=$(find_answers "$work" "$work/exercise") ||
    fail "the exercise tree gives solutions away (mark the passage with LAB-ANSWER, see docs/instructor.md):
$output"
  echo "ok: no solution line of any region in any file of the exercise tree"

  # The check itself: a solution line planted in a chapter, and one in a source comment, are found.
  local planted=$work/planted plant
  rm -rf "$planted" && cp -R "$work/exercise" "$planted"
  plant=$(awk -F'\t' '$1 == "06.book_tree" { print $2; exit }' "$work/distinctive.tsv")
  [[ -n $plant ]] || fail "06.book_tree has no distinctive line to plant"
  printf '\nThe tree, as a hint:\n\n    %s\n' "$plant" >>"$planted/06_dot_reduction/README.md"
  plant=$(awk -F'\t' '$1 == "03.grid" { print $2; exit }' "$work/distinctive.tsv")
  sed -i "1a // $plant" "$planted/02_naive_kernel/main.cu"
  # The same line in a later stage is given code there, as the lab is done in order: not reported.
  sed -i "1a // $plant" "$planted/05_transpose/main.cu"
  if output=$(find_answers "$work" "$planted"); then fail "a planted solution line was not found"; fi
  echo "$output"
  grep -q "^  06.book_tree: .* in 06_dot_reduction/README.md:[0-9]" <<<"$output" ||
    fail "the line planted in chapter 06 was not reported as 06.book_tree"
  grep -q "^  03.grid: .* in 02_naive_kernel/main.cu:2$" <<<"$output" ||
    fail "the line planted in a comment of 02_naive_kernel/main.cu was not reported as 03.grid"
  (($(grep -c . <<<"$output") == 2)) || fail "expected exactly the two planted lines"
  echo "PASS: no answer in the exercise tree, and the check finds planted ones"
}

# Stage 01 as delivered: its i-k-j loop writes nothing, so it fails; a wrong result can be made at
# any speed, so the run must claim none for it: no speed-up line, no speed-up field, no GFLOP/s.
stage01() {
  local work program output code row
  work=$(cd "$1" && pwd -P) || fail "no lab built in $1"
  program=$work/build/01_cpu_matmul/01_cpu_matmul
  [[ -x $program ]] || fail "no stage 01 built in $work/build"
  output=$("$program" --size 64 --reps 1 2>&1)
  code=$?
  echo "$output"
  ((code == 1)) || fail "stage 01 with its TODO should exit 1 (a failed check), got $code"
  row=$(grep -E '^ikj +[0-9]' <<<"$output") || fail "no ikj row in the table"
  [[ $row == *FAIL ]] || fail "the ikj row does not say FAIL: $row"
  [[ $(awk '{ print $4 }' <<<"$row") == - ]] || fail "the failed ikj row still gives a rate in GFLOP/s: $row"
  if grep -n -i -E 'faster|speed-?up' <<<"$output"; then fail "stage 01 claims a speed for a failed loop (above)"; fi
  grep -q 'ikj failed its check: no speed is compared' <<<"$output" || fail "stage 01 does not say why no speed is given"
  echo "PASS: stage 01 fails as delivered and claims no speed for the failed loop"
}

# The lines of the sh block that follows the marker line <!-- <name> --> in the instructor guide.
guide_commands() { # name
  awk -v marker="<!-- $1 -->" '
    $0 == marker { marked = 1; next }
    marked && !inside && /^```sh$/ { inside = 1; next }
    marked && !inside && NF { exit }
    inside && /^```$/ { exit }
    inside { print }' "$root/docs/instructor.md"
}

# The instructor guide's commands, run as they are written: *Grading a submission* on a student's lab
# that holds the course's solutions (exported, then filled into an exercise tree, as a student's
# finished work looks), and *A class without Hopper GPUs*. They run with this build's cmake and
# ctest first on the PATH, and its generator, compilers and architectures in the variables CMake
# reads, on half the cores (CMAKE_BUILD_PARALLEL_LEVEL, CTEST_PARALLEL_LEVEL).
instructor() {
  local work=$1 may_skip='^$'
  shift
  while (($#)); do
    case $1 in
      --may-skip) may_skip=$2; shift 2 ;;
      *) fail "lab_check.sh instructor: unknown option $1" ;;
    esac
  done
  rm -rf "$work"
  mkdir -p "$work" || fail "cannot create $work"
  work=$(cd "$work" && pwd -P)
  local grading no_hopper
  grading=$(guide_commands grading-commands)
  no_hopper=$(guide_commands no-hopper-commands)
  [[ -n $grading ]] || fail "docs/instructor.md has no sh block after <!-- grading-commands -->"
  [[ -n $no_hopper ]] || fail "docs/instructor.md has no sh block after <!-- no-hopper-commands -->"
  local guide_env=(env "PATH=$(dirname "$cmake_command"):$PATH" "CMAKE_GENERATOR=$generator" "CXX=$cxx_compiler"
    "CUDACXX=$cuda_compiler" "CUDAARCHS=$cuda_architectures" "CMAKE_BUILD_PARALLEL_LEVEL=$build_jobs"
    "CTEST_PARALLEL_LEVEL=$build_jobs" "repo=$root")

  # A class without Hopper GPUs: the lab it writes has TODOs in stages 01 to 14, 23, 26, 27 and 28
  # (the rule, the pairs, the buffers and the neighbours, graded by their plans) alone, all of theirs.
  local regions early todos
  regions=$(bash "$make_lab" --list | cut -f1) || fail "make_lab.sh --list"
  if ! grep -qE '^(1[5-9]|2[0-2])[.]' <<<"$regions"; then
    echo "note: no region of stages 15 to 22 here, so no lab for a class without Hopper GPUs to write"
  else
    "${guide_env[@]}" "work=$work/no-hopper-key" "lab=$work/no-hopper" bash -e -c "mkdir -p \"\$work\"; $no_hopper" \
      >"$work/no-hopper.log" 2>&1 || { show_log "$work/no-hopper.log" 30; fail "the guide's commands for a class without Hopper GPUs failed"; }
    early=$(grep -E '^(0[0-9]|1[0-4]|23|26|27|28)[.]' <<<"$regions" | sort)
    todos=$(cd "$work/no-hopper" && grep -rho 'TODO(lab [0-9][0-9][.][a-z0-9_]*)' [0-9][0-9]_* | sed 's/^TODO(lab //; s/)$//' | sort)
    [[ $todos == "$early" ]] || fail "the lab for a class without Hopper GPUs should have a TODO for each region of 01 to 14, 23, 26, 27 and 28 and no other; it has: $(echo $todos)"
    echo "ok: the guide's lab for a class without Hopper GPUs has the $(grep -c . <<<"$early") TODOs of stages 01 to 14, 23, 26, 27 and 28 and no other"
  fi

  # The student's finished lab, then the guide's grading commands on it.
  bash "$make_lab" --export "$work/key.lab" || fail "make_lab.sh --export"
  bash "$make_lab" "$work/alice" --fill "$work/key.lab" >/dev/null || fail "make_lab.sh --fill"
  echo "the guide's grading commands, with submission=$work/alice grade=$work/grade:"
  sed 's/^/  | /' <<<"$grading"
  "${guide_env[@]}" "submission=$work/alice" "grade=$work/grade" bash -e -o pipefail -c "$grading" \
    >"$work/grading.log" 2>&1 || { show_log "$work/grading.log" 60; fail "the guide's grading commands failed on a lab that holds every solution"; }

  local stages stage file
  stages=$(cd "$work/alice" && ls -d [0-9][0-9]_* | sort)
  for stage in $stages; do
    for file in "$work/alice/$stage"/main.c*; do
      cmp -s "$file" "$work/grade/$stage/$(basename "$file")" ||
        fail "$stage/$(basename "$file") of the submission did not reach the lab that was graded"
    done
  done
  echo "ok: every stage's sources of the submission reached the graded lab ($(echo $stages | wc -w) stages)"

  local junit=$work/grade/report.xml build=$work/grade/build/default
  [[ -s $junit ]] || fail "the guide's grading commands wrote no report at \$grade/report.xml"
  local results cpu_tests failed
  results=$(grep -o '<testcase name="[^"]*" classname="[^"]*" time="[^"]*" status="[a-z]*"' "$junit" |
    sed 's/^<testcase name="\([^"]*\)".* status="\([a-z]*\)"$/\1 \2/')
  [[ -n $results ]] || fail "the report lists no test"
  cpu_tests=$("$ctest_command" --test-dir "$build" -N -L cpu | sed -n 's/^ *Test *#[0-9]*: //p')
  [[ -n $cpu_tests ]] || fail "the graded lab has no CPU test"
  failed=$(awk '$2 == "fail" { print $1 }' <<<"$results")
  [[ -z $failed ]] || fail "tests failed on a lab that holds every solution: $(echo $failed)"
  local gpu=1 probe_output
  probe_output=$("$build/02_naive_kernel/02_naive_kernel" --size 1 --reps 1 --warmup 0 --check none 2>&1)
  if (($? == 77)); then
    gpu=0
    echo "no usable GPU here: $(grep -m1 '^SKIP' <<<"$probe_output")"
  fi
  local name status cpu_ran gpu_tests wrong summary=""
  for stage in $stages; do
    cpu_ran=0 gpu_tests=0 wrong=""
    while read -r name status; do
      [[ $name == "$stage".* ]] || continue
      if grep -qxF -- "$name" <<<"$cpu_tests"; then
        [[ $status == run ]] && cpu_ran=$((cpu_ran + 1)) || wrong+=" $name($status)"
      else
        gpu_tests=$((gpu_tests + 1))
        if ((gpu == 0)); then
          [[ $status == notrun ]] || wrong+=" $name($status, not skipped without a GPU)"
        elif [[ $status != run && ! $name =~ $may_skip ]]; then
          wrong+=" $name($status)"
        fi
      fi
    done <<<"$results"
    ((cpu_ran > 0)) || fail "no CPU test of $stage ran"
    [[ $stage == 01_* ]] || ((gpu_tests > 0)) || fail "$stage has no GPU test in the report"
    [[ -z $wrong ]] || fail "$stage:$wrong"
    summary+=" $stage:$cpu_ran+$gpu_tests"
  done
  echo "ok: every stage graded (CPU tests run + GPU tests $( ((gpu)) && echo run || echo 'reported skipped')):$summary"
  echo "PASS: the guide's grading commands copy and grade every stage of a submission"
}

command=${1:-}
shift || true
case $command in
  build) build "$@" ;;
  grade) grade "$@" ;;
  generator) generator "$@" ;;
  answers) answers "$@" ;;
  stage01) stage01 "$@" ;;
  instructor) instructor "$@" ;;
  *) fail "usage: lab_check.sh build|grade|generator|answers|stage01|instructor ... (see the comment at the top)" ;;
esac
