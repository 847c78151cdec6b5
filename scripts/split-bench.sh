#!/usr/bin/env bash
# split-bench.sh [ATMLAB]: a lab split into two halves that carry equal
# traffic (scripts/labs/split-halves.yaml), run in virtual time whole (one
# scheduler, --split whole), split (a part a core) and procs (a part a
# process, joined over TCP: --split procs): the wall time of each, the
# speed-ups, and whether the results.jsonl are the same.
set -euo pipefail
cd "$(dirname "$0")/.."
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
bin=${1:-}
if [ -z "$bin" ]; then
	bin=$d/atmlab
	${GO:-go} build -o "$bin" ./cmd/atmlab
fi
declare -A wall
for mode in whole split procs; do
	flag=()
	[ "$mode" = split ] || flag=(--split "$mode")
	t0=$(date +%s.%N)
	"$bin" lab run scripts/labs/split-halves.yaml --clock virtual --jobs 1 "${flag[@]}" --out "$d/$mode" >"$d/$mode.log" 2>&1 || { cat "$d/$mode.log"; exit 1; }
	wall[$mode]=$(echo "$(date +%s.%N) - $t0" | bc)
done
same=no
norm() { sed -E 's/"at":"[^"]*"//' "$1"; }
if [ "$(norm "$d/whole/results.jsonl")" = "$(norm "$d/split/results.jsonl")" ] &&
	[ "$(norm "$d/whole/results.jsonl")" = "$(norm "$d/procs/results.jsonl")" ]; then same=yes; fi
printf 'whole (one scheduler): %.2f s\nsplit (2 parts, a core each): %.2f s\nprocs (2 parts, a process each): %.2f s\nspeed-up split: %.2fx\nspeed-up procs: %.2fx\nresults.jsonl the same: %s\n' \
	"${wall[whole]}" "${wall[split]}" "${wall[procs]}" \
	"$(echo "${wall[whole]} / ${wall[split]}" | bc -l)" "$(echo "${wall[whole]} / ${wall[procs]}" | bc -l)" "$same"
