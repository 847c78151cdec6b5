//go:build integration

package test

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestBenchSplitRR prints `make bench`'s rows for request/response across
// a real-time cut: atmlab perf's TCP_RR over TestSplitLabInRealTime's lab
// (two 100M switches joined by a 1 ms link), unsplit and split into two
// instances in two machines in miniature, beside the model, 1/(2 ms +
// serialization + the veth pair's own transaction time), and beside a
// bare relay that writes each frame 1 ms after it read it (test/relay
// -block -delay 1ms): what any emulator whose hosts sit behind TAPs meets
// on this machine when its hosts sleep a millisecond between requests.
// The paths take turns, twice each. It asserts nothing and runs only with
// ATMLAB_BENCH=1.
func TestBenchSplitRR(t *testing.T) {
	if os.Getenv("ATMLAB_BENCH") == "" {
		t.Skip("benchmark: run with ATMLAB_BENCH=1 (make bench)")
	}
	requireRoot(t, "ping")
	veth := vethPair(t)
	veth.perfServer("h2")
	relay, stopRelay := relayPair(t, true, "-delay", "1ms")
	defer stopRelay()
	whole := up(t, strings.ReplaceAll(splitLab, "DELAY", "1ms"))
	name := labName()
	_, _, split := upSplit(t, name, writeSplitLab(t, name, "1ms"), machines(t, name+"-m"))
	paths := []struct {
		name, addr string
		r          *running
	}{{"veth pair", "10.9.0.2", veth}, {"bare relay delaying 1 ms each way", "10.8.0.2", relay},
		{"unsplit", "10.0.0.2", whole}, {"split at the 1 ms link", "10.0.0.2", split}}
	for _, p := range paths[1:] {
		p.r.exec("h1", "ping", "-c", "1", p.addr)
		p.r.perfServer("h2")
	}
	runs := map[string][]float64{}
	for range 2 {
		for _, p := range paths {
			runs[p.name] = append(runs[p.name], perfRR(t, p.r, p.addr, 5))
		}
	}
	load := during()()
	vr := mean(runs["veth pair"])
	ser := 6 * hop100M(67) // a request and its response, three hops each
	var rows [][]string
	for _, p := range paths[1:] {
		r := mean(runs[p.name])
		want, model := 1/(2e-3+ser.Seconds()+1/vr), fmt.Sprintf("1/(2 ms + %.1f µs + veth %.1f µs)", us(ser), 1e6/vr)
		if p.r == relay {
			want, model = 1/(2e-3+1/vr), fmt.Sprintf("1/(2 ms + veth %.1f µs)", 1e6/vr)
		}
		row := []string{"TCP_RR 1 B, " + p.name + ": atmlab perf client -t TCP_RR -l 5", fmt.Sprintf("%.2f/s (runs %.2f)", r, runs[p.name]),
			fmt.Sprintf("%s = %.2f/s; %s", model, want, load), fmt.Sprintf("%+.2f %%", 100*(r/want-1))}
		rows = append(rows, row)
	}
	rows = append(rows, []string{"TCP_RR 1 B, split against unsplit", "", "", fmt.Sprintf("%+.2f %%", 100*(mean(runs["split at the 1 ms link"])/mean(runs["unsplit"])-1))})
	printTable(rows)
}
