#!/usr/bin/env bash
# The quick start: bring up topologies/sw100.yaml, measure TCP and UDP
# through its emulated 100M switch with iperf3, show the emulator's
# counters, and tear the lab down.
#
#   h1 (10.0.0.1) ---100M--- sw1 ---100M--- h2 (10.0.0.2)
set -euo pipefail
cd "$(dirname "$0")/.."
atmlab=./bin/atmlab
[ "$(id -u)" = 0 ] || { echo "the lab needs root (namespaces and TAPs): sudo make lab" >&2; exit 1; }
command -v iperf3 >/dev/null || { echo "needs iperf3: apt-get install -y iperf3" >&2; exit 1; }

log=$(mktemp)
$atmlab up topologies/sw100.yaml >"$log" 2>&1 &
pid=$!
trap 'kill -INT $pid 2>/dev/null; wait $pid 2>/dev/null; rm -f "$log"' EXIT
for _ in $(seq 100); do grep -q ready "$log" && break; sleep 0.1; done
grep ready "$log"

$atmlab exec sw100 h2 -- iperf3 -s -D
sleep 0.3
echo "== TCP, 5 s (ceiling 94.15 Mbit/s with timestamps)"
$atmlab exec sw100 h1 -- iperf3 -c 10.0.0.2 -t 5 | grep -E 'sender|receiver'
echo "== UDP 1472-byte datagrams offered at 150 Mbit/s, 5 s (ceiling 95.71 Mbit/s)"
$atmlab exec sw100 h1 -- iperf3 -c 10.0.0.2 -u -b 150M -l 1472 -t 5 | grep -E 'receiver'
echo "(iperf3's end-of-test UDP receiver figure under-reports a saturated link by a few percent; see README)"
echo "== atmlab stats sw100"
$atmlab stats sw100
