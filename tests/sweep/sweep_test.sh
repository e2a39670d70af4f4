#!/usr/bin/env bash
# scripts/sweep.sh on a build directory that holds one fake matrix-multiply stage (a shell script
# that prints the report a stage prints with --json, for the problem it was given): the sweep must
# hand a square size over as --size N and a shape as --m M --n N --k K, choose the repetitions and
# the check by the product's size, and write both into its CSV and tables; a size that is neither
# is rejected before any run; --grid sweeps the grid of shapes, with the geometric mean and the
# count under 95% under the table, and the heat map; --processes N runs each size in N processes and
# reports the median of their figures. No GPU needed. Usage: sweep_test.sh <sweep.sh> <scratch-dir>
set -u
sweep=$1 work=$2
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$work" && mkdir -p "$work/build/90_fake" || fail "cannot make $work"
cat >"$work/build/90_fake/90_fake" <<FAKE
#!/usr/bin/env bash
# The fake stage: --plan names a product; a run records its arguments and prints a report.
[[ \$1 == --plan ]] && { echo "90_fake: C (16x16x16) = A * B"; exit 0; }
echo "\$*" >>"$work/args.log"
echo '{"stage":"90_fake","unit":"GFLOP/s","yardstick":"cuBLAS","headline":"fake","result":"PASS","inputs":"bf16","variants":[{"name":"cuBLAS","rate":1000.0,"pct_yardstick":100.0,"yardstick":true},{"name":"fake","rate":500.0,"pct_yardstick":50.0,"yardstick":false}]}'
FAKE
chmod +x "$work/build/90_fake/90_fake"

out=$(bash "$sweep" "$work/build" "$work/results" --sizes "256 64x8192x512 16384x1024x1024" 2>&1)
code=$?
((code == 0)) || fail "the sweep exited $code: $out"
args=$(cat "$work/args.log")
grep -qx -- "--size 256 --reps 20 --warmup 3 --check auto --json" <<<"$args" || fail "256: $args"
grep -qx -- "--m 64 --n 8192 --k 512 --reps 20 --warmup 3 --check auto --json" <<<"$args" || fail "64x8192x512: $args"
grep -qx -- "--m 16384 --n 1024 --k 1024 --reps 10 --warmup 3 --check sample --json" <<<"$args" ||
  fail "16384x1024x1024 (past 1024^3 products: the sampled check): $args"
csv="$work/results/sweep.csv"
for row in "90_fake,256,500.0,50.00,1000.0,PASS,bf16" "90_fake,64x8192x512,500.0,50.00,1000.0,PASS,bf16" \
  "90_fake,16384x1024x1024,500.0,50.00,1000.0,PASS,bf16"; do
  grep -qx -- "$row" "$csv" || fail "sweep.csv has no row $row: $(cat "$csv")"
done
grep -qE '^16384x1024x1024 +500 +1000$' "$work/results/sweep.txt" || fail "the table has no row for the shape: $(cat "$work/results/sweep.txt")"
echo "ok: a size and two shapes swept, each with the arguments and the check its products call for"

out=$(bash "$sweep" "$work/build" "$work/results" --sizes "256 64x8192" 2>&1)
code=$?
((code == 2)) && [[ $out == *"'64x8192' is neither a size N nor a shape MxNxK"* ]] || fail "64x8192 accepted (exit $code): $out"
[[ $(wc -l <"$work/args.log") == 3 ]] || fail "a stage ran before the bad size was rejected"
echo "ok: 64x8192 rejected before any run"

# --grid: the shapes of scripts/shape_grid.txt, each run once; the % table closes with the stage's
# geometric mean and its count of shapes under 95% (the fake is at 50% of cuBLAS everywhere); the
# heat map is drawn where python3 has matplotlib.
rm -f "$work/args.log"
grid=$(sed 's/#.*//' "$(dirname "$sweep")/shape_grid.txt" | wc -w)
((grid >= 30)) || fail "the grid has $grid shapes, fewer than 30"
out=$(bash "$sweep" "$work/build" "$work/results" --grid 2>&1)
code=$?
((code == 0)) || fail "the sweep of the grid exited $code: $out"
[[ $(wc -l <"$work/args.log") == "$grid" ]] || fail "$(wc -l <"$work/args.log") runs for the $grid shapes of the grid"
grep -qx -- "--m 64 --n 8192 --k 8192 --reps 10 --warmup 3 --check sample --json" "$work/args.log" ||
  fail "64x8192x8192 not run from the grid: $(head -3 "$work/args.log")"
