#!/bin/bash
# kthtable.sh NEW OLD: times the KTH replays of BENCHMARKS.md (issue 15)
# with two xce binaries, A = NEW and B = OLD, by farm-bench pairs run in
# turn (11 of each), and prints a line per replay: the medians of NEW and
# OLD (wall seconds) and of NEW/OLD; the last lines compare NEW with
# itself (KTH on 36 slots under conservative against KTH's own). Run
# from anywhere; the traces are those of ../shared/traces beside the
# checkout.
set -euo pipefail
cd "$(dirname "$0")/../.."
T=../shared/traces/KTH-SP2-1996-2.1-cln.filtered.swf
T2=../shared/traces/KTH-SP2-1996-2.1-cln.swf
C36=testdata/bench/kth-36-slots.yaml
CU=testdata/bench/kth-user-limit.yaml
NEW=$1
OLD=$2
pair() { # name, the B command, then NEW's sim flags
	local name=$1 b=$2
	shift 2
	local out
	out=$(farm-bench -n 11 --vs "$b" -- "$NEW" sim "$@" --json 2>&1)
	echo "$name | $(echo "$out" | awk '/^A wall s/{print $5}') | $(echo "$out" | awk '/^B wall s/{print $5}') | $(echo "$out" | awk '/^A\/B wall/{print $4}')"
}
row() { # name, then the sim flags: NEW against OLD on the same replay
	local name=$1
	shift
	pair "$name" "$OLD sim $* --json" "$@"
}
for p in fcfs firstfit easy conservative; do row "KTH, $p" --workload $T --policy $p; done
for p in fcfs firstfit easy conservative; do row "KTH (unfiltered), $p" --workload $T2 --policy $p; done
for p in fcfs firstfit easy; do row "KTH on 36 slots, $p" --workload $T2 --cluster $C36 --policy $p; done
for p in firstfit conservative; do row "KTH with a per-user limit, $p" --workload $T --cluster $CU --policy $p; done
# Conservative on 36 slots plans the first max_job_test jobs (docs/backfill.md):
# NEW against NEW's KTH (unfiltered) conservative on 100 hosts, the ratio the
# issue asks for (OLD has no max_job_test).
for k in 50 100; do
	pair "KTH on 36 slots, conservative, max_job_test $k (against KTH unfiltered, conservative)" \
		"$NEW sim --workload $T2 --policy conservative --json" --workload $T2 --cluster testdata/bench/kth-36-slots-depth$k.yaml --policy conservative
done
