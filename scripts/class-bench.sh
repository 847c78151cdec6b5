#!/usr/bin/env bash
# class-bench.sh: how many students one machine holds running the AAL5
# sawtooth lesson in virtual time at once. For N = 1, 2, 4, 8, 16 it
# starts N runs of lessons/02-aal5-sawtooth together, times each, and
# prints a row: students at once, the slowest run's wall time, and
# whether every run finished within 2 minutes. It stops after the first
# N whose slowest run took longer. Needs no root; bin/atmlab (make build).
# `make bench` runs it.
#
#   scripts/class-bench.sh [N...] (default 1 2 4 8 16; OUTDIR in CLASS_BENCH_OUT)
set -uo pipefail
cd "$(dirname "$0")/.."
bin=${ATMLAB:-./bin/atmlab}
lesson=lessons/02-aal5-sawtooth/lab.yaml
out=${CLASS_BENCH_OUT:-results/class-bench-$(date -u +%Y%m%dT%H%M%SZ)}
limit=120
ns=("$@")
[ ${#ns[@]} -gt 0 ] || ns=(1 2 4 8 16)
mkdir -p "$out"
echo "| students at once | slowest run s | all within 2 min |"
echo "|---:|---:|---|"
bad=0
for n in "${ns[@]}"; do
	pids=()
	for k in $(seq 1 "$n"); do
		dir="$out/n$n-$k"
		( s=$(date +%s.%N)
		  "$bin" lab run "$lesson" --clock virtual --out "$dir" >"$dir.log" 2>&1 || { echo "$dir failed: see $dir.log" >&2; echo fail >"$dir.time"; exit 1; }
		  echo "$(date +%s.%N) - $s" | bc >"$dir.time" ) &
		pids+=($!)
	done
	failed=0
	for p in "${pids[@]}"; do wait "$p" || failed=1; done
	slowest=$(cat "$out"/n"$n"-*.time | grep -v fail | sort -g | tail -1)
	within=yes
	if [ "$failed" = 1 ]; then within="no (a run failed)"; bad=1
	elif [ "$(echo "$slowest > $limit" | bc)" = 1 ]; then within=no; fi
	printf '| %d | %.1f | %s |\n' "$n" "${slowest:-0}" "$within"
	[ "$within" = yes ] || break
done
exit $bad
