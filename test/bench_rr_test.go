//go:build integration

package test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestBenchRR prints `make bench`'s request/response rows: atmlab perf's
// TCP_RR beside netperf's on the same path through a 100M switch and over
// a veth pair, taken alternately in one run, and TCP_RR over `delay: 5ms`
// against 1/(10 ms + the model's serialization + the veth pair's own
// transaction time), and beside it the same over a bare relay that only
// delays (test/relay). netperf is the one on PATH or $NETPERF (its
// netserver beside it); without it those rows say so. It asserts nothing
// and runs only with ATMLAB_BENCH=1.
func TestBenchRR(t *testing.T) {
	if os.Getenv("ATMLAB_BENCH") == "" {
		t.Skip("benchmark: run with ATMLAB_BENCH=1 (make bench)")
	}
	requireRoot(t, "ping")
	netperf, netserver := netperfTools()
	var rows [][]string
	row := func(cells ...string) { rows = append(rows, cells) }
	if netperf == "" {
		row("netperf TCP_RR", "netperf is not installed (put it on PATH or set NETPERF): its rows are left out", "", "")
	}

	veth := vethPair(t)
	sw := up(t, strings.ReplaceAll(pairLab, "RATE", "100M"))
	sw.exec("h1", "ping", "-c", "1", "10.0.0.2")
	veth.exec("h1", "ping", "-c", "1", "10.9.0.2")
	paths := []struct {
		name, addr string
		r          *running
	}{{"veth pair", "10.9.0.2", veth}, {"100M switch", "10.0.0.2", sw}}
	for _, p := range paths {
		p.r.perfServer("h2")
		if netperf != "" {
			p.r.start("h2", netserver, "-D", "-p", netserverPort)
			p.r.waitListening("h2", "tcp", 12866)
		}
	}
	// Alternate the two tools twice on each path: the machine's other load
	// then weighs on both alike. Both rates are whole runs'.
	rate := map[string][2]float64{}
	for _, p := range paths {
		var a, n []float64
		for range 2 {
			m := during()
			a = append(a, perfRR(t, p.r, p.addr, 5))
			if netperf != "" {
				n = append(n, netperfRR(t, p.r, netperf, p.addr, 5))
			}
			t.Logf("%s: %s", p.name, m())
		}
		atm, np := mean(a), mean(n)
		rate[p.name] = [2]float64{atm, np}
		if netperf == "" {
			row("TCP_RR 1 B, "+p.name+": atmlab perf", fmt.Sprintf("%.0f/s (runs %.0f)", atm, a), "netperf not installed", "")
			continue
		}
		row("TCP_RR 1 B, "+p.name+": atmlab perf client -t TCP_RR -l 5 beside netperf -t TCP_RR -l 5", fmt.Sprintf("%.0f/s (runs %.0f)", atm, a),
			fmt.Sprintf("netperf %.0f/s (runs %.0f); %s", np, n, during()()), fmt.Sprintf("%.3f", atm/np))
	}
	st := sw.stats().Loop
	row("release lateness, 100M switch (the RR runs)", fmt.Sprintf("p50 %v, p99 %v", st.Lateness.P50, st.Lateness.P99),
		fmt.Sprintf("emulator CPU %.0f%%; %d frames dropped later than the release bound", 100*st.CPU, st.LateDropped), "")
	sw.stop()

	// delay: 5ms on h1's link: 10 ms a transaction, four 67-byte frames
	// serialized at 100M, and what the hosts themselves take (the veth
	// pair's transaction time, by each tool).
	d := up(t, delayLab)
	d.exec("h1", "ping", "-c", "1", "10.0.0.2")
	d.perfServer("h2")
	if netperf != "" {
		d.start("h2", netserver, "-D", "-p", netserverPort)
		d.waitListening("h2", "tcp", 12866)
	}
	ser := 4 * hop100M(67)
	want := func(veth float64) float64 { return 1 / (10e-3 + ser.Seconds() + 1/veth) }
	m := during()
	dr := perfRR(t, d, "10.0.0.2", 5)
	w := want(rate["veth pair"][0])
	row("TCP_RR 1 B over delay 5ms: atmlab perf client -t TCP_RR -l 5", fmt.Sprintf("%.2f/s", dr),
		fmt.Sprintf("1/(10 ms + %.1f µs + veth %.1f µs) = %.2f/s; %s", us(ser), 1e6/rate["veth pair"][0], w, m()), fmt.Sprintf("%+.2f %%", 100*(dr/w-1)))
	if netperf != "" {
		m := during()
		nr := netperfRR(t, d, netperf, "10.0.0.2", 5)
		w := want(rate["veth pair"][1])
		row("TCP_RR 1 B over delay 5ms: netperf -t TCP_RR -l 5", fmt.Sprintf("%.2f/s", nr),
			fmt.Sprintf("1/(10 ms + %.1f µs + veth %.1f µs) = %.2f/s; %s", us(ser), 1e6/rate["veth pair"][1], w, m()), fmt.Sprintf("%+.2f %%", 100*(nr/w-1)))
	}
	dst := d.stats().Loop
	row("release lateness, delay 5ms (the RR runs)", fmt.Sprintf("p50 %v, p99 %v, max %v", dst.Lateness.P50, dst.Lateness.P99, dst.Lateness.Max),
		fmt.Sprintf("%d frames dropped later than the release bound", dst.LateDropped), "")
	d.stop()

	// The same with the CPUs kept awake (up --keep-cpus-awake), the veth
	// pair's transaction time taken again while they are: the keeper
	// keeps the pair's CPUs awake too.
	k := up(t, delayLab, "--keep-cpus-awake")
	k.exec("h1", "ping", "-c", "1", "10.0.0.2")
	k.perfServer("h2")
	m = during()
	kveth := perfRR(t, veth, "10.9.0.2", 5)
	kr := perfRR(t, k, "10.0.0.2", 5)
	w = want(kveth)
	row("TCP_RR 1 B over delay 5ms, up --keep-cpus-awake: atmlab perf client -t TCP_RR -l 5", fmt.Sprintf("%.2f/s", kr),
		fmt.Sprintf("1/(10 ms + %.1f µs + veth %.1f µs, kept awake) = %.2f/s; %s", us(ser), 1e6/kveth, w, m()), fmt.Sprintf("%+.2f %%", 100*(kr/w-1)))
	k.stop()

	// The floor: the same transactions over test/relay writing each frame
	// 5 ms after it read it (no serialization), the veth pair's
	// transaction time taken again beside it: what any emulator whose
	// hosts sit behind TAPs meets on this machine when its hosts sleep
	// between transactions.
	rl, stopRelay := relayPair(t, true, "-delay", "5ms")
	rl.exec("h1", "ping", "-c", "1", "10.8.0.2")
	rl.perfServer("h2")
	if netperf != "" {
		rl.start("h2", netserver, "-D", "-p", netserverPort)
		rl.waitListening("h2", "tcp", 12866)
	}
	m = during()
	rveth := perfRR(t, veth, "10.9.0.2", 5)
	rr := perfRR(t, rl, "10.8.0.2", 5)
	rw := 1 / (10e-3 + 1/rveth)
	row("TCP_RR 1 B over a bare relay delaying 5 ms each way (relay -block -delay 5ms): atmlab perf client -t TCP_RR -l 5", fmt.Sprintf("%.2f/s", rr),
		fmt.Sprintf("1/(10 ms + veth %.1f µs) = %.2f/s; %s", 1e6/rveth, rw, m()), fmt.Sprintf("%+.2f %%", 100*(rr/rw-1)))
	if netperf != "" {
		m := during()
		nveth := netperfRR(t, veth, netperf, "10.9.0.2", 5)
		nr := netperfRR(t, rl, netperf, "10.8.0.2", 5)
		nw := 1 / (10e-3 + 1/nveth)
		row("TCP_RR 1 B over a bare relay delaying 5 ms each way: netperf -t TCP_RR -l 5", fmt.Sprintf("%.2f/s", nr),
			fmt.Sprintf("1/(10 ms + veth %.1f µs) = %.2f/s; %s", 1e6/nveth, nw, m()), fmt.Sprintf("%+.2f %%", 100*(nr/nw-1)))
	}
	stopRelay()
	printTable(rows)
}

