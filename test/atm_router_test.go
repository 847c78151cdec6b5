//go:build integration

package test

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/atmlab/atmlab/harness/theory"
	"github.com/atmlab/atmlab/topologies/labfile"
)

// atmCoreLab is ../topologies/testdata/atm-core.yaml (h1, four routers
// joined over OC-3c AAL5 through an atm-switch, h2, on 1G Ethernet at the
// edges) with keys on every router; NAME stays for up to fill in.
func atmCoreLab(keys string) string { return keyedLab("atm-core", keys) }

// coreCeiling is theory's ceiling of a stream from h1 to h2 over the core.
func coreCeiling(t *testing.T, lab, test string, size int) float64 {
	t.Helper()
	l, err := labfile.Parse("core.yaml", []byte(strings.ReplaceAll(lab, "NAME", "core")))
	if err != nil {
		t.Fatal(err)
	}
	c, ok := theory.PathCeiling(l, "h1", "h2", test, size)
	if !ok {
		t.Fatalf("no ceiling for %s %d", test, size)
	}
	return c
}

// Routers joined over OC-3c AAL5 through an atm-switch, with
// MPLS: ping works, traceroute lists every router (uniform TTL model),
// and UDP and TCP reach the cell ceiling (32 cells a 1500-octet packet,
// label or not) within 1 %, judged as the median of per-second intervals
// after a 2-second warm-up.
func TestATMCoreMPLS(t *testing.T) {
	requireRoot(t, "iperf3", "traceroute", "ping")
	lab := atmCoreLab("mpls: true,")
	r := up(t, lab)
	r.exec("h1", "ping", "-c", "2", "-W", "2", "10.0.4.1")
	want := []string{"10.0.0.254", "10.0.1.2", "10.0.2.3", "10.0.3.4", "10.0.4.1"}
	out := string(r.exec("h1", "traceroute", "-n", "-q", "1", "-w", "2", "-m", "10", "10.0.4.1"))
	var hops []string
	for _, m := range regexp.MustCompile(`(?m)^\s*\d+\s+(\S+)`).FindAllStringSubmatch(out, -1) {
		hops = append(hops, m[1])
	}
	if strings.Join(hops, " ") != strings.Join(want, " ") {
		t.Errorf("traceroute over the ATM core: %v, want %v\n%s", hops, want, out)
	}
	// The hosts' 1G links would let iperf3 offer far more than the core
	// takes, and the emulator would spend the machine's cores on frames r1
	// drops: it offers 140 Mbit/s, 8 % above the ceiling.
	udpCeiling := coreCeiling(t, lab, "UDP_STREAM", 1472)
	it := r.runIperf("h1", "h2", "10.0.4.1", 5440, 9, "-u", "-b", "140M", "-w", "4M", "-l", "1472")
	udp := steady(t, it.Received, 2)
	t.Logf("UDP 1472 over the MPLS ATM core (32 cells): intervals %s Mbit/s, median %.2f, ceiling %.2f (%+.2f%%)",
		mbps(it.Received), udp/1e6, udpCeiling/1e6, 100*(udp/udpCeiling-1))
	if !within(udp, udpCeiling, 0.01) {
		t.Errorf("UDP 1472 over the MPLS ATM core: %.2f Mbit/s, want %.2f within 1%%", udp/1e6, udpCeiling/1e6)
	}
	tcpCeiling := coreCeiling(t, lab, "TCP_STREAM", 1448)
	// A 1 MB window keeps the stream within r1's queue onto the core
	// (1000 PDUs, 1.5 MB): the link stays busy and no loss recovery dips
	// a second (unbounded, cubic overflowed it some 250 times in 9 s).
	ti := r.runIperf("h1", "h2", "10.0.4.1", 5441, 9, "-w", "1M")
	tcp := steady(t, ti.Received, 2)
	l := r.stats().Loop
	t.Logf("TCP over the MPLS ATM core: intervals %s Mbit/s, median %.2f, ceiling %.2f (%+.2f%%), %d retransmissions; release lateness p99 %v, max %v, emulator CPU %.0f%%",
		mbps(ti.Received), tcp/1e6, tcpCeiling/1e6, 100*(tcp/tcpCeiling-1), ti.Retransmit, l.Lateness.P99, l.Lateness.Max, 100*l.CPU)
	if !within(tcp, tcpCeiling, 0.01) {
		t.Errorf("TCP over the MPLS ATM core: %.2f Mbit/s, want %.2f within 1%%", tcp/1e6, tcpCeiling/1e6)
	}
	for _, p := range r.stats().Ports {
		if p.ATM != nil && p.ATM.CRCErrors+p.ATM.LengthErrors+p.ATM.HECDrops+p.ATM.EncapErrors+p.ATM.NotIP != 0 {
			t.Errorf("%s: ATM counters %+v", p.Port, p.ATM)
		}
	}
}

