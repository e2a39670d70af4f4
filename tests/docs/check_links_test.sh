#!/usr/bin/env bash
# The site's link check (scripts/check_links.py) against a small site with planted faults
# (broken_site/, each on a line marked "planted": broken links, an en dash before an option, headings
# that show markup): it must fail and name every one of them, and
# pass on the same site with those lines taken out. Exit 77 (skipped) without python3.
#
#   check_links_test.sh <check_links.py> <broken_site dir>
set -euo pipefail
checker=$1 fixture=$2
command -v python3 >/dev/null 2>&1 || { echo "python3 not found: the link check is not available"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0
fail() { echo "FAIL: $*"; failed=1; }

# The site as it is: exit 1 and one line for each planted fault.
code=0
python3 "$checker" "$fixture" >"$work/out.txt" 2>&1 || code=$?
cat "$work/out.txt"
[[ $code == 1 ]] || fail "expected exit status 1 on the broken site, got $code"
for expected in \
  'index.html:[0-9]*: href="missing.html": no file missing.html' \
  'index.html:[0-9]*: href="page.html#nowhere": no anchor #nowhere in page.html' \
  'index.html:[0-9]*: href="../outside.html": outside the site' \
  'index.html:[0-9]*: src="gone.png": no file gone.png' \
  'navtreedata.js:[0-9]*: link="page.html#nowhere": no anchor #nowhere in page.html' \
  'en dash before a word.*index.html:[0-9]*: ".*Declares &ndash;block' \
  'heading shows markup.*index.html:[0-9]*: "Why &lt;tt&gt;row = idx / n&lt;/tt&gt;"' \
  'heading shows markup.*index.html:[0-9]*: "A literal `backtick` in a heading"'; do
  grep -q "$expected" "$work/out.txt" || fail "not reported: $expected"
done
planted=$(grep -rc 'planted' "$fixture" | awk -F: '{ n += $2 } END { print n }')
reported=$(grep -c '^broken link: \|^en dash before a word\|^heading shows markup' "$work/out.txt" || true)
[[ $reported == "$planted" ]] || fail "$planted faults planted, $reported reported"

# The same site without them: exit 0.
cp -r "$fixture" "$work/site"
grep -rl 'planted' "$work/site" | while IFS= read -r file; do
  grep -v 'planted' "$file" >"$file.new" && mv "$file.new" "$file"
done
code=0
python3 "$checker" "$work/site" >"$work/out.txt" 2>&1 || code=$?
cat "$work/out.txt"
[[ $code == 0 ]] || fail "expected exit status 0 once the planted faults are gone, got $code"

# Bad usage: exit 2.
code=0
python3 "$checker" "$work/no-such-dir" >/dev/null 2>&1 || code=$?
[[ $code == 2 ]] || fail "expected exit status 2 for a missing directory, got $code"

((failed == 0)) && echo "PASS: the link check reports all $planted planted faults and passes without them"
exit $failed
