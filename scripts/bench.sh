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

step() { # step TITLE COMMAND: run COMMAND (a shell line), show and keep its output under TITLE
	printf '\n## %s\n\n    $ %s\n\n```\n' "$1" "$2" >>"$tmp"
	bash -c "$2" 2>&1 | tee -a "$tmp"
	printf '```\n' >>"$tmp"
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
step "Real time, side by side" "ATMLAB_BENCH=1 $GO test -tags integration -p 1 -count=1 -timeout 30m -run '^TestBench(Table|Loop|Super)\$' -v ./test/ | grep -v -E '^(=== |--- |PASS|ok )'"
if [ -n "$before" ]; then
	step "Against $before" "ATMLAB_BENCH=1 ATMLAB_BEFORE=$(printf %q "$before") $GO test -tags integration -p 1 -count=1 -timeout 30m -run '^Test(BenchAB|DelayAB|LatencyAB)\$' -v ./test/ | grep -v -E '^(=== |--- |PASS|ok )'"
fi
step "Virtual time" "$GO test -run '^\$' -bench Virtual -benchtime 1x ./harness/vperf/ | grep -E '^Benchmark'"
step "The seed labs, five quick runs" scripts/stability.sh
step "The seed labs in virtual time, three runs" scripts/determinism.sh
step "A class in virtual time" "scripts/class-bench.sh"
echo "- load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$tmp"
cp "$tmp" "$out"
echo "bench: wrote $out"
