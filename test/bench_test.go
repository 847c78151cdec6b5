//go:build integration

package test

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/atmlab/atmlab/cells"
	"github.com/atmlab/atmlab/control"
	"github.com/atmlab/atmlab/emulator/atm"
	"github.com/atmlab/atmlab/harness/theory"
	"github.com/atmlab/atmlab/internal/headless"
)

// TestBenchTable prints the benchmark table of docs/benchmarks.md (`make bench`).
// Figures are ratios measured side by side in one run: the emulator against
// a plain veth pair, measured rates against theory. It asserts nothing and
// runs only with ATMLAB_BENCH=1.
func TestBenchTable(t *testing.T) {
	if os.Getenv("ATMLAB_BENCH") == "" {
		t.Skip("benchmark: run with ATMLAB_BENCH=1 (make bench)")
	}
	requireRoot(t, "iperf3")
	var rows [][]string
	row := func(cells ...string) { rows = append(rows, cells) }

	// Forwarding capacity, unpaced: one switch hop at a rate that never
	// paces, flooded with UDP, against a veth pair between two namespaces.
	veth := vethPair(t)
	r := up(t, strings.ReplaceAll(pairLab, "RATE", "100G"))
	r.exec("h1", "ping", "-c", "1", "10.0.0.2")
	for _, size := range []struct {
		name    string
		payload int
	}{{"64-byte frames", 18}, {"1514-byte frames", 1472}} {
		l := fmt.Sprint(size.payload)
		emu := r.runIperf("h1", "h2", "10.0.0.2", 5201, 5, "-u", "-b", "0", "-l", l)
		ref := veth.runIperf("h1", "h2", "10.9.0.2", 5201, 5, "-u", "-b", "0", "-l", l)
		e, v := steady(t, emu.PPS, 1), steady(t, ref.PPS, 1)
		frameBits := float64(size.payload+42) * 8
		row("forwarding, "+size.name+", unpaced", fmt.Sprintf("%.0f kframes/s (%.3f Gbit/s)", e/1e3, e*frameBits/1e9),
			fmt.Sprintf("veth %.0f kframes/s", v/1e3), fmt.Sprintf("%.2f", e/v))
	}
	// The harness's own ceiling beside iperf3's, on a host's loopback and
	// through the unpaced hop (iperf3 has no RR test).
	r.perfServer("h1")
	r.perfServer("h2")
	for _, path := range []struct{ name, srv, addr string }{{"loopback", "h1", "127.0.0.1"}, {"one unpaced hop", "h2", "10.0.0.2"}} {
		for _, c := range []struct {
			name  string
			atm   []string
			iperf []string
		}{
			{"TCP_STREAM", []string{"-t", "TCP_STREAM"}, nil},
			{"UDP_STREAM 1472", []string{"-t", "UDP_STREAM", "-m", "1472"}, []string{"-u", "-b", "0", "-l", "1472"}},
			{"UDP_STREAM 64", []string{"-t", "UDP_STREAM", "-m", "64"}, []string{"-u", "-b", "0", "-l", "64"}},
		} {
			res, err := r.perfJSON("h1", append([]string{"-H", path.addr, "-l", "4"}, c.atm...)...)
			if err != nil {
				t.Fatal(err)
			}
			ip := steady(t, r.runIperf("h1", path.srv, path.addr, 5301, 4, c.iperf...).Received, 1)
			row("harness ceiling, "+c.name+", "+path.name, fmt.Sprintf("%.0f Mbit/s", res.ThroughputBps/1e6), fmt.Sprintf("iperf3 %.0f Mbit/s", ip/1e6), fmt.Sprintf("%.2f", res.ThroughputBps/ip))
		}
		rr, err := r.perfJSON("h1", "-H", path.addr, "-l", "4", "-t", "TCP_RR")
		if err != nil {
			t.Fatal(err)
		}
		row("harness ceiling, TCP_RR 1 B, "+path.name, fmt.Sprintf("%.0f transactions/s (p50 %.0f µs)", rr.TransactionsPerSec, rr.Latency.P50), "iperf3 has no RR test", "")
	}

	emuTCP := steady(t, r.runIperf("h1", "h2", "10.0.0.2", 5202, 5).Received, 1)
	vethTCP := steady(t, veth.runIperf("h1", "h2", "10.9.0.2", 5202, 5).Received, 1)
	row("forwarding, TCP, unpaced", fmt.Sprintf("%.0f Mbit/s", emuTCP/1e6), fmt.Sprintf("veth %.0f Mbit/s", vethTCP/1e6), fmt.Sprintf("%.2f", emuTCP/vethTCP))
	r.stop()

	// Rate accuracy and release lateness at each line rate.
	for _, rate := range []struct {
		name string
		bps  float64
		udp  string
	}{{"10M", 10e6, "15M"}, {"100M", 100e6, "150M"}, {"1G", 1e9, "1500M"}, {"10G", 10e9, "15G"}} {
		r := up(t, strings.ReplaceAll(pairLab, "RATE", rate.name))
		r.exec("h1", "ping", "-c", "1", "10.0.0.2")
		udp := steady(t, r.runIperf("h1", "h2", "10.0.0.2", 5201, 6, "-u", "-b", rate.udp, "-l", "1472").Received, 2)
		before := r.stats().Loop
		tcp := steady(t, r.runIperf("h1", "h2", "10.0.0.2", 5202, 6).Received, 2)
		st := r.stats().Loop
		u, c := ceiling(rate.bps, 1472, 28), ceiling(rate.bps, 1448, 52)
		row("UDP 1472 at "+rate.name, fmt.Sprintf("%.2f Mbit/s", udp/1e6), fmt.Sprintf("theory %.2f", u/1e6), fmt.Sprintf("%.4f", udp/u))
		row("TCP at "+rate.name, fmt.Sprintf("%.2f Mbit/s", tcp/1e6), fmt.Sprintf("theory %.2f", c/1e6), fmt.Sprintf("%.4f", tcp/c))
		row("release lateness at "+rate.name+" (TCP run)", fmt.Sprintf("p50 %v, p99 %v, max %v", st.Lateness.P50, st.Lateness.P99, st.Lateness.Max),
			fmt.Sprintf("emulator CPU %.0f%%; %.1f wire frames a super-frame", 100*cpuBetween(before, st),
				float64(st.SuperSegments-before.SuperSegments)/float64(max(st.SuperFrames-before.SuperFrames, 1))), "")
		if rate.bps >= 1e9 {
			// TCP both ways at once: each direction's data shares its wire
			// with the other's ACKs.
			ab, ba := r.bothWays(5203, 6)
			if ab.err != nil || ba.err != nil {
				t.Fatal(ab.err, ba.err)
			}
			x, y := steady(t, ab.Received, 2), steady(t, ba.Received, 2)
			row("TCP at "+rate.name+", both ways at once", fmt.Sprintf("%.2f and %.2f Mbit/s", x/1e6, y/1e6), fmt.Sprintf("theory %.2f each", c/1e6),
				fmt.Sprintf("%.4f, %.4f", x/c, y/c))
		}
		r.stop()
	}

	// Release lateness through a hub in real time: TCP, so data and ACKs
	// contend for the medium.
	for _, rate := range []string{"10M", "100M"} {
		r := up(t, strings.ReplaceAll(hubLab, "100M", rate))
		r.exec("h1", "ping", "-c", "1", "10.0.0.2")
		before := r.stats().Loop
		tcp := steady(t, r.runIperf("h1", "h2", "10.0.0.2", 5201, 6).Received, 2)
		st := r.stats().Loop
		row("hub at "+rate+", TCP: goodput and release lateness", fmt.Sprintf("%.2f Mbit/s; p50 %v, p99 %v, max %v", tcp/1e6, st.Lateness.P50, st.Lateness.P99, st.Lateness.Max),
			fmt.Sprintf("emulator CPU %.0f%%", 100*cpuBetween(before, st)), "")
		r.stop()
	}

	// ATM through an atm-switch in real time: goodput against the cell
	// ceiling, and the cells per second the emulator moved beside the PHY's
	// cell rate (OC-12c is 1.41 M cells/s per direction, two hops).
	for _, phy := range []string{"oc3", "oc12"} {
		r := up(t, strings.ReplaceAll(strings.ReplaceAll(atmSwitchLab, "phy: oc3", "phy: "+phy), "CLR", "0%"))
		r.exec("h1", "ping", "-c", "1", "10.0.0.2")
		udp := steady(t, r.runIperf("h1", "h2", "10.0.0.2", 5201, 6, "-u", "-b", "2G", "-l", "1472").Received, 2)
		before := r.stats()
		start := time.Now()
		tcp := steady(t, r.runIperf("h1", "h2", "10.0.0.2", 5202, 6).Received, 2)
		after := r.stats()
		secs := time.Since(start).Seconds()
		cellsOut := func(st control.Stats) (n uint64) {
			for _, p := range st.Ports {
				if strings.HasPrefix(p.Port, "atm1:") && p.ATM != nil {
					n += p.ATM.TxCells
				}
			}
			return n
		}
		phyRate := atm.PHYs[phy].CellRate()
		u, c := oc(t, phy, 1472, "udp"), oc(t, phy, 9128, "tcp")
		row("ATM "+phy+" via atm-switch, UDP 1472", fmt.Sprintf("%.2f Mbit/s", udp/1e6), fmt.Sprintf("theory %.2f", u/1e6), fmt.Sprintf("%.4f", udp/u))
		row("ATM "+phy+" via atm-switch, TCP (MTU 9180)", fmt.Sprintf("%.2f Mbit/s", tcp/1e6), fmt.Sprintf("theory %.2f", c/1e6), fmt.Sprintf("%.4f", tcp/c))
		row("ATM "+phy+" switch cells/s (TCP run, both directions)", fmt.Sprintf("%.0f k cells/s; lateness p50 %v, p99 %v", float64(cellsOut(after)-cellsOut(before))/secs/1e3, after.Loop.Lateness.P50, after.Loop.Lateness.P99),
			fmt.Sprintf("PHY %.0f k cells/s each way; emulator CPU %.0f%%", phyRate/1e3, 100*cpuBetween(before.Loop, after.Loop)), "")
		r.stop()
	}

	benchATMSmall(t, veth, row)
	benchLiveView(t, row)
	printTable(rows)
}