// netserverPort is netserver's control port: netperf's own, 12865, is
// atmlab perf's (perf.DefaultPort).
const netserverPort = "12866"

// netperfTools finds netperf ($NETPERF, else on PATH) and the netserver
// beside it; "" when there is none.
func netperfTools() (netperf, netserver string) {
	netperf = os.Getenv("NETPERF")
	if netperf == "" {
		netperf, _ = exec.LookPath("netperf")
	}
	if netperf == "" {
		return "", ""
	}
	netperf, _ = filepath.Abs(netperf)
	netserver = filepath.Join(filepath.Dir(netperf), "netserver")
	if _, err := os.Stat(netserver); err != nil {
		if netserver, err = exec.LookPath("netserver"); err != nil {
			return "", ""
		}
	}
	return netperf, netserver
}

// perfRR is atmlab perf's TCP_RR rate (1-byte request and response)
// from h1 to addr over secs seconds, the whole run's as netperf reports.
func perfRR(t *testing.T, r *running, addr string, secs int) float64 {
	t.Helper()
	res, err := r.perfJSON("h1", "-H", addr, "-t", "TCP_RR", "-l", strconv.Itoa(secs))
	if err != nil {
		t.Fatal(err)
	}
	return res.TransactionsPerSec
}

// netperfRR is netperf's TCP_RR rate (1-byte request and response) from
// h1 to addr over secs seconds.
func netperfRR(t *testing.T, r *running, netperf, addr string, secs int) float64 {
	t.Helper()
	out := string(r.exec("h1", netperf, "-H", addr, "-p", netserverPort, "-t", "TCP_RR", "-l", strconv.Itoa(secs), "-P", "0"))
	// -P 0: one line, "sndbuf rcvbuf req resp elapsed rate".
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) >= 6 {
			if v, err := strconv.ParseFloat(f[5], 64); err == nil {
				return v
			}
		}
	}
	t.Fatalf("netperf TCP_RR to %s: no rate in %q", addr, out)
	return 0
}

func mean(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}
