#!/usr/bin/env bash
# scripts/bench/ns3/run.sh: atmlab's virtual time beside ns-3 on the same
# scenarios (make bench): a 100M and a 1G TCP stream and a 1G UDP flood
# through a node between two hosts, SECONDS of model time each (default
# 10), simulated seconds per wall second, atmlab's and ns-3's runs one
# after the other. ns-3 is Debian's (apt-get install libns3-dev, 3.37);
# without it the row is skipped with a message.
set -uo pipefail
cd "$(dirname "$0")/../../.."
GO=${GO:-go}
secs=${1:-10}
mods="ns3-core ns3-network ns3-internet ns3-point-to-point ns3-applications"
if ! pkg-config --exists $mods 2>/dev/null; then
	echo "ns-3: skipped, libns3-dev is not installed (apt-get install libns3-dev)"
	exit 0
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# Debian's .pc files name libgsl.so and libgslcblas.so, which only
# libgsl-dev installs; libns3 links them itself, so leave out what is absent.
libs=$(for l in $(pkg-config --libs $mods); do
	case $l in /*) [ -e "$l" ] && echo "$l" ;; *) echo "$l" ;; esac
done | awk '!seen[$0]++')
g++ -O2 -std=c++17 -o "$dir/beside" scripts/bench/ns3/beside.cc $(pkg-config --cflags $mods) $libs || {
	echo "ns-3: scripts/bench/ns3/beside.cc did not build"
	exit 1
}
$GO test -c -o "$dir/virtual.test" ./backend/virtual/ || exit 1
echo "ns-3 $(pkg-config --modversion ns3-core), $secs simulated s each; simulated s per wall s (what the receiver got)"
printf '%-8s  %-24s  %-24s  %s\n' scenario atmlab ns-3 "atmlab / ns-3"
for s in tcp100m tcp1g udp1g; do
	a=$(cd "$dir" && ATMLAB_BESIDE_SECONDS=$secs ./virtual.test -test.run '^$' -test.bench "BesideNS3/$s\$" -test.benchtime 1x |
		awk '/^Benchmark/ { for (i = 2; i <= NF; i++) { if ($i == "sim-s/wall-s") r = $(i-1); if ($i == "Mbit/s") m = $(i-1) } } END { if (r != "") print r, m }')
	n=$("$dir/beside" "$s" "$secs" | awk '{ for (i = 1; i <= NF; i++) { if ($i == "per") r = $(i-3); if ($i == "Mbit/s") m = $(i-1) } } END { if (r != "") print r, m }')
	if [ -z "$a" ] || [ -z "$n" ]; then
		echo "$s: a run failed (atmlab: '${a}', ns-3: '${n}')"
		continue
	fi
	set -- $a $n
	printf '%-8s  %-24s  %-24s  %.2f\n' "$s" "$1 ($2 Mbit/s)" "$3 ($4 Mbit/s)" "$(awk -v a="$1" -v b="$3" 'BEGIN { print a / b }')"
done