func printTable(rows [][]string) {
	fmt.Println("| measurement | atmlab | side by side | ratio |")
	fmt.Println("|---|---|---|---|")
	for _, r := range rows {
		fmt.Println("| " + strings.Join(r, " | ") + " |")
	}
}

// TestBenchLiveView prints the live view's rows of the table alone.
func TestBenchLiveView(t *testing.T) {
	if os.Getenv("ATMLAB_BENCH") == "" {
		t.Skip("benchmark: run with ATMLAB_BENCH=1")
	}
	requireRoot(t, "iperf3")
	var rows [][]string
	benchLiveView(t, func(cells ...string) { rows = append(rows, cells) })
	printTable(rows)
}

// benchLiveView measures the live view's cost side by side: a 100M TCP
// stream and a 1 GbE UDP flood with no page open, then with the page open
// in headless chromium (polling four times a second), and the emulator's
// CPU both ways.
func benchLiveView(t *testing.T, row func(...string)) {
	ctx := headless.New(t)
	for _, c := range []struct {
		name, rate string
		args       []string
	}{{"TCP at 100M", "100M", nil}, {"UDP 1472 flood at 1G", "1G", []string{"-u", "-b", "1500M", "-l", "1472"}}} {
		r := up(t, strings.ReplaceAll(pairLab, "RATE", c.rate), "--web", "127.0.0.1:0")
		r.exec("h1", "ping", "-c", "1", "10.0.0.2")
		measure := func(port int) (float64, float64) {
			before := r.stats().Loop
			got := steady(t, r.runIperf("h1", "h2", "10.0.0.2", port, 6, c.args...).Received, 2)
			return got, cpuBetween(before, r.stats().Loop)
		}
		idle := func() float64 {
			before := r.stats().Loop
			time.Sleep(5 * time.Second) // the idle window whose CPU is measured
			return cpuBetween(before, r.stats().Loop)
		}
		var idleClosed float64
		if c.rate == "100M" {
			idleClosed = idle()
		}
		closed, cpuClosed := measure(5501)
		if err := chromedp.Do(ctx, chromedp.Navigate(r.liveView()), chromedp.WaitVisible(chromedp.CSS(`[data-node="sw1"]`))); err != nil {
			t.Fatal(err)
		}
		if c.rate == "100M" {
			// With no traffic the emulator's CPU is the view's cost alone.
			row("live view, idle 100M lab, 5 s: page closed, open", fmt.Sprintf("emulator CPU %.2f%%, %.2f%% of a core", 100*idleClosed, 100*idle()), "", "")
		}
		open, cpuOpen := measure(5502)
		if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
			t.Fatal(err)
		}
		// The same polling without a browser on the machine's two cores:
		// the view's own cost, apart from the page's rendering.
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			api := strings.Replace(r.liveView(), "/?token=", "/api/stats?token=", 1)
			for {
				select {
				case <-stop:
					return
				case <-time.After(250 * time.Millisecond):
				}
				if resp, err := http.Get(api); err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			}
		}()
		polled, cpuPolled := measure(5503)
		close(stop)
		wg.Wait()
		row("live view, "+c.name+": page closed, open in chromium, polled without a browser", fmt.Sprintf("%.2f, %.2f, %.2f Mbit/s", closed/1e6, open/1e6, polled/1e6),
			fmt.Sprintf("emulator CPU %.1f%%, %.1f%%, %.1f%% of a core", 100*cpuClosed, 100*cpuOpen, 100*cpuPolled), fmt.Sprintf("%.4f, %.4f", open/closed, polled/closed))
		r.stop()
	}
}

