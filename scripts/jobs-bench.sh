#!/usr/bin/env bash
# jobs-bench.sh [ROUNDS] [LAB]: a quick virtual lab run of LAB (default
# topologies/praktikum.yaml) one point at a time (--jobs 1) and two at a
# time (--jobs 2), alternating, ROUNDS times (default 5): per round the
# machine's load, each run's wall and CPU seconds, how many times as fast
# two at a time ran, and whether the two results.jsonl are the same bytes
# (the records' "at" timestamps aside); then the smallest, median and
# largest ratio. Fails if any round's results differ. Needs no root;
# ATMLAB names the binary (built here from the tree when unset). Run it
# on a quiet machine or under the traffic lock: the figures are wall time.
#
#   flock /tmp/atmlab-traffic.lock scripts/jobs-bench.sh 10
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
lab=${2:-topologies/praktikum.yaml}
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
bin=${ATMLAB:-}
if [ -z "$bin" ]; then
	bin=$d/atmlab
	${GO:-go} build -o "$bin" ./cmd/atmlab
fi
run() { # run JOBS DIR: one quick virtual run; prints "wall cpu"
	local t0 t1 c
	t0=$(date +%s.%N)
	/usr/bin/time -f '%U %S' -o "$2.cpu" "$bin" lab run "$lab" --clock virtual --quick --jobs "$1" --out "$2" >"$2.log" 2>&1 ||
		{ cat "$2.log" >&2; exit 1; }
	t1=$(date +%s.%N)
	c=$(awk '{ print $1 + $2 }' "$2.cpu")
	awk -v a="$t0" -v b="$t1" -v c="$c" 'BEGIN { printf "%.2f %.2f", b - a, c }'
}
norm() { sed -E 's/"at":"[^"]*"//' "$1"; }
echo "| round | load average | --jobs 1 wall s (CPU s) | --jobs 2 wall s (CPU s) | times as fast | results.jsonl |"
echo "|---:|---|---:|---:|---:|---|"
ratios=()
bad=0
for i in $(seq "$rounds"); do
	load=$(cut -d' ' -f1 /proc/loadavg)
	one=$(run 1 "$d/one-$i") # an assignment, so that a failed run ends the script
	two=$(run 2 "$d/two-$i")
	read -r w1 c1 <<<"$one"
	read -r w2 c2 <<<"$two"
	r=$(awk -v a="$w1" -v b="$w2" 'BEGIN { printf "%.2f", a / b }')
	ratios+=("$r")
	same="the same"
	[ "$(norm "$d/one-$i/results.jsonl")" = "$(norm "$d/two-$i/results.jsonl")" ] || { same=DIFFER; bad=1; }
	echo "| $i | $load | $w1 ($c1) | $w2 ($c2) | $r | $same |"
	rm -rf "$d/one-$i" "$d/two-$i"
done
printf '%s\n' "${ratios[@]}" | sort -n | awk '{ r[NR] = $1 } END { printf "times as fast: smallest %.2f, median %.2f, largest %.2f over %d rounds; load average now %s\n", r[1], (NR % 2 ? r[(NR + 1) / 2] : (r[NR / 2] + r[NR / 2 + 1]) / 2), r[NR], NR, "'"$(cut -d' ' -f1-3 /proc/loadavg)"'" }'
exit $bad
