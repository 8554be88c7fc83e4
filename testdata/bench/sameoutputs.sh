#!/bin/bash
# sameoutputs.sh OLD NEW: replays eleven KTH, Lublin and model workloads
# (conservative, EASY, fcfs, firstfit; per host, per event) with two xce
# binaries and reports any difference in their outputs (the JSON summary,
# schedule.swf, metrics.json): "fail=0" when there is none. Run from
# anywhere; writes under /tmp/sameoutputs.
cd "$(dirname "$0")/../.."
OLD=$1
NEW=$2
D=/tmp/sameoutputs
T=../shared/traces/KTH-SP2-1996-2.1-cln.filtered.swf
L=../shared/traces/lublin_256.swf
runs=(
 "k100c --workload $T --policy conservative"
 "k100cph --workload $T --policy conservative --per-host"
 "k100cpe --workload $T --policy conservative --cycle per-event"
 "k100e --workload $T --policy easy"
 "k100f --workload $T --policy fcfs"
 "k100ff --workload $T --policy firstfit"
 "kulc --workload $T --cluster testdata/bench/kth-user-limit.yaml --policy conservative"
 "lub --workload $L --policy conservative"
 "lubph --workload $L --policy conservative --per-host"
 "model --policy conservative --jobs 5000"
 "model9 --policy conservative --jobs 5000 --hosts 16 --slots 8"
)
fail=0
for r in "${runs[@]}"; do
  set -- $r; name=$1; shift
  rm -rf "$D/$name"; mkdir -p "$D/$name"
  "$OLD" sim "$@" --out "$D/$name/old" --json > "$D/$name/old.json" 2>&1
  "$NEW" sim "$@" --out "$D/$name/new" --json > "$D/$name/new.json" 2>&1
  cmp -s "$D/$name/old.json" "$D/$name/new.json" || { echo "DIFF $name: the JSON summary"; fail=1; }
  for f in schedule.swf metrics.json; do
    cmp -s "$D/$name/old/$f" "$D/$name/new/$f" || { echo "DIFF $name: $f"; fail=1; }
  done
  echo "$name compared"
done
echo fail=$fail
