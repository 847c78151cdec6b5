//go:build integration

package test

import (
	"cmp"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/atmlab/atmlab/harness/labrun"
	"github.com/atmlab/atmlab/harness/perf"
	"github.com/atmlab/atmlab/topologies/labfile"
)

// seedLab runs a shipped lab in quick mode, as CI and `make demo` do, and
// checks what every seed lab's report must have: every figure the lab file
// asks for, drawn; a table of the study's claims with every claim measured;
// nothing of the lab left in the kernel; its time logged. It returns the
// records.
func seedLab(t *testing.T, name string) []labrun.Record {
	t.Helper()
	requireRoot(t, "iperf3", "iperf")
	file := filepath.Join("..", "topologies", name+".yaml")
	lab, err := labfile.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	start := time.Now()
	b, err := exec.Command(atmlab, "lab", "run", file, "--quick", "--out", out).CombinedOutput()
	took := time.Since(start)
	if err != nil {
		t.Fatalf("lab run %s --quick: %v\n%s", name, err, b)
	}
	if left := namespaces(lab.Name); len(left) > 0 {
		t.Errorf("lab run left namespaces: %v", left)
	}
	for _, f := range lab.Figures {
		for _, ext := range []string{".png", ".svg"} {
			if st, err := os.Stat(filepath.Join(out, f.Name+ext)); err != nil || st.Size() < 2000 {
				t.Errorf("figure %s%s: %v", f.Name, ext, err)
			}
		}
	}
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	report := string(md)
	if !strings.Contains(report, "## The study's findings, claim by claim") {
		t.Fatalf("%s report has no findings table:\n%s", name, report)
	}
	for i, f := range lab.Findings {
		row := lineWith(report, "| "+strconv.Itoa(i+1)+" | "+f.Claim)
		switch {
		case row == "":
			t.Errorf("claim %d (%s) missing from the report", i+1, f.Claim)
		case strings.Contains(row, "not measured"):
			t.Errorf("claim %d (%s) not measured in quick mode: %s", i+1, f.Claim, row)
		}
	}
	if html, err := os.ReadFile(filepath.Join(out, "report.html")); err != nil || !strings.Contains(string(html), "<svg") {
		t.Errorf("report.html without inline figures: %v", err)
	}
	recs, err := labrun.ReadRecords(out)
	if err != nil {
		t.Fatal(err)
	}
	// Its time is logged, not judged: speed is make bench's to measure
	// (a quiet run of the praktikum read 117-120 s), and the hypervisor's
	// steal makes a run measure points again.
	retakes := 0
	for _, r := range recs {
		retakes += r.StealRetakes
	}
	t.Logf("%s --quick took %v, %d points measured again for steal", name, took.Round(time.Second), retakes)
	return recs
}

// pointHealth says what a point's record knows of how it was measured:
// its background load, retransmissions, the emulator's release lateness
// and its flag, for a failure's message.
func pointHealth(recs []labrun.Record, variant, exp, test string, size int) string {
	var out []string
	for _, r := range recs {
		if cmp.Or(r.Variant, "base") != variant || r.Experiment != exp || r.Test != test || r.Size != size {
			continue
		}
		s := fmt.Sprintf("%s %.1f Mbit/s", exp, r.Result.ThroughputBps/1e6)
		if b := r.Background; b != nil {
			s += fmt.Sprintf(", background %s -> %s sent %.1f Mbit/s %s", b.From, b.To, b.SentBps/1e6, b.Error)
		}
		if k := r.HostKernel; k != nil {
			s += fmt.Sprintf(", %d of %d TCP segments resent", k.TCPRetransSegs, k.TCPOutSegs)
		}
		if l := r.Lateness; l != nil {
			s += fmt.Sprintf(", release lateness p50 %v p99 %v max %v", l.P50, l.P99, l.Max)
		}
		out = append(out, s+" "+r.Error+r.Flag)
	}
	return strings.Join(out, "; ")
}

func lineWith(text, prefix string) string {
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}

