#!/usr/bin/env bash
# The tests of the course lab and its grader (registered in tests/lab/CMakeLists.txt). Usage:
#
#   lab_check.sh build <work> [make_lab options...] [--target <target>]
#       writes a lab to <work>/tree with scripts/make_lab.sh, configures it in <work>/build with this
#       build's compilers and architectures (lab_config.sh), and builds it (all, or one target)
#   lab_check.sh grade <work> <tag> pass|fail [--gpu <probe>] [--must-fail <test>]...
#                [--must-fail-all <regex>]... [--must-fail-any <regex>]... -- <ctest arguments>
#       runs the lab's tests (its grader) with a JUnit report, <work>/junit-<tag>.xml, and checks
#       the verdict: pass (with --gpu: nothing skipped either), or fail with the named tests among
#       the failures (--must-fail-all: every test matching; --must-fail-any: at least one)
#   lab_check.sh generator <work>
#       checks scripts/make_lab.sh itself: the three kinds of tree, round trips, and bad input
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
  bash "$make_lab" "$work/tree" "${lab_options[@]}" || fail "make_lab.sh ${lab_options[*]} failed"
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
  local must_fail=() must_fail_all=() must_fail_any=() gpu=0
  while (($#)) && [[ $1 != -- ]]; do
    case $1 in
      --gpu) skip_without_gpu "$2"; gpu=1 ;;
      --must-fail) must_fail+=("$2") ;;
      --must-fail-all) must_fail_all+=("$2") ;;
      --must-fail-any) must_fail_any+=("$2") ;;
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
    if ((gpu)) && [[ -n $skipped ]]; then fail "tests skipped on a GPU machine: $(echo $skipped)"; fi
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
  diff -r -x LAB.md -x .cuda-stages-lab "$work/solutions" "$work/filled" ||
    fail "an exercise tree filled with the exported solutions differs from the solutions tree"
  for file in $(cut -f2 <<<"$regions" | cut -d: -f1 | sort -u); do
    grep -v -E '^[[:blank:]]*// (LAB [0-9][0-9][.][a-z0-9_]+: |LAB-STUB: |END LAB$)' "$root/$file" |
      cmp -s - "$work/solutions/$file" || fail "$file in the solutions tree is not the stage's code"
  done
  echo "ok: export + fill = --solutions = the stages without their markers"

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
  for file in tests/lab scripts/make_lab.sh tests/broken tests/broken_matmul.cu; do
    [[ ! -e $work/exercise/$file ]] || fail "$file should be left out of the lab"
  done
  grep -q '^| 04.tile_loop | 04_shared_tiled/main.cu:' "$work/exercise/LAB.md" || fail "LAB.md does not list 04.tile_loop"
  echo "ok: $count TODOs, no markers, perf checks on, generator and its tests left out, LAB.md lists the TODOs"

  # Filling one region: that region from the submission, every other one a TODO.
  printf '// a comment outside any section\n// LAB 06.warp_sum\n  value += 0.0f; // submitted\n// END LAB\n' \
    >"$work/one.lab"
  bash "$make_lab" "$work/one" --fill "$work/one.lab" >/dev/null || fail "--fill with one section"
  grep -q '^  value += 0.0f; // submitted$' "$work/one/06_dot_reduction/main.cu" || fail "the section was not filled in"
  (($(grep -rn 'TODO(lab ' "$work/one"/[0-9][0-9]_* | grep -c .) == count - 1)) || fail "expected $((count - 1)) TODOs"
  echo "ok: --fill takes the regions a submission names, and leaves the others as TODOs"

  # A second run replaces a lab it wrote; anything else it refuses.
  bash "$make_lab" "$work/exercise" >/dev/null || fail "a second run over its own lab"
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
  [[ -f $work/foreign/keep ]] || fail "make_lab.sh touched a directory it did not write"
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

  # Malformed markers, in a stand-in repository holding just the script and one stage.
  local fake=$work/fake
  malformed() { # what, then the lines of the stage source
    local what=$1
    shift
    rm -rf "$fake"
    mkdir -p "$fake/scripts" "$fake/01_x"
    cp "$make_lab" "$fake/scripts/"
    printf '%s\n' "$@" >"$fake/01_x/main.cpp"
    local output
    output=$(bash "$fake/scripts/make_lab.sh" --list 2>&1)
    local code=$?
    ((code == 1)) && [[ $output == error:*01_x/main.cpp:* ]] ||
      fail "$what: expected exit 1 and 'error: 01_x/main.cpp:<line>: ...', got exit $code: $output"
    echo "ok: $what: $output"
  }
  malformed "a region with no end" "int f() {" "  // LAB 01.f: return one" "  return 1;" "}"
  malformed "an end with no region" "int f() {" "  return 1;" "  // END LAB" "}"
  malformed "a region inside a region" "  // LAB 01.f: one" "  // LAB 01.g: two" "  // END LAB"
  malformed "a stub after the solution" "  // LAB 01.f: one" "  return 1;" "  // LAB-STUB: return 0;" "  // END LAB"
  malformed "a region named after another stage" "  // LAB 02.f: one" "  return 1;" "  // END LAB"
  malformed "a region without a hint" "  // LAB 01.f:" "  return 1;" "  // END LAB"
  echo "PASS: make_lab.sh writes the three kinds of lab and rejects bad input"
}

command=${1:-}
shift || true
case $command in
  build) build "$@" ;;
  grade) grade "$@" ;;
  generator) generator "$@" ;;
  *) fail "usage: lab_check.sh build|grade|generator ... (see the comment at the top)" ;;
esac