// tshark decodes the label stacks in a capture of the ATM
// links: on r2's link toward r3 both ways carry one label (the request
// swapped by r2, TTL 62; the reply swapped by r3); at each end of the
// core the penultimate router has popped in its own direction: the
// request reaches r4 bare and the reply leaves it labelled, the reply
// reaches r1 bare and the request leaves it labelled.
func TestATMCoreCapture(t *testing.T) {
	requireRoot(t, "tshark", "ping")
	r := up(t, atmCoreLab("mpls: true,"))
	r.exec("h1", "ping", "-c", "1", "-W", "2", "10.0.4.1")
	dir := t.TempDir()
	ends := []string{"r1:atm0", "r2:atm1", "r4:atm0"}
	var caps []*exec.Cmd
	for _, e := range ends {
		c := exec.Command(atmlab, "capture", r.name, e, "-w", filepath.Join(dir, strings.ReplaceAll(e, ":", "-")+".pcap"), "-c", "2")
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		caps = append(caps, c)
	}
	time.Sleep(500 * time.Millisecond)
	r.exec("h1", "ping", "-c", "1", "-t", "64", "10.0.4.1")
	for _, c := range caps {
		waitOrKill(t, c, 10*time.Second)
	}
	label := regexp.MustCompile(`MultiProtocol Label Switching Header, Label: (\d+), Exp: 0, S: 1, TTL: (\d+)`)
	decode := func(end, filter string) (labels []string, text string) {
		out, err := exec.Command("tshark", "-r", filepath.Join(dir, strings.ReplaceAll(end, ":", "-")+".pcap"), "-V", "-Y", filter).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "AAL5") || !strings.Contains(string(out), "Internet Control Message Protocol") {
			t.Errorf("tshark on %s (%s): %v\n%s", end, filter, err, out)
		}
		for _, m := range label.FindAllStringSubmatch(string(out), -1) {
			labels = append(labels, "TTL "+m[2])
		}
		return labels, string(out)
	}
	for _, tc := range []struct {
		end, filter string
		want        string // the label TTLs tshark shows, "" for a bare packet
	}{
		{"r1:atm0", "icmp.type == 8", "TTL 63"}, // r1 pushes
		{"r1:atm0", "icmp.type == 0", ""},       // r2 popped (PHP toward h1)
		{"r2:atm1", "icmp.type == 8", "TTL 62"}, // r2 swapped
		{"r2:atm1", "icmp.type == 0", "TTL 62"}, // r3 swapped
		{"r4:atm0", "icmp.type == 8", ""},       // r3 popped (PHP toward h2)
		{"r4:atm0", "icmp.type == 0", "TTL 63"}, // r4 pushes
	} {
		labels, text := decode(tc.end, tc.filter)
		if got := strings.Join(labels, " "); got != tc.want {
			t.Errorf("%s, %s: label stack %q, want %q\n%s", tc.end, tc.filter, got, tc.want, text)
		}
		if tc.want != "" && !strings.Contains(text, "0x8847") {
			t.Errorf("%s, %s: no LLC/SNAP PID 0x8847 in the decode\n%s", tc.end, tc.filter, text)
		}
	}
}
