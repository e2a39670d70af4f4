#!/usr/bin/env bash
cd "$(dirname "$0")/.."
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv,noheader; } > "$OUT/machine.txt"
cmake --preset default > "$OUT/cfg.log" 2>&1
cmake --build build/default --target 24_clusters -j 16 > "$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
B=build/default/24_clusters/24_clusters
{
for p in 128x256x64/s4 128x128x64/s4; do
  echo "#### correct $p"
  timeout 60 $B --m 131 --n 67 --k 71 --also 256x512x320,257x258x262,1100x1304x344,264x136x1000,2053x4099x67,300x260x9,4x259x1,1000x1000x1000 --params $p --split always --cluster 4 --reps 2 --check full 2>&1 | grep -E "^RESULT|FAIL|rror"
done
timeout 120 compute-sanitizer --tool racecheck $B --m 131 --n 301 --k 201 --params 128x256x64/s4 --cluster 4 --blocks 8 --split always --reps 1 --warmup 0 2>&1 | grep -E "ERROR SUMMARY|Result"
} > "$OUT/correct.log" 2>&1
echo "correct: $(grep -c 'Result = PASS' $OUT/correct.log) pass, $(grep -c FAIL $OUT/correct.log) fail"; grep -E "ERROR SUMMARY" $OUT/correct.log
R="--check sample --reps 20 --warmup 3"
U=6144x6144x6144,3008x3008x3008,5000x3000x2000,5000x3008x2048,2000x2000x2000,4096x4096x4096,8192x8192x8192,4104x4104x4104,2048x2048x2048,512x8192x8192,16384x1024x1024
{
for in in 0 1; do
  for p in 128x256x64/s4; do
    for c in 1 2 4; do
      echo "#### inplace=$in params=$p cluster=$c"
      if [ $in = 1 ]; then export CS_EXP_INPLACE=1; else unset CS_EXP_INPLACE; fi
      CS_EXP_KEEP=1 timeout 90 $B --size 3000 --also $U --params $p --cluster $c $R 2>&1 | grep -E "^RESULT|FAIL|rror"
    done
  done
done
} > "$OUT/perf.log" 2>&1
echo "perf: $(grep -c 'Result = PASS' $OUT/perf.log) pass of $(grep -c RESULT $OUT/perf.log)"
N="ncu --section SpeedOfLight --section WarpStateStats -k regex:matmul --launch-skip 3 --launch-count 1"
for c in 4; do echo "== cluster $c"; CS_EXP_KEEP=1 timeout 60 $N $B --size 4096 --params 128x256x64/s4 --cluster $c --reps 1 --warmup 3 --check none 2>&1 | grep -E "Throughput|Duration|Stall|Warp Cycles" | head -20; done > "$OUT/ncu.txt" 2>&1
echo done
