#!/usr/bin/env bash
# bench-realtime.sh: the real-time loop's rows at the spacing users meet it:
# ping through a 100M switch at 1 s (ping's default), 100 ms, 10 ms and 5 ms
# beside a veth pair at the same spacing in the same run, what the emulator
# added beyond the pair and the model, and its CPU meanwhile. Needs root and
# ping; `make bench` runs it (scripts/bench.sh). Takes about a minute.
set -uo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
ATMLAB_BENCH=1 $GO test -tags integration -p 1 -count=1 -timeout 10m -run '^TestBenchPingSpacing$' -v ./test/ |
	grep -v -E '^(=== |--- |PASS|ok )'
