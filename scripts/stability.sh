#!/usr/bin/env bash
# stability.sh: run the four seed labs' quick runs ROUNDS times in a row
# (default 5) and print, for every claim, its verdict in each round and the
# spread of its figure (the change the claim's rule judges). A claim whose
# verdict differs between rounds is marked FLIPS: its lab or its range is
# wrong, or the machine was busy: each round's line gives the machine's
# other load and the emulator's lateness during its points. Needs root,
# jq and bin/atmlab (make build); `make bench` runs it.
# LABS names the labs to run (default all four); WRAP, a command each run
# is started through (such as `flock FILE` to share the machine's traffic
# with others one run at a time).
#
#   sudo ROUNDS=5 [LABS="gns3-mpls praktikum"] [WRAP="flock /tmp/lock"] scripts/stability.sh [OUTDIR]
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${ROUNDS:-5}
bin=${ATMLAB:-./bin/atmlab}
out=${1:-results/stability-$(date -u +%Y%m%dT%H%M%SZ)}
read -r -a labs <<<"${LABS:-praktikum cernet-atm gns3-mpls sandia-wan}"
read -r -a wrap <<<"${WRAP:-}"
mkdir -p "$out"
for r in $(seq 1 "$rounds"); do
	for lab in "${labs[@]}"; do
		start=$(date +%s)
		if ! ${wrap[@]+"${wrap[@]}"} "$bin" lab run "topologies/$lab.yaml" --quick --out "$out/$lab-$r" >"$out/$lab-$r.log" 2>&1; then
			echo "round $r: $lab failed (see $out/$lab-$r.log)" >&2
		fi
		# What the machine did beside the lab while its points ran (median
		# of the points): other work, in cores, and the emulator's lateness.
		machine=$(jq -s -r '[.[] | select(.clock == null)] | if length == 0 then "" else
			([.[].other_load // 0] | sort | .[length / 2 | floor]) as $o |
			([.[].release_lateness.p99_ns // 0] | sort | .[length / 2 | floor]) as $l |
			", other load \($o * 100 | round / 100) cores, lateness p99 \($l / 1e6 * 10 | round / 10) ms (medians of its points)" end' \
			"$out/$lab-$r/results.jsonl" 2>/dev/null || true)
		echo "round $r: $lab in $(($(date +%s) - start)) s$machine" >&2
	done
done

# Each report's claim table has the columns # | claim | the study |
# atmlab | change (range) | verdict | why.
echo "| lab | # | claim | verdicts (R reproduced, n not, j not judged, - not measured; * a point was flagged) | change min … max | spread |"
echo "|---|---:|---|---|---|---:|"
flips=0
claims=0
for lab in "${labs[@]}"; do
	for r in $(seq 1 "$rounds"); do
		f="$out/$lab-$r/report.md"
		[ -f "$f" ] || continue
		awk -v round="$r" -F ' [|] ' '
			/^## The study.s findings/ { on = 1; next }
			/^## / { on = 0 }
			on && /^\| [0-9]+ \|/ {
				n = $1; sub(/^\| /, "", n)
				v = "n"
				if ($6 ~ /\*\*reproduced\*\*/) v = "R"
				else if ($6 ~ /not judged/) v = "j"
				else if ($6 ~ /not measured/) v = "-"
				if ($6 ~ /flagged/) v = v "*"
				ch = ""
				if (match($5, /^[+-][0-9.]+ %/)) ch = substr($5, 1, RLENGTH - 2)
				print n "\t" round "\t" v "\t" ch "\t" substr($2, 1, 70)
			}' "$f"
	done | sort -t $'\t' -k1,1n -k2,2n >"$out/$lab.claims"
	for n in $(cut -f1 "$out/$lab.claims" | sort -un); do
		claims=$((claims + 1))
		line=$(awk -F '\t' -v n="$n" '
			$1 == n {
				vs = vs (vs == "" ? "" : " ") $3; claim = $5
				v = $3; sub(/\*/, "", v); seen[v] = 1
				if ($4 != "") { c = $4 + 0; if (cnt == 0 || c < lo) lo = c; if (cnt == 0 || c > hi) hi = c; cnt++ }
			}
			END {
				k = 0; for (s in seen) k++
				mark = (k > 1) ? " FLIPS" : ""
				if (cnt > 0) printf "%s | %s%s | %+.1f … %+.1f %% | %.1f\n", claim, vs, mark, lo, hi, hi - lo
				else printf "%s | %s%s | not measured | \n", claim, vs, mark
			}' "$out/$lab.claims")
		case "$line" in *FLIPS*) flips=$((flips + 1)) ;; esac
		echo "| $lab | $n | $line |"
	done
done
echo
echo "$claims claims over $rounds rounds; $flips changed verdict between rounds. Runs in $out."
