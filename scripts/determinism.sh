#!/usr/bin/env bash
# determinism.sh: run the four seed labs' whole quick runs in virtual time
# three times (GOMAXPROCS 2 with two points at a time, 2 again, then 1
# with one point at a time) and compare their
# results.jsonl records, timestamps aside; prints each lab's verdict
# (identical or DIFFER), each run's wall time and how many times faster
# two points at a time ran than one at a time (the mean of the two runs
# at 2 against the run at 1), and fails on any difference.
# TestSeedLabsDeterminism checks the same in CI with shortened points.
# Needs no root; bin/atmlab (make build) and jq. `make bench` runs it.
#
#   scripts/determinism.sh [OUTDIR]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${ATMLAB:-./bin/atmlab}
out=${1:-results/determinism-$(date -u +%Y%m%dT%H%M%SZ)}
labs=(praktikum sandia-wan cernet-atm gns3-mpls)
mkdir -p "$out"
bad=0
echo "| lab | records | GOMAXPROCS and jobs 2, 2, 1 | wall s: 2, 2, 1 | two at a time, times as fast |"
echo "|---|---:|---|---|---:|"
for lab in "${labs[@]}"; do
	sums=()
	walls=()
	for run in 2a 2b 1; do
		dir="$out/$lab-$run"
		t0=$(date +%s.%N)
		GOMAXPROCS=${run%[ab]} "$bin" lab run "topologies/$lab.yaml" --quick --clock virtual --jobs "${run%[ab]}" --out "$dir" >"$dir.log" 2>&1 ||
			{ echo "$lab ($run) failed: see $dir.log" >&2; bad=1; }
		walls+=("$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')")
		sums+=("$(jq -c 'del(.at)' "$dir/results.jsonl" | sha256sum | cut -c1-16)")
	done
	verdict=identical
	[ "${sums[0]}" = "${sums[1]}" ] && [ "${sums[0]}" = "${sums[2]}" ] || { verdict="DIFFER (${sums[*]})"; bad=1; }
	echo "| $lab | $(wc -l <"$out/$lab-1/results.jsonl") | $verdict | ${walls[*]} | $(awk -v a="${walls[0]}" -v b="${walls[1]}" -v c="${walls[2]}" 'BEGIN { printf "%.2f", 2 * c / (a + b) }') |"
done
exit $bad