// benchATMSmall adds the OC-3c sawtooth at small sizes through an
// atm-switch: each point beside its cell ceiling, and the packets/s it took
// beside what a veth pair carries at that size (below ~200 B the hosts' and
// the TAPs' frame rate, not the cells, is the limit).
func benchATMSmall(t *testing.T, veth *running, row func(...string)) {
	for _, aal := range []atm.AAL{atm.AAL5, atm.AAL34} {
		sizes := []int{100, 148, 149, 196, 200, 244, 245}
		if aal == atm.AAL34 {
			sizes = []int{200, 220, 221}
		}
		r := up(t, strings.ReplaceAll(smallLab, "AAL", aal.String()))
		r.exec("h1", "ping", "-c", "1", "10.0.0.2")
		for i, size := range sizes {
			it := r.runIperf("h1", "h2", "10.0.0.2", 5401+i, 5, "-u", "-b", "0", "-w", "4M", "-l", fmt.Sprint(size))
			got, pps := steady(t, it.Received, 2), steady(t, it.PPS, 2)
			want := oc(t, "oc3", size, "udp")
			if aal == atm.AAL34 {
				c, err := theory.ATMCeiling(atm.PHYs["oc3"], atm.AAL34, cells.LLC, 9180, size, "udp")
				if err != nil {
					t.Fatal(err)
				}
				want = c.Goodput
			}
			side := fmt.Sprintf("theory %.2f (%.0f k packets/s)", want/1e6, want/float64(8*size)/1e3)
			if size < 200 && aal == atm.AAL5 {
				v := steady(t, veth.runIperf("h1", "h2", "10.9.0.2", 5401+i, 5, "-u", "-b", "0", "-w", "4M", "-l", fmt.Sprint(size)).PPS, 2)
				side += fmt.Sprintf("; veth %.0f k packets/s", v/1e3)
			}
			row(fmt.Sprintf("ATM oc3 via atm-switch, %v UDP %d (%d cells), -w 4M", aal, size, aal.Cells(size+36)),
				fmt.Sprintf("%.2f Mbit/s (%.0f k packets/s)", got/1e6, pps/1e3), side, fmt.Sprintf("%.4f", got/want))
		}
		r.stop()
	}
}

