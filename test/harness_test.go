//go:build integration

package test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/atmlab/atmlab/harness/labrun"
	"github.com/atmlab/atmlab/harness/perf"
	"github.com/atmlab/atmlab/harness/theory"
)

// perfJSON runs atmlab perf client in a host and decodes its result,
// once the machine is quiet and again while the hypervisor stole any of
// its seconds (quietRun).
func (r *running) perfJSON(from string, args ...string) (res perf.Result, err error) {
	quietRun(r.t, fmt.Sprintf("atmlab perf client %v", args), func() (int, int) {
		steal := machine()
		began := steal.now()
		cmd := r.command(from, append([]string{atmlab, "perf", "client", "-o", "json"}, args...)...)
		var out []byte
		out, err = cmd.Output() // stdout only: the JSON, even when the test failed
		ended := steal.now()
		res = perf.Result{}
		if jerr := json.Unmarshal(out, &res); jerr != nil && err == nil {
			err = jerr
		}
		if err != nil {
			return 0, 0 // the caller fails on it
		}
		return steal.stolenSeconds(began, ended)
	})
	return res, err
}

// 1: atmlab's own tests agree with iperf3 and with the ceiling atmlab calc
// prints, through an emulated 100M switch; iperf3's figures there are
// TestSwitchLineRate's checks at 100M (lineRate), in the same lab.
func TestPerfAgainstIperf3(t *testing.T) {
	requireRoot(t, "iperf3")
	r := up(t, pair100)
	r.exec("h1", "ping", "-c", "1", "-W", "2", "10.0.0.2")
	ipUDP, ipTCP := r.lineRate(t, "100M", 100e6, "150M", 5201)
	r.perfServer("h2")
	tcp, err := r.perfJSON("h1", "-H", "10.0.0.2", "-t", "TCP_STREAM", "-l", "8")
	if err != nil {
		t.Fatal(err)
	}
	udp, err := r.perfJSON("h1", "-H", "10.0.0.2", "-t", "UDP_STREAM", "-l", "8", "-m", "1472")
	if err != nil {
		t.Fatal(err)
	}
	tcpCeil, _ := theory.EthernetCeiling(100e6, 1500, 1448, "tcp")
	udpCeil, _ := theory.EthernetCeiling(100e6, 1500, 1472, "udp")
	t.Logf("TCP: atmlab %.2f, iperf3 %.2f, ceiling %.2f Mbit/s; UDP receive: atmlab %.2f (send %.2f), iperf3 %.2f, ceiling %.2f",
		tcp.ThroughputBps/1e6, ipTCP/1e6, tcpCeil.Goodput/1e6, udp.ThroughputBps/1e6, udp.SendBps/1e6, ipUDP/1e6, udpCeil.Goodput/1e6)
	for _, c := range []struct {
		what      string
		got, want float64
	}{
		{"TCP_STREAM vs iperf3 TCP", tcp.ThroughputBps, ipTCP},
		{"UDP_STREAM vs iperf3 receiver", udp.ThroughputBps, ipUDP},
		{"TCP_STREAM vs ceiling", tcp.ThroughputBps, tcpCeil.Goodput},
		{"iperf3 TCP vs ceiling", ipTCP, tcpCeil.Goodput},
		{"UDP_STREAM vs ceiling", udp.ThroughputBps, udpCeil.Goodput},
		{"iperf3 UDP vs ceiling", ipUDP, udpCeil.Goodput},
	} {
		if !within(c.got, c.want, 0.02) {
			t.Errorf("%s: %.2f vs %.2f Mbit/s, want within 2%%", c.what, c.got/1e6, c.want/1e6)
		}
	}
	if udp.ThroughputBps > udpCeil.Goodput*1.01 || tcp.ThroughputBps > tcpCeil.Goodput*1.01 {
		t.Error("a result is above its ceiling")
	}
}

