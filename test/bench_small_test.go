//go:build integration

package test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/atmlab/atmlab/emulator/atm"
)

// TestBenchSmallPDU prints `make bench`'s rows of OC-3c AAL5 at 100-199 B
// through an atm-switch: iperf3 with its default buffers beside -w 4M,
// each against the cell ceiling, beside the datagram rate a bare veth pair
// carries at that size with the same iperf3 command on the same machine
// (the hosts' own frame rate). A point short of the ceiling says what was
// seen during it: the receiver's socket overflowing, the hosts' TAPs
// dropping, the emulator's release lateness and CPU; where the ceiling asks
// for more datagrams a second than the veth pair carried, the hosts' own
// frame rate is the limit. It asserts nothing and runs only with
// ATMLAB_BENCH=1.
func TestBenchSmallPDU(t *testing.T) {
	if os.Getenv("ATMLAB_BENCH") == "" {
		t.Skip("benchmark: run with ATMLAB_BENCH=1 (make bench)")
	}
	requireRoot(t, "iperf3")
	var rows [][]string
	row := func(cells ...string) { rows = append(rows, cells) }
	veth := vethPair(t)
	veth.exec("h1", "ping", "-c", "1", "10.9.0.2")
	a := up(t, atmPairLab)
	a.exec("h1", "ping", "-c", "1", "10.0.0.2")
	for i, size := range []int{100, 148, 149, 196} {
		l := fmt.Sprint(size)
		want := oc(t, "oc3", size, "udp")
		wantPPS := want / float64(8*size)
		vi := veth.runIperf("h1", "h2", "10.9.0.2", 5601+i, 4, "-u", "-b", "0", "-l", l)
		if len(vi.PPS) <= 1 {
			row(fmt.Sprintf("OC-3c AAL5 UDP %d B", size), "no figure: iperf3 over the veth pair reported no full second", "", "")
			continue
		}
		v := steady(t, vi.PPS, 1)
		for j, w := range [][]string{nil, {"-w", "4M"}} {
			m := during()
			before := a.stats()
			it := a.runIperf("h1", "h2", "10.0.0.2", 5701+2*i+j, 4, append([]string{"-u", "-b", "0", "-l", l}, w...)...)
			after := a.stats()
			if len(it.Received) <= 1 {
				row(fmt.Sprintf("OC-3c AAL5 UDP %d B: %s", size, strings.Join(w, " ")), "no figure: the receiver reported no full second", m(), "")
				continue
			}
			got, pps := steady(t, it.Received, 1), steady(t, it.PPS, 1)
			k := after.HostKernel().Sub(before.HostKernel())
			late := after.Loop.Lateness
			cmd := "iperf3 -u -b 0 -l " + l + " -t 4 " + strings.Join(w, " ")
			if w == nil {
				cmd += "(default buffers)"
			}
			var why []string
			if got < 0.99*want {
				if wantPPS > v {
					why = append(why, fmt.Sprintf("the hosts' own frame rate: the ceiling needs %.0f k datagrams/s, a veth pair carried %.0f k", wantPPS/1e3, v/1e3))
				}
				if k.UDPRcvbufErrors > 0 {
					why = append(why, fmt.Sprintf("receiver's socket dropped %d", k.UDPRcvbufErrors))
				}
				if d := after.HostDrops() - before.HostDrops(); d > 0 {
					why = append(why, fmt.Sprintf("hosts' TAPs dropped %d", d))
				}
				why = append(why, fmt.Sprintf("emulator CPU %.0f %%, release lateness p99 %v (lab so far)", 100*cpuBetween(before.Loop, after.Loop), late.P99))
			} else {
				why = append(why, "at the ceiling")
			}
			row(fmt.Sprintf("OC-3c AAL5 UDP %d B (%d cells): %s", size, atm.AAL5.Cells(size+36), cmd),
				fmt.Sprintf("%.2f Mbit/s, %.1f k datagrams/s", got/1e6, pps/1e3),
				fmt.Sprintf("ceiling %.2f (%.1f k/s); veth pair %.1f k/s (same command, default buffers); %s; %s", want/1e6, wantPPS/1e3, v/1e3, strings.Join(why, "; "), m()),
				fmt.Sprintf("%.4f", got/want))
		}
	}
	a.stop()
	printTable(rows)
}