// cpuBetween is the emulator's CPU share between two stats readings.
func cpuBetween(a, b control.LoopStats) float64 {
	return float64(b.CPUTime-a.CPUTime) / float64(b.Uptime-a.Uptime)
}

// vethPair builds two namespaces joined by a plain veth pair (10.9.0.1 and
// .2), the kernel-only reference path, and removes them at cleanup. It
// returns a running whose exec works in them.
func vethPair(t *testing.T) *running {
	name := labName()
	a, b := name+"-h1", name+"-h2"
	sh := func(args ...string) {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v %s", strings.Join(args, " "), err, out)
		}
	}
	sh("netns", "add", a)
	t.Cleanup(func() { exec.Command("ip", "netns", "del", a).Run() })
	sh("netns", "add", b)
	t.Cleanup(func() { exec.Command("ip", "netns", "del", b).Run() })
	sh("link", "add", "atmlabv1", "netns", a, "type", "veth", "peer", "name", "atmlabv2", "netns", b)
	for i, ns := range []string{a, b} {
		dev := fmt.Sprintf("atmlabv%d", i+1)
		sh("-n", ns, "addr", "add", fmt.Sprintf("10.9.0.%d/24", i+1), "dev", dev)
		sh("-n", ns, "link", "set", dev, "up")
		sh("-n", ns, "link", "set", "lo", "up")
	}
	return &running{t: t, name: name, veth: true, subnet: "10.9.0."}
}

