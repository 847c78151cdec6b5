#!/usr/bin/env bash
# make bench: every benchmark step, each printed as it runs and kept in
# docs/bench-latest.md with the date, the commit, the machine and its load,
# so the figures the docs cite come with what they were taken on.
# Usage: scripts/bench.sh [BEFORE]   (BEFORE: another atmlab to compare, as make bench BEFORE=...)
set -uo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
before=${1:-}
out=docs/bench-latest.md
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT

steal() { awk '$1 == "cpu" { print $9; exit }' /proc/stat; } # USER_HZ ticks, summed over the CPUs
step() { # step TITLE COMMAND: run COMMAND (a shell line), show and keep its output under TITLE, with the machine's load
	local s0 t0
	s0=$(steal) t0=$(date +%s)
	printf '\n## %s\n\n    $ %s\n\nStarted %s, load average %s.\n\n```\n' "$1" "$2" "$(date -u '+%H:%M UTC')" "$(cut -d' ' -f1-3 /proc/loadavg)" >>"$tmp"
	bash -c "$2" 2>&1 | tee -a "$tmp"
	printf '```\n\n%s s, load average at the end %s, the hypervisor took %s %% of the machine (steal).\n' "$(($(date +%s) - t0))" \
		"$(cut -d' ' -f1-3 /proc/loadavg)" "$(awk -v d=$(($(steal) - s0)) -v s=$(($(date +%s) - t0 + 1)) -v n="$(nproc)" 'BEGIN { printf "%.1f", d / (s * 100 * n) * 100 }')" >>"$tmp"
}

{
	echo "# The latest benchmark run"
	echo
	echo "Written by \`sudo make bench\`; each section gives the command that measured it."
	echo "Dated measurements of one machine, not promises: see [Benchmarks](benchmarks.md) for"
	echo "what each row means and [Validation](validation.md) for what every test run checks."
	echo
	echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "- commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' (modified)')"
	echo "- machine: $(nproc) CPUs, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), Linux $(uname -r)"
	echo "- load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
} >"$tmp"

step "Models (Go benchmarks)" "$GO test -bench . -benchmem -run '^\$' ./emulator/... ./cells/... ./kernel/ ./topologies/ 2>/dev/null | grep -E '^Benchmark' || true"
step "Real time, side by side" "ATMLAB_BENCH=1 $GO test -tags integration -p 1 -count=1 -timeout 30m -run '^TestBench(Table|Loop|Super|Defaults|TwoFloods|Realtime.*)\$' -v ./test/ | grep -v -E '^(=== |--- |PASS|ok )'"
if [ -n "$before" ]; then
	step "Against $before" "ATMLAB_BENCH=1 ATMLAB_BEFORE=$(printf %q "$before") $GO test -tags integration -p 1 -count=1 -timeout 30m -run '^Test(BenchAB|DelayAB|LatencyAB)\$' -v ./test/ | grep -v -E '^(=== |--- |PASS|ok )'"
fi
step "OC-3c AAL5, iperf3's default buffers beside -w 4M (iperf3 -c 10.0.0.2 -u -b 0 -l SIZE [-w 4194304] -t 4)" "scripts/lab-table.sh scripts/labs/oc3-defaults.yaml"
step "OC-3c AAL5 at 100-199 B in a lab run, iperf3's default buffers beside -w 4M, a veth pair's frame rate beside each short point" "scripts/lab-table.sh scripts/labs/oc3-small.yaml"
step "Ping at the spacing users use, TCP_RR beside netperf and across a cut, each beside a bare relay, OC-3c AAL5 at 100-199 B" scripts/bench-realtime.sh
step "Virtual time" "$GO test -run '^\$' -bench 'Virtual[^F]' -benchtime 1x ./backend/virtual/ | grep -E '^Benchmark'"
step "The 200-host fabric in virtual time, one processor" "$GO test -run '^\$' -bench VirtualFabric200 -benchtime 1x -cpu 1 ./backend/virtual/ | grep -E '^Benchmark'"
step "Virtual time beside ns-3" "GO=$GO scripts/bench/ns3/run.sh"
step "Points side by side: a quick praktikum one at a time beside two at a time, alternating" "ATMLAB=bin/atmlab scripts/jobs-bench.sh 5"
step "A split lab in virtual time, whole beside a part a core" "GO=$GO scripts/split-bench.sh"
step "The seed labs, five quick runs" scripts/stability.sh
step "The seed labs in virtual time, three runs" scripts/determinism.sh
step "A class in virtual time" "scripts/class-bench.sh"
echo "- load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$tmp"
cp "$tmp" "$out"
echo "bench: wrote $out"