// 6: a server killed mid-test gives a clear error and keeps the partial result.
func TestPerfServerKilled(t *testing.T) {
	requireRoot(t)
	r := up(t, pair100)
	srv := r.perfServer("h2")
	// The kill lands mid-test (a 5 s TCP_RR): the sleep is the point.
	go func() { time.Sleep(1500 * time.Millisecond); srv.Process.Kill() }()
	start := time.Now()
	res, err := r.perfJSON("h1", "-H", "10.0.0.2", "-t", "TCP_RR", "-l", "5")
	if err == nil {
		t.Fatal("the client did not notice its server was killed")
	}
	if time.Since(start) > 20*time.Second || res.Test != "TCP_RR" || res.Transactions == 0 {
		t.Fatalf("after the server was killed: %v, kept %d transactions (%v)", err, res.Transactions, time.Since(start))
	}
	out, _ := r.try("h1", atmlab, "perf", "client", "-H", "10.0.0.2", "-t", "TCP_RR", "-l", "1")
	if !strings.Contains(string(out), "cannot reach the perf server") {
		t.Errorf("no server: %s", out)
	}
}

// pair100 is pairLab at 100M.
var pair100 = strings.ReplaceAll(pairLab, "RATE", "100M")

// sweepLab is pair100 with experiments that make a 20-point sweep. The UDP
// points use 1 MB socket buffers (Linux doubles them): the default 208 KB
// hold ~10 ms of 1400 B datagrams at 100M, and a sender preempted for
// longer loses link time (a rehearsal flagged 1400 B at 98 %; with busy
// loops on both cores, 9 of 72 such 1-s points fell below 0.99 of the ceiling
// with the default buffers, none of 48 with 1 MB). Not 4 MB: that holds more
// than the token bucket's 1000-frame queue, so the sender is never blocked
// and the qdisc drops what it sends beyond the line rate.
var sweepLab = pair100 + `experiments:
  - name: udp
    from: h1
    to: h2
    tests: [UDP_STREAM]
    sizes: [200, 300, 400, 500, 600, 700, 800, 900, 1000, 1100, 1200, 1300, 1400, 1472]
    sockbufs: [1048576]
    duration: 1s
  - name: rr
    from: h1
    to: h2
    tests: [TCP_RR]
    sizes: [1, 100, 500, 1000, 2000, 4000]
    duration: 1s
`

// 4: a sweep of 20 points runs end to end and renders a report.
func TestLabRunSweep(t *testing.T) {
	requireRoot(t)
	out, recs := labRun(t, sweepLab)
	if len(recs) != 20 {
		t.Fatalf("%d records, want 20", len(recs))
	}
	// UDP goodput follows the ceiling and rises with the message size. Small
	// datagrams come in tens of thousands a second, and the two cores the
	// sender, the emulator and the receiver share may not keep up: such a
	// point must say so (its flag); every other is within 2 % of the ceiling
	// and above the unflagged point before it (flagged points, limited by
	// the machine, rise or fall with its load).
	// A point a hair above its ceiling carries a note that says why (the
	// tool's clock, not the link); it reached the ceiling, and is judged.
	prev := 0.0
	for _, r := range recs[:14] {
		short := r.Flag != "" && !r.AboveCeiling
		if r.Error != "" || r.Result.ThroughputBps > r.Ceiling*1.01 || (!short && !within(r.Result.ThroughputBps, r.Ceiling, 0.02)) {
			t.Errorf("UDP %d B: %.2f Mbit/s, ceiling %.2f, flag %q, error %q", r.Size, r.Result.ThroughputBps/1e6, r.Ceiling/1e6, r.Flag, r.Error)
		}
		if r.Size >= 1000 && short && r.Steal <= labrun.MaxSteal { // a stolen point is flagged for that (TestJudgeSteal)
			t.Errorf("UDP %d B: flagged %q; large datagrams should reach the ceiling", r.Size, r.Flag)
		}
		if short {
			continue
		}
		if r.Result.ThroughputBps < prev*0.98 {
			t.Errorf("UDP %d B: %.2f Mbit/s fell below the smaller size's %.2f", r.Size, r.Result.ThroughputBps/1e6, prev/1e6)
		}
		prev = r.Result.ThroughputBps
	}
	// Transactions fall as requests and responses grow: 4000-byte ones take
	// six frames each way.
	if first, last := recs[14].Result.TransactionsPerSec, recs[19].Result.TransactionsPerSec; !(last < first*0.5) {
		t.Errorf("TCP_RR: %.0f/s at 1 B, %.0f/s at 4000 B; want far fewer at 4000", first, last)
	}
	for _, f := range []string{"report.md", "report.html", "throughput.png", "throughput.svg", "transactions.png", "results.csv"} {
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s missing or empty: %v", f, err)
		}
	}
	html, _ := os.ReadFile(filepath.Join(out, "report.html"))
	if !strings.Contains(string(html), "<svg") || !strings.Contains(string(html), "udp · UDP_STREAM · atmlab") {
		t.Error("report.html lacks its inline plots or series")
	}
	lines := 0
	f, _ := os.Open(filepath.Join(out, "results.csv"))
	for sc := bufio.NewScanner(f); sc.Scan(); lines++ {
	}
	f.Close()
	if lines != 21 {
		t.Errorf("results.csv has %d lines, want a header and 20 rows", lines)
	}
}