// figure is the median figure of the records of one variant, experiment,
// test, tool and size (0: any): where a quick run repeats a point, a stall
// of the machine in one run is outvoted, not averaged in. Records during
// which the machine's hypervisor took its CPU (labrun.MaxSteal) are left
// out; when that leaves none the test is not judged (notJudged).
func figure(t *testing.T, recs []labrun.Record, variant, exp, test, tool string, size int) float64 {
	t.Helper()
	var figs []float64
	stolen := 0
	for _, r := range recs {
		if cmp.Or(r.Variant, "base") == variant && r.Experiment == exp && r.Test == test && r.Tool == tool &&
			(size == 0 || r.Size == size) && r.Error == "" && r.Result.Error == "" {
			if r.Steal > labrun.MaxSteal {
				stolen++
				continue
			}
			figs = append(figs, r.Result.Figure())
		}
	}
	if stolen > 0 {
		t.Logf("%s %s %s %d: %d of %d runs left out, the hypervisor took more than %.0f %% of the machine", variant, exp, test, size, stolen, stolen+len(figs), 100*labrun.MaxSteal)
	}
	if len(figs) == 0 {
		notJudged(t, "%s %s %s %s %d: every run was stolen (%d)", variant, exp, test, tool, size, stolen)
	}
	slices.Sort(figs)
	n := len(figs)
	return (figs[(n-1)/2] + figs[n/2]) / 2
}

// The praktikum's shapes: via the hub (Amsel1 as the study's NT
// host) below the switched pair for UDP_STREAM (RR, which one-second quick
// points measure too noisily, is TestHubTaskIINT's, a long test); Task III's TCP
// stream below Task II's by about the study's share with the study's PCs,
// by half with today's; Task IV's ATM above Fast Ethernet. The margins are
// wider than the report's claims: they judge the shape, not the noise.
// The switched and ATM stream points run three times in the quick run and
// the test judges their median: single one-second points read 61.6 Mbit/s
// switched and 113.9 over ATM (against 93.5 and 134) in CI rehearsals, when
// the machine stalled the emulator (release lateness p99 10.5 ms).
func TestSeedPraktikum(t *testing.T) {
	recs := seedLab(t, "praktikum")
	m := func(variant, exp, test string, size int) float64 {
		return figure(t, recs, variant, exp, test, "atmlab", size)
	}
	udpHub, udpSw := m("amsel1-nt", "task2-hub", perf.UDPStream, 512), m("base", "task2-switched", perf.UDPStream, 512)
	t3, t2 := m("study-pcs", "task3-shared", perf.TCPStream, 1460), m("study-pcs", "task2-switched", perf.TCPStream, 1460)
	atm, eth := m("base", "task4-atm", perf.TCPStream, 1460), m("base", "task2-switched", perf.TCPStream, 1460)
	t.Logf("UDP 512 hub(NT) %.1f / switched %.1f Mbit/s; Task III %.1f / Task II %.1f Mbit/s; ATM %.1f / Ethernet %.1f Mbit/s",
		udpHub/1e6, udpSw/1e6, t3/1e6, t2/1e6, atm/1e6, eth/1e6)
	if !(udpHub < 0.85*udpSw) {
		t.Errorf("UDP_STREAM via the hub (NT) %.1f Mbit/s, want clearly below switched %.1f", udpHub/1e6, udpSw/1e6)
	}
	if r := t3 / t2; r < 0.6 || r > 0.92 {
		t.Errorf("Task III / Task II TCP = %.2f with the study's PCs, want about 0.7-0.87; the points: %s; %s", r,
			pointHealth(recs, "study-pcs", "task3-shared", perf.TCPStream, 1460), pointHealth(recs, "study-pcs", "task2-switched", perf.TCPStream, 1460))
	}
	// Task III's points carry what their background load sent: a2's
	// stream into a4, 40-56 Mbit/s with the study's PCs, 47-94 with today's.
	for _, r := range recs {
		if r.Experiment == "task3-shared" && r.Test == perf.TCPStream && (r.Background == nil || r.Background.SentBps < 20e6) {
			t.Errorf("%s task3-shared TCP_STREAM: background %+v, want a2 -> a4 sending 20 Mbit/s or more", r.Variant, r.Background)
		}
	}
	if r := atm / eth; r < 1.3 || r > 1.55 {
		t.Errorf("ATM / Ethernet TCP = %.2f, want about 1.43; the points: %s; %s", r,
			pointHealth(recs, "base", "task4-atm", perf.TCPStream, 1460), pointHealth(recs, "base", "task2-switched", perf.TCPStream, 1460))
	}
}

