//go:build integration

package test

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/atmlab/atmlab/netstat"
)

// TestBenchDefaults prints `make bench`'s rows of what a user typing the
// tools' defaults gets, each beside the tuned row the docs also cite:
// iperf3 TCP with its default buffers beside -w 4M at 1G and 10G, and over
// a 1G path with delay: 10ms each way (where atmlab's sizing of the hosts'
// TCP buffers is what lets the defaults fill it); and netperf's
// TCP_STREAM with its defaults where netperf is installed. Each row gives
// the machine's load average and the hypervisor's steal while it ran. It
// asserts nothing and runs only with ATMLAB_BENCH=1.
func TestBenchDefaults(t *testing.T) {
	if os.Getenv("ATMLAB_BENCH") == "" {
		t.Skip("benchmark: run with ATMLAB_BENCH=1 (make bench)")
	}
	requireRoot(t, "iperf3")
	var rows [][]string
	row := func(cells ...string) { rows = append(rows, cells) }
	for _, lab := range []struct {
		name, rate, impair string
		bps                float64
		secs               int
	}{
		{"1G", "1G", "", 1e9, 6},
		{"10G", "10G", "", 10e9, 6},
		{"1G, delay 10ms each way", "1G", "\n      impair: {delay: 10ms}", 1e9, 10},
	} {
		src := strings.Replace(strings.ReplaceAll(pairLab, "RATE", lab.rate), "      ethernet: {rate: "+lab.rate+"}", "      ethernet: {rate: "+lab.rate+"}"+lab.impair, 1)
		r := up(t, src)
		r.exec("h1", "ping", "-c", "1", "10.0.0.2")
		c := ceiling(lab.bps, 1448, 52)
		for i, w := range [][]string{nil, {"-w", "4M"}} {
			m := during()
			it := r.runIperf("h1", "h2", "10.0.0.2", 5201+i, lab.secs, w...)
			if len(it.Received) <= 2 {
				t.Logf("%s: the receiver reported %d intervals (%d retransmitted)", lab.name, len(it.Received), it.Retransmit)
				row("TCP at "+lab.name+": iperf3 "+strings.Join(w, " "), "no figure: the receiver reported no full second", m(), "")
				continue
			}
			got := steady(t, it.Received, 2)
			cmd := "iperf3 -c 10.0.0.2 -t " + fmt.Sprint(lab.secs) + " " + strings.Join(w, " ")
			if w == nil {
				cmd += "(default buffers)"
			}
			row("TCP at "+lab.name+": "+cmd, fmt.Sprintf("%.2f Mbit/s (%d retransmitted)", got/1e6, it.Retransmit), fmt.Sprintf("theory %.2f; %s", c/1e6, m()), fmt.Sprintf("%.4f", got/c))
		}
		if _, err := exec.LookPath("netperf"); err == nil && lab.impair == "" {
			r.start("h2", "netserver", "-D")
			time.Sleep(300 * time.Millisecond)
			m := during()
			out := string(r.exec("h1", "netperf", "-H", "10.0.0.2", "-l", "6", "-P", "0"))
			f := strings.Fields(out)
			v := "?"
			if len(f) >= 5 {
				v = f[4] + " Mbit/s"
			}
			row("TCP at "+lab.name+": netperf -H 10.0.0.2 -l 6 (defaults)", v, fmt.Sprintf("theory %.2f; %s", c/1e6, m()), "")
		} else if lab.impair == "" {
			row("TCP at "+lab.name+": netperf (defaults)", "netperf is not installed", "", "")
		}
		r.stop()
	}
	printTable(rows)
}

// during starts watching the machine and returns what it saw since: the
// load average at the end and the share of the machine its hypervisor
// took (/proc/stat steal).
func during() func() string {
	s0, _ := netstat.Steal()
	t0 := time.Now()
	return func() string {
		s1, _ := netstat.Steal()
		load, _ := os.ReadFile("/proc/loadavg")
		f := strings.Fields(string(load))
		if len(f) > 0 {
			f = f[:1]
		}
		return fmt.Sprintf("load %s, steal %.1f %%", strings.Join(f, ""), 100*netstat.StealShare(s1-s0, time.Since(t0)))
	}
}