// An interrupted lab run keeps what it measured and still tears down.
func TestLabRunInterrupted(t *testing.T) {
	requireRoot(t)
	name := labName()
	dir := t.TempDir()
	file := filepath.Join(dir, "lab.yaml")
	os.WriteFile(file, []byte(strings.ReplaceAll(sweepLab, "NAME", name)), 0o644)
	out := filepath.Join(dir, "out")
	cmd := exec.Command(atmlab, "lab", "run", file, "--out", out)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Interrupted once it has measured a point, well before its last.
	waitFor(t, time.Minute, "the lab run's first record", func() bool {
		recs, err := labrun.ReadRecords(out)
		return err == nil && len(recs) > 0
	})
	cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	if err == nil || cmd.ProcessState.ExitCode() != 1 {
		t.Errorf("interrupted lab run: %v, want exit 1", err)
	}
	recs, rerr := labrun.ReadRecords(out)
	if rerr != nil || len(recs) == 0 || len(recs) >= 20 {
		t.Errorf("interrupted run kept %d records (%v), want some but not all", len(recs), rerr)
	}
	if _, err := os.Stat(filepath.Join(out, "report.html")); err != nil {
		t.Errorf("no report for the partial run: %v", err)
	}
	if left := namespaces(name); len(left) > 0 {
		t.Errorf("interrupted lab run left namespaces: %v", left)
	}
}

// What-if variants: the same experiment on the lab as written and on each
// variant, compared in the report.
func TestLabRunVariants(t *testing.T) {
	requireRoot(t)
	out, recs := labRun(t, pair100+`experiments:
  - {name: tcp, from: h1, to: h2, tests: [TCP_STREAM], duration: 3s}
variants:
  - {name: 10M, set: [{link: "h1:eth0", rate: 10M}, {link: "h2:eth0", rate: 10M}]}
  - {name: hub, set: [{node: sw1, kind: hub}]}
`)
	if len(recs) != 3 {
		t.Fatalf("%d records, want base, 10M and hub", len(recs))
	}
	by := map[string]float64{}
	for _, r := range recs {
		by[r.Variant] = r.Result.ThroughputBps
	}
	t.Logf("TCP: base %.2f, 10M %.2f, hub %.2f Mbit/s", by["base"]/1e6, by["10M"]/1e6, by["hub"]/1e6)
	if !within(by["10M"]/by["base"], 0.1, 0.05) || !(by["hub"] < 0.97*by["base"]) {
		t.Errorf("variants: base %.2f, 10M %.2f, hub %.2f Mbit/s", by["base"]/1e6, by["10M"]/1e6, by["hub"]/1e6)
	}
	md, _ := os.ReadFile(filepath.Join(out, "report.md"))
	if !strings.Contains(string(md), "## Variants compared with the lab as written") || !strings.Contains(string(md), "| tcp | TCP_STREAM | atmlab | 0 | 0 | 10M |") {
		t.Errorf("report lacks the variants table:\n%s", md)
	}
}

