#!/usr/bin/env bash
# Fails while any of the files holds a `TODO(lab <id>)` line: prints each (file:line: text), then
# <what follows>. A lab's grader runs it on every stage's sources (lab.no_todo_left) and on each
# stage's own (<stage>.written, tests/testing.cmake). Usage: todos_left.sh <what follows> <file>...
what_follows=$1
shift
if grep -Hn 'TODO(lab ' "$@"; then
  echo "$what_follows"
  exit 1
fi
echo "no TODO(lab ...) left"
