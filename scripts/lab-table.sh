#!/usr/bin/env bash
# lab-table.sh: run a lab file's experiments in real time (atmlab lab run)
# and print each point as a table row: its size and socket buffers (0:
# the tool's default), its share of the path's ceiling, what held it back
# when it was more than 1 % short (short_by), the machine's other load and
# the hypervisor's steal during it, the emulator's release lateness, and,
# for a short UDP point, the datagrams a second a bare veth pair carried
# with the same tool (veth_frame_rate: the hosts' own frame rate).
# Needs root and bin/atmlab (make build) and jq; `make bench` runs it.
#
#   scripts/lab-table.sh LAB.yaml [OUTDIR]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${ATMLAB:-./bin/atmlab}
lab=$1
out=${2:-results/bench-$(basename "$lab" .yaml)}
mkdir -p "$(dirname "$out")"
"$bin" lab run "$lab" --force --out "$out" >"$out.log" 2>&1 || { echo "lab run failed: see $out.log" >&2; exit 1; }
echo "| experiment | test | size B | buffers | of the ceiling | short by | other load (cores) | steal | lateness p99 | veth pair |"
echo "|---|---|---:|---|---:|---|---:|---:|---:|---:|"
jq -r '[.experiment, .test, .size, (if .sockbuf == 0 then "default" else "\(.sockbuf) B" end),
	(if .ceiling_bps then "\(.result.throughput_bps / .ceiling_bps * 10000 | round / 100) %" else "-" end),
	((.short_by // []) | join(", ")), ((.other_load // 0) * 100 | round / 100),
	"\((.steal // 0) * 1000 | round / 10) %",
	(if .release_lateness then "\(.release_lateness.p99_ns / 1000 | round) µs" else "-" end),
	(if .veth_frame_rate then "\(.veth_frame_rate / 100 | round / 10) k/s" else "" end)]
	| "| " + join(" | ") + " |"' "$out/results.jsonl"
