#!/usr/bin/env bash
# determinism.sh: run the four seed labs' whole quick runs in virtual time
# three times (GOMAXPROCS 2 with two points at a time, 2 again, then 1
# with one point at a time) and compare their
# results.jsonl records, timestamps aside; prints each lab's verdict
# (identical or DIFFER) and its wall time and fails on any difference.
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
echo "| lab | records | GOMAXPROCS and jobs 2, 2, 1 | wall s per run |"
echo "|---|---:|---|---:|"
for lab in "${labs[@]}"; do
	sums=()
	start=$(date +%s)
	for run in 2a 2b 1; do
		dir="$out/$lab-$run"
		GOMAXPROCS=${run%[ab]} "$bin" lab run "topologies/$lab.yaml" --quick --clock virtual --jobs "${run%[ab]}" --out "$dir" >"$dir.log" 2>&1 ||
			{ echo "$lab ($run) failed: see $dir.log" >&2; bad=1; }
		sums+=("$(jq -c 'del(.at)' "$dir/results.jsonl" | sha256sum | cut -c1-16)")
	done
	verdict=identical
	[ "${sums[0]}" = "${sums[1]}" ] && [ "${sums[0]}" = "${sums[2]}" ] || { verdict="DIFFER (${sums[*]})"; bad=1; }
	echo "| $lab | $(wc -l <"$out/$lab-1/results.jsonl") | $verdict | $(( ($(date +%s) - start) / 3 )) |"
done
exit $bad
