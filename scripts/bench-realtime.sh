#!/usr/bin/env bash
# bench-realtime.sh: the real-time loop's rows at the spacing and the sizes
# users meet it: ping through a 100M switch at 1 s (ping's default), 100 ms,
# 10 ms and 5 ms beside a veth pair and a bare TAP relay (test/relay) at
# the same spacing in the same run, taking turns, with the defaults, with
# up --keep-cpus-awake and with that and a loop that never sleeps;
# TCP_RR by atmlab perf beside netperf on the same paths and over delay: 5ms,
# beside the relay delaying 5 ms; TCP_RR across a 1 ms real-time cut,
# unsplit and split, beside the relay delaying 1 ms;
# OC-3c AAL5 at 100-199 B with iperf3's default buffers beside -w 4M and a
# veth pair's frame rate. netperf is $NETPERF or the one on PATH (netserver
# beside it); without one its rows say so. Needs root, ping and iperf3;
# `make bench` runs it (scripts/bench.sh). Takes about nine minutes.
set -uo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
NETPERF=${NETPERF:-$(command -v netperf || true)}
if [ -z "$NETPERF" ]; then
	echo "netperf is not installed (set NETPERF=/path/to/netperf or put it on PATH): its TCP_RR rows are left out"
fi
export NETPERF
ATMLAB_BENCH=1 $GO test -tags integration -p 1 -count=1 -timeout 15m -run '^TestBench(PingSpacing|RR|SplitRR|SmallPDU)$' -v ./test/ |
	grep -v -E '^(=== |--- |PASS|ok )'