grep -qE '^ *geomean +50[.]0$' "$work/results/sweep.txt" || fail "no geometric mean of 50.0: $(tail -4 "$work/results/sweep.txt")"
grep -qE "^ *< 95% +$grid\$" "$work/results/sweep.txt" || fail "not all $grid shapes counted under 95%: $(tail -4 "$work/results/sweep.txt")"
if [[ $out == *"plot: skipped"* ]]; then
  echo "ok: the grid's $grid shapes swept, geometric mean and count under 95% (no matplotlib: no heat map)"
else
  [[ -s $work/results/sweep_heatmap.png ]] || fail "matplotlib found but no heat map: $out"
  echo "ok: the grid's $grid shapes swept, geometric mean and count under 95%, heat map drawn"
fi

# --processes 3: each size in three processes, a round over the list at a time; each figure the
# median of the three. A fake whose figures move from process to process (40%, 50%, 90% of cuBLAS,
# its rate and cuBLAS's with them), and the second run at the second size failing.
cat >"$work/build/90_fake/90_fake" <<FAKE
#!/usr/bin/env bash
[[ \$1 == --plan ]] && { echo "90_fake: C (16x16x16) = A * B"; exit 0; }
echo "\$*" >>"$work/args.log"
count=\$(grep -cxF -- "\$*" "$work/args.log") # this size's first, second or third run
pct=\$((40 + 10 * (count == 2) + 50 * (count == 3)))
result=PASS
[[ \$* == "--size 512 "* && \$count == 2 ]] && result=FAIL
echo '{"stage":"90_fake","unit":"GFLOP/s","yardstick":"cuBLAS","headline":"fake","result":"'\$result'","inputs":"bf16","variants":[{"name":"cuBLAS","rate":'\$((pct * 30))'.0,"pct_yardstick":100.0,"yardstick":true},{"name":"fake","rate":'\$((pct * 10))'.0,"pct_yardstick":'\$pct'.0,"yardstick":false}]}'
[[ \$result == PASS ]]
FAKE
rm -f "$work/args.log"
out=$(bash "$sweep" "$work/build" "$work/results" --sizes "256 512 1000" --processes 3 2>&1)
code=$?
((code == 1)) || fail "a failed run at 512, yet the sweep over three processes exited $code: $out"
[[ $(wc -l <"$work/args.log") == 8 ]] || fail "$(wc -l <"$work/args.log") runs, not 3 sizes x 3 processes less the one after 512 failed: $(cat "$work/args.log")"
[[ $(sed -n 4p "$work/args.log") == "--size 256 "* ]] || fail "the second round did not start after the first: $(cat "$work/args.log")"
# Each size's runs are at 40%, 50% and 90% in turn: the medians are 50%, a rate of 500 and cuBLAS's
# 1500, where the first process's figures, the last's or their means would be others.
for row in "90_fake,256,500.0,50.00,1500.0,PASS,bf16" "90_fake,1000,500.0,50.00,1500.0,PASS,bf16"; do
  grep -qx -- "$row" "$work/results/sweep.csv" || fail "sweep.csv has no row $row: $(cat "$work/results/sweep.csv")"
done
grep -q '^90_fake,512,.*,FAIL,bf16$' "$work/results/sweep.csv" || fail "512 not FAIL: $(cat "$work/results/sweep.csv")"
grep -q 'each figure the median of 3 processes' "$work/results/sweep.txt" || fail "the table does not say it shows medians"
out=$(bash "$sweep" "$work/build" "$work/results" --sizes 256 --processes 0 2>&1)
(($? == 2)) && [[ $out == *"--processes: '0' is not a number of processes in [1, 9]"* ]] || fail "--processes 0 accepted: $out"
echo "ok: --processes 3 ran three rounds and reported the median of each size's three figures"