// cernet-atm: the sawtooth, the host limit and AAL3/4 against AAL5 in the
// report (the sawtooth itself is pinned by TestATMSawtoothSweep, which
// measures again when a stall of this machine spoils a point).
func TestSeedCERNET(t *testing.T) {
	longOnly(t, "cmd/atmlab's TestSeedLabsDeterminism runs the lab in virtual time; in real time TestNativeAALStreamRealTime measures its API stream, TestATMSmallSizes the sawtooth's step and TestAAL34Billing AAL3/4's cells")
	recs := seedLab(t, "cernet-atm")
	limited := figure(t, recs, "base", "sawtooth-host-limit", perf.UDPStream, "atmlab", 9124)
	aal34 := figure(t, recs, "aal34", "sawtooth-host-limit", perf.UDPStream, "atmlab", 9124)
	// s1 copies each 9166-octet Ethernet frame (9124 + UDP, IP and Ethernet
	// headers) at its copy rate, 77 Mbit/s.
	lab, err := labfile.Load(filepath.Join("..", "topologies", "cernet-atm.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	model := float64(lab.Node("s1").CPU.Copy) * 9124 / 9166
	t.Logf("host-limited UDP 9124: AAL5 %.2f, AAL3/4 %.2f Mbit/s, model %.2f", limited/1e6, aal34/1e6, model/1e6)
	if !within(limited, model, 0.04) || !within(aal34, limited, 0.03) {
		t.Errorf("host-limited: AAL5 %.2f, AAL3/4 %.2f Mbit/s; want both the host's copy rate, %.2f", limited/1e6, aal34/1e6, model/1e6)
	}
}

// gns3-mpls: iperf3 -u -b 0 through five software routers, MPLS slower
// than IP as in the study.
func TestSeedGNS3(t *testing.T) {
	longOnly(t, "cmd/atmlab's TestSeedLabsDeterminism runs the lab in virtual time; in real time TestRouterChain and TestATMCoreMPLS measure MPLS and IP through routers")
	recs := seedLab(t, "gns3-mpls")
	mpls, ip := figure(t, recs, "base", "routed", perf.UDPStream, "iperf3", 0), figure(t, recs, "ip", "routed", perf.UDPStream, "iperf3", 0)
	t.Logf("iperf3 UDP: MPLS %.1f, IP %.1f Mbit/s (%+.1f %%)", mpls/1e6, ip/1e6, 100*(mpls-ip)/ip)
	if !(mpls < ip) || !within(ip, 133.5e6, 0.06) {
		t.Errorf("MPLS %.1f, IP %.1f Mbit/s: want MPLS below IP, IP about 133.5", mpls/1e6, ip/1e6)
	}
}

// sandia-wan: three tools at 1 Gb/s with jumbo frames, graded.
func TestSeedSandia(t *testing.T) {
	longOnly(t, "cmd/atmlab's TestSeedLabsDeterminism runs the lab in virtual time; in real time TestGSOGigabit measures 1G TCP, TestPerfAgainstIperf3 the tools side by side and TestSCTPStreamRealTime SCTP")
	recs := seedLab(t, "sandia-wan")
	for _, tool := range []string{"atmlab", "iperf3", "iperf"} {
		v := figure(t, recs, "base", "tcp-"+tool, perf.TCPStream, tool, 0)
		t.Logf("%s TCP %.1f Mbit/s", tool, v/1e6)
		if v < 900e6 {
			t.Errorf("%s TCP %.1f Mbit/s: want grade A (900 or more) on an emulated 1 Gb/s path", tool, v/1e6)
		}
	}
}