// An experiment's confidence: in both clocks: each point is run again
// until netperf's rule holds or max runs, and its record holds the runs'
// figures, their mean as the figure, the width and interval reached and
// whether it was met. In virtual time a lossless lab's runs, seeded apart,
// differ by the hosts' processing jitter only (met after the minimum); in
// real time they differ by the machine's noise too.
func TestLabRunConfidence(t *testing.T) {
	requireRoot(t)
	out, recs := labRun(t, pair100+`experiments:
  - {name: udp, from: h1, to: h2, tests: [UDP_STREAM], sizes: [1472], duration: 500ms, confidence: {level: 95, width: 2%, max: 5}}
  - {name: rr, from: h1, to: h2, tests: [TCP_RR], sizes: [1], duration: 500ms, confidence: {level: 95, width: 10%, max: 4}}
`, "--clock", "both")
	if len(recs) != 4 {
		t.Fatalf("%d records, want 2 points in 2 clocks", len(recs))
	}
	for _, rec := range recs {
		c := rec.Result.Confidence
		if c == nil || rec.Error != "" || rec.Result.Error != "" {
			t.Fatalf("%s %s clock %q: confidence %+v, error %q %q", rec.Experiment, rec.Test, rec.Clock, c, rec.Error, rec.Result.Error)
		}
		t.Logf("%s %s clock %q: %d runs %v, width %.2f %%, met %v, figure %.6g", rec.Experiment, rec.Test, rec.Clock, c.Iterations, c.Values, 100*c.Achieved, c.Met, rec.Result.Figure())
		sum := 0.0
		for _, v := range c.Values {
			sum += v
		}
		if c.Iterations < 3 || c.Iterations > c.Max || len(c.Values) != c.Iterations || rec.Result.Figure() != c.Mean ||
			math.Abs(c.Mean-sum/float64(c.Iterations)) > 1e-9*c.Mean {
			t.Errorf("%s clock %q: %d runs of 3..%d, values %v, figure %v, mean %v", rec.Experiment, rec.Clock, c.Iterations, c.Max, c.Values, rec.Result.Figure(), c.Mean)
		}
		if c.Met != (c.Achieved <= c.Width) || !c.Met && c.Iterations != c.Max || c.Met && c.Iterations > 3 && perf.Width(c.Level, c.Values[:c.Iterations-1]) <= c.Width {
			t.Errorf("%s clock %q: met %v after %d runs at width %v, want netperf's rule", rec.Experiment, rec.Clock, c.Met, c.Iterations, c.Achieved)
		}
		if c.Interval == nil || math.Abs((c.Interval[1]-c.Interval[0])-c.Achieved*c.Mean) > 1e-6*c.Mean {
			t.Errorf("%s clock %q: interval %v, width %v of %v", rec.Experiment, rec.Clock, c.Interval, c.Achieved, c.Mean)
		}
		if rec.Clock == "virtual" && (c.Iterations != 3 || !c.Met || c.Values[0] == c.Values[1] && c.Values[1] == c.Values[2]) {
			t.Errorf("%s in virtual time: %d runs %v, met %v: a lossless lab's runs differ by the hosts' seeded jitter only, met after 3", rec.Experiment, c.Iterations, c.Values, c.Met)
		}
		// The runs' rate, judged in real time by their median (house rule:
		// a 500 ms run a stall of the machine hit is outvoted; a CI run,
		// with no steal, read two of five at 80 and 87 Mbit/s, cause not
		// found), in virtual time by their mean, the figure.
		if rec.Test == "UDP_STREAM" {
			got := rec.Result.ThroughputBps
			if rec.Clock != "virtual" {
				got = median(t, c.Values)
			}
			if !within(got, rec.Ceiling, 0.02) {
				t.Errorf("UDP clock %q: %.2f Mbit/s (runs %v, %d datagrams lost, host drops %d, release lateness %+v), ceiling %.2f",
					rec.Clock, got/1e6, mbps(c.Values), rec.Result.Lost, rec.HostDrops, rec.Lateness, rec.Ceiling/1e6)
			}
		}
	}
	md, _ := os.ReadFile(filepath.Join(out, "report.md"))
	if !strings.Contains(string(md), "95 % confidence within ±1 %: ") {
		t.Errorf("report lacks the confidence reached:\n%s", md)
	}
}