// relayPair is two namespaces joined by test/relay, a bare TAP-to-TAP
// forwarder (10.8.0.1 and .2 on atmlabr0): the floor of any emulator whose
// hosts sit behind TAPs. With block its two threads sleep in read; without,
// one thread spins, as atmlab's loop does under traffic, and takes a whole
// core while it runs: call stop before measuring anything else. Extra
// arguments go to the relay (-delay D).
func relayPair(t *testing.T, block bool, extra ...string) (r *running, stop func()) {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "relay")
	if out, err := exec.Command("go", "build", "-o", bin, "./relay").CombinedOutput(); err != nil {
		t.Fatalf("build relay: %v\n%s", err, out)
	}
	name := labName()
	a, b := name+"-h1", name+"-h2"
	for _, ns := range []string{a, b} {
		if out, err := exec.Command("ip", "netns", "add", ns).CombinedOutput(); err != nil {
			t.Fatalf("ip netns add %s: %v %s", ns, err, out)
		}
		t.Cleanup(func() { exec.Command("ip", "netns", "del", ns).Run() })
	}
	args := append(append([]string(nil), extra...), a, b)
	if block {
		args = append([]string{"-block"}, args...)
	}
	cmd := exec.Command(bin, args...)
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stop = sync.OnceFunc(func() { cmd.Process.Kill(); cmd.Wait() })
	t.Cleanup(stop)
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || line != "ready\n" {
		t.Fatalf("relay: %q %v", line, err)
	}
	for i, ns := range []string{a, b} {
		for _, args := range [][]string{
			{"addr", "add", fmt.Sprintf("10.8.0.%d/24", i+1), "dev", "atmlabr0"},
			{"link", "set", "atmlabr0", "up"},
			{"link", "set", "lo", "up"},
		} {
			if out, err := exec.Command("ip", append([]string{"-n", ns}, args...)...).CombinedOutput(); err != nil {
				t.Fatalf("ip -n %s %s: %v %s", ns, strings.Join(args, " "), err, out)
			}
		}
	}
	return &running{t: t, name: name, veth: true, subnet: "10.8.0."}, stop
}

// oc is the ceiling of a Classical IP over ATM path on phy (AAL5, LLC/SNAP,
// MTU 9180).
func oc(t *testing.T, phy string, payload int, proto string) float64 {
	t.Helper()
	c, err := theory.ATMCeiling(atm.PHYs[phy], atm.AAL5, cells.LLC, 9180, payload, proto)
	if err != nil {
		t.Fatal(err)
	}
	return c.Goodput
}