// labRun writes lab (NAME replaced by a fresh lab name), runs `atmlab lab
// run` on it, checks that nothing of the lab remains, and returns the output
// folder and its records. It starts once the machine is quiet, or after
// waiting for that in vain: the lab run retakes its stolen points itself.
func labRun(t *testing.T, lab string, args ...string) (string, []labrun.Record) {
	t.Helper()
	awaitQuiet(t)
	name := labName()
	dir := t.TempDir()
	file := filepath.Join(dir, "lab.yaml")
	if err := os.WriteFile(file, []byte(strings.ReplaceAll(lab, "NAME", name)), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	if b, err := exec.Command(atmlab, append([]string{"lab", "run", file, "--out", out}, args...)...).CombinedOutput(); err != nil {
		t.Fatalf("lab run: %v\n%s", err, b)
	}
	if left := namespaces(name); len(left) > 0 {
		t.Errorf("lab run left namespaces: %v", left)
	}
	recs, err := labrun.ReadRecords(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range recs {
		if rec.Clock == "virtual" {
			continue // no veth in virtual time
		}
		// Every result carries the veth probe's RTT; a ping over veth
		// takes 5-60 µs on this machine kind, never a millisecond.
		if rec.VethRTT <= 0 || rec.VethRTT > 1000 {
			t.Errorf("%s %s size %d: veth_rtt_us %.1f, want the lab's veth probe (0-1000 µs)", rec.Experiment, rec.Test, rec.Size, rec.VethRTT)
		}
		// and a ping through the emulator between its hosts, more than
		// the veth pair's and far less than a second;
		if rec.From != rec.To && (rec.PathRTT <= rec.VethRTT || rec.PathRTT > 1e5) {
			t.Errorf("%s %s size %d: ping_rtt_us %.1f, want the path's ping, above the veth pair's %.1f µs", rec.Experiment, rec.Test, rec.Size, rec.PathRTT, rec.VethRTT)
		}
		// and the emulator's release lateness during the point: frames
		// moved, so releases were counted, in order of their quantiles.
		if l := rec.Lateness; l == nil || l.Count == 0 || l.P50 > l.P99 || l.P99 > l.Max {
			t.Errorf("%s %s size %d: release_lateness %+v, want the point's releases with p50 <= p99 <= max", rec.Experiment, rec.Test, rec.Size, l)
		}
	}
	return out, recs
}

// 2: TCP_RR with 1-byte messages over a link with delay: 5ms: the time the delay adds to a transaction, its transaction
// time minus the same lab's at zero delay measured just before, against
// the model's 10 ms (the delay each way; serialization is in both). What
// it adds beyond that is the hosts waking after each 10 ms idle spell: a
// halted vCPU here takes tens of microseconds to run the woken thread, and
// more in some hours than others (1.0003-1.0306 of the model, this build
// and the one before it alike when measured side by side), so the 3 % goal
// is judged in `make bench` (TestLatencyAB), not here. CI
// holds what holds with margin: the delay is never undercut (the model's
// 10 ms less 1 %), and the emulator's own part, the loop's wake before
// each release, stays within microseconds of its model time.
func TestRRDelay(t *testing.T) {
	requireRoot(t)
	r := up(t, pair100)
	r.perfServer("h2")
	base := rrRate(t, r, "10.0.0.2", "TCP_RR")
	r.set("h1:eth0", "delay=5ms")
	rate := rrRate(t, r, "10.0.0.2", "TCP_RR")
	added := 1/rate - 1/base
	loop := r.stats().Loop
	late, wake := loop.Lateness, loop.Wake
	t.Logf("TCP_RR over 2 x 5 ms: %.2f/s against %.0f/s at zero delay: the delay adds %.3f ms, %.4f of the model's 10 ms; release lateness p50 %v p99 %v; wake lateness p50 %v p99 %v",
		rate, base, added*1e3, added/10e-3, late.P50, late.P99, wake.P50, wake.P99)
	if added < 0.99*10e-3 {
		t.Errorf("the delay adds %.3f ms to a transaction: less than the model's 10 ms", added*1e3)
	}
	// The loop's own part: how late the pass that releases a frame began.
	// Release lateness adds the TAP write, in which the receiving host's
	// kernel takes the segment and wakes netperf (25-37 µs at the median
	// here, whatever the loop does); a loop that slept through the last
	// millisecond would begin its pass ~50 µs late or more.
	if wake.P50 > 20*time.Microsecond {
		t.Errorf("wake lateness p50 %v: the loop should spin the last millisecond before a release", wake.P50)
	}
}
