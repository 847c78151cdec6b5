//go:build integration

package test

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/gopacket/pcapgo"

	"github.com/atmlab/atmlab/cells"
	"github.com/atmlab/atmlab/control"
	"github.com/atmlab/atmlab/emulator/atm"
	"github.com/atmlab/atmlab/harness/theory"
	"github.com/atmlab/atmlab/internal/labtest"
)

// Classical IP over ATM: two hosts on one OC-3c link (h1-h2, LLC/SNAP and
// AAL5) and two on another with AAL3/4 (h3-h4).
const clipLab = `
name: NAME
topology:
  nodes:
    h1: {kind: host, ipv4: 10.0.0.1/24, sysctls: {net.ipv4.tcp_congestion_control: cubic}}
    h2: {kind: host, ipv4: 10.0.0.2/24, sysctls: {net.ipv4.tcp_congestion_control: cubic}}
    h3: {kind: host, ipv4: 10.0.1.3/24}
    h4: {kind: host, ipv4: 10.0.1.4/24}
  links:
    - endpoints: ["h1:eth0", "h2:eth0"]
      atm: {phy: oc3, aal: aal5, encap: llc, vpi: 0, vci: 100}
    - endpoints: ["h3:eth0", "h4:eth0"]
      atm: {phy: oc3, aal: aal34, encap: llc}
`

// Three hosts through an atm-switch with automatic PVCs; h2's link loses
// cells at CLR.
const atmSwitchLab = `
name: NAME
topology:
  nodes:
    h1: {kind: host, ipv4: 10.0.0.1/24, sysctls: {net.ipv4.tcp_congestion_control: cubic}}
    h2: {kind: host, ipv4: 10.0.0.2/24, sysctls: {net.ipv4.tcp_congestion_control: cubic}}
    h3: {kind: host, ipv4: 10.0.0.3/24}
    atm1: {kind: atm-switch}
  links:
    - {endpoints: ["h1:eth0", "atm1:p1"], atm: {phy: oc3}}
    - {endpoints: ["h2:eth0", "atm1:p2"], atm: {phy: oc3}}
    - {endpoints: ["h3:eth0", "atm1:p3"], atm: {phy: oc3}, impair: {loss: CLR}}
`

// oc3 is the ceiling of a path on OC-3c (LLC/SNAP, MTU 9180).
func oc3(t *testing.T, aal atm.AAL, payload int, proto string) float64 {
	t.Helper()
	c, err := theory.ATMCeiling(atm.PHYs["oc3"], aal, cells.LLC, 9180, payload, proto)
	if err != nil {
		t.Fatal(err)
	}
	return c.Goodput
}

// udpSteady is the median per-second UDP goodput iperf3's receiver saw
// after a 2-second warm-up, sending size-byte datagrams for secs seconds.
// The receiver gets a 4 MB socket buffer (this machine kind's rmem_max):
// it shares two cores with the sender and the emulator (which at OC-3c
// handles a cell every 2.8 µs per hop), and with the default 208 KB, and
// now and then with 2 MB, it dropped small datagrams in its socket
// (UdpRcvbufErrors) although the emulator delivered every one.
func (r *running) udpSteady(cli, srv, addr string, port, secs, size int) (float64, iperf) {
	r.t.Helper()
	it := r.runIperf(cli, srv, addr, port, secs, "-u", "-b", "300M", "-w", "4M", "-l", fmt.Sprint(size))
	r.t.Logf("UDP %d %s -> %s: intervals %s Mbit/s, %d of %d lost", size, cli, srv, mbps(it.Received), it.Lost, it.Packets)
	return steady(r.t, it.Received, 2), it
}

// udpAt measures UDP goodput for secs seconds as udpSteady does and judges
// it against want within tol, saying beside it the emulator's garbage
// collections and its loop's stalls meanwhile (what stalled it: its CPU
// taken by another thread, the hypervisor, Go's runtime); a miss gives the
// release lateness so far too (a loop that fell behind shows there; a
// model that is wrong does not).
func (r *running) udpAt(what, cli, srv, addr string, port, secs, size int, want, tol float64) float64 {
	r.t.Helper()
	before := r.stats().Loop
	got, _ := r.udpSteady(cli, srv, addr, port, secs, size)
	after := r.stats().Loop
	loop := after.During(before)
	r.t.Logf("%s: %.2f Mbit/s, ceiling %.2f (%+.2f%%); the emulator's loop meanwhile: %s", what, got/1e6, want/1e6, 100*(got/want-1), loop)
	if !within(got, want, tol) {
		l := after.Lateness
		r.t.Errorf("%s: %.2f Mbit/s, want %.2f within %.0f%% (release lateness so far p99 %v, max %v; the loop meanwhile: %s)", what, got/1e6, want/1e6, 100*tol, l.P99, l.Max, loop)
	}
	return got
}

// On OC-3c with LLC/SNAP and AAL5, UDP goodput is within
// 1 % of the cell ceiling on both sides of a cell boundary (1444 fills 31
// cells, 1445 needs 32); TCP over MTU 9180 reaches 134.5 Mbit/s within 2 %;
// AAL3/4 carries 1444-byte datagrams in 34 cells instead of 31, and the
// AAL5/AAL3/4 ratio is within 1 % of theory. Each run is 6 s, its last 4 s
// judged by their median (quiet runs keep every second after the first
// within 0.1 % of the ceiling).
func TestATMGoodput(t *testing.T) {
	requireRoot(t, "iperf3")
	r := up(t, clipLab)
	r.exec("h1", "ping", "-c", "1", "-W", "2", "10.0.0.2")
	r.exec("h3", "ping", "-c", "1", "-W", "2", "10.0.1.4")
	if link := string(r.exec("h1", "ip", "-o", "link", "show", "eth0")); !strings.Contains(link, " mtu 9180 ") {
		t.Errorf("h1's MTU on an ATM link is not 9180 (RFC 2225): %s", link)
	}
	var aal5 float64
	for i, size := range []int{1445, 1444} {
		want := oc3(t, atm.AAL5, size, "udp")
		aal5 = r.udpAt(fmt.Sprintf("AAL5 UDP %d (%d cells)", size, atm.AAL5.Cells(size+36)), "h1", "h2", "10.0.0.2", 5300+i, 6, size, want, 0.01)
	}
	want34 := oc3(t, atm.AAL34, 1444, "udp")
	aal34 := r.udpAt(fmt.Sprintf("AAL3/4 UDP 1444 (%d cells)", atm.AAL34.Cells(1480)), "h3", "h4", "10.0.1.4", 5310, 6, 1444, want34, 0.01)
	ratio, theory := aal5/aal34, oc3(t, atm.AAL5, 1444, "udp")/want34
	t.Logf("AAL5/AAL3/4 at UDP 1444 = %.4f, theory %.4f (34/31 cells)", ratio, theory)
	if !within(ratio, theory, 0.01) {
		t.Errorf("AAL5/AAL3/4 = %.4f, theory %.4f", ratio, theory)
	}
	tcp := steady(t, r.runIperf("h1", "h2", "10.0.0.2", 5320, 6).Received, 2)
	t.Logf("TCP over MTU 9180: %.2f Mbit/s (ceiling with timestamps %.2f)", tcp/1e6, oc3(t, atm.AAL5, 9128, "tcp")/1e6)
	if !within(tcp, 134.5e6, 0.02) {
		t.Errorf("TCP over MTU 9180: %.2f Mbit/s, want 134.5 within 2%%", tcp/1e6)
	}
	st := r.stats()
	for _, p := range st.Ports {
		if p.ATM == nil || p.ATM.CRCErrors+p.ATM.LengthErrors+p.ATM.SeqErrors+p.ATM.HECDrops != 0 {
			t.Errorf("%s: ATM counters %+v", p.Port, p.ATM)
		}
	}
}

// Through an atm-switch the figures are the same; a cell loss
// ratio of 1e-3 loses 1 - (1-p)^cells of the PDUs (plus, since a lost last
// cell merges a PDU with the next, p(1-p)^cells more), each failing its CRC
// at reassembly and counted.
func TestATMSwitch(t *testing.T) {
	requireRoot(t, "iperf3")
	r := up(t, strings.ReplaceAll(atmSwitchLab, "CLR", "0.1%"))
	for _, ip := range []string{"10.0.0.2", "10.0.0.3"} {
		r.exec("h1", "ping", "-c", "1", "-W", "2", ip)
	}
	r.udpAt("UDP 1444 through the switch", "h1", "h2", "10.0.0.2", 5330, 6, 1444, oc3(t, atm.AAL5, 1444, "udp"), 0.01)
	tcp := steady(t, r.runIperf("h1", "h2", "10.0.0.2", 5331, 6).Received, 2)
	if !within(tcp, 134.5e6, 0.02) {
		t.Errorf("TCP through the switch: %.2f Mbit/s, want 134.5 within 2%%", tcp/1e6)
	}

	before := r.stats()
	_, it := r.udpSteady("h1", "h3", "10.0.0.3", 5332, 8, 1472)
	after := r.stats()
	const p = 1e-3
	c := float64(atm.AAL5.Cells(1472 + 36))
	formula := 1 - math.Pow(1-p, c)
	merged := p * math.Pow(1-p, c)
	lost := float64(it.Lost) / float64(it.Packets)
	sigma := math.Sqrt(formula * (1 - formula) / float64(it.Packets))
	t.Logf("CLR %g, %v cells a PDU: %d of %d datagrams lost = %.4f; 1-(1-p)^c = %.4f, + merged last cells %.4f, σ %.4f",
		p, c, it.Lost, it.Packets, lost, formula, formula+merged, sigma)
	if lost < formula-4*sigma || lost > formula+merged+4*sigma {
		t.Errorf("PDU loss %.4f, want %.4f..%.4f (± 4σ)", lost, formula, formula+merged)
	}
	failed := func(st control.Stats) (n uint64) {
		for _, row := range st.Ports {
			if row.Port == "h3:eth0" {
				n = row.ATM.CRCErrors + row.ATM.LengthErrors
			}
		}
		return n
	}
	cellsLost := func(st control.Stats) (n uint64) {
		for _, row := range st.Ports {
			if row.Port == "atm1:p3" {
				n = row.ATM.LostCells
			}
		}
		return n
	}
	crc, lostCells := failed(after)-failed(before), cellsLost(after)-cellsLost(before)
	t.Logf("cells lost on atm1:p3 -> h3: %d; PDUs failing CRC/length at h3: %d", lostCells, crc)
	// Each lost cell spoils one reassembly (two lost in one PDU spoil it once).
	if crc == 0 || crc > lostCells || float64(crc) < 0.9*float64(lostCells) {
		t.Errorf("%d cells lost but %d PDUs counted as failing their CRC", lostCells, crc)
	}
	out, err := exec.Command(atmlab, "stats", r.name).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "CRC errors") || !strings.Contains(string(out), "ATMARP replies") {
		t.Errorf("atmlab stats shows no ATM counters: %v\n%s", err, out)
	}
}

// tshark decodes a capture of an ATM link: AAL5 PDUs whose
// CRCs it finds correct, with IP inside; one corrupted octet makes one
// incorrect. The cell capture holds every cell.
func TestATMCapture(t *testing.T) {
	requireRoot(t, "ping", "tshark")
	r := up(t, clipLab)
	r.exec("h1", "ping", "-c", "1", "-W", "2", "10.0.0.2")
	dir := t.TempDir()
	pdus, cellFile := filepath.Join(dir, "pdus.pcap"), filepath.Join(dir, "cells.pcap")
	capPDU := exec.Command(atmlab, "capture", r.name, "h1:eth0", "-w", pdus, "-c", "4")
	capCells := exec.Command(atmlab, "capture", r.name, "h2:eth0", "--cells", "-w", cellFile, "-c", "44")
	for _, c := range []*exec.Cmd{capPDU, capCells} {
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
	}
	captureAttached(t, pdus)
	captureAttached(t, cellFile)
	r.exec("h1", "ping", "-c", "2", "-i", "0.2", "-s", "1000", "10.0.0.2") // 1036-octet SDUs: 22 cells
	waitOrKill(t, capPDU, 10*time.Second)
	waitOrKill(t, capCells, 10*time.Second)

	out, err := exec.Command("tshark", "-r", pdus, "-V").CombinedOutput()
	text := string(out)
	if err != nil || strings.Count(text, "AAL5 CRC:") != 4 || strings.Count(text, "(correct)") < 4 ||
		strings.Count(text, "Internet Protocol Version 4, Src: 10.0.0.") != 4 || !strings.Contains(text, "VCI: 100") {
		t.Fatalf("tshark on the PDU capture: %v\n%s", err, text)
	}
	// Flip one octet of the first PDU's IP payload: its CRC must fail.
	raw, _ := os.ReadFile(pdus)
	raw[24+16+16+20+100] ^= 0x01 // file header, record header, ERF header + ATM header, into the PDU
	bad := filepath.Join(dir, "bad.pcap")
	os.WriteFile(bad, raw, 0o644)
	out, _ = exec.Command("tshark", "-r", bad, "-V").CombinedOutput()
	if strings.Count(string(out), "(incorrect") != 1 {
		t.Errorf("tshark on a corrupted PDU: want one incorrect CRC\n%s", out)
	}

	f, err := os.Open(cellFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd, err := pcapgo.NewReader(f)
	if err != nil || rd.LinkType() != atm.LinkTypeERF {
		t.Fatalf("cell capture: %v, link type %v", err, rd.LinkType())
	}
	n, last := 0, 0
	for {
		data, _, err := rd.ReadPacketData()
		if err != nil {
			break
		}
		n++
		if len(data) != 16+4+48 || data[8] != 3 {
			t.Fatalf("cell record %d: %d octets, type %d", n, len(data), data[8])
		}
		if data[16+3]&0x02 != 0 {
			last++
		}
	}
	if n != 44 || last != 2 {
		t.Errorf("cell capture: %d cells with %d PDU ends, want 44 and 2", n, last)
	}
	out, err = exec.Command("tshark", "-r", cellFile).CombinedOutput()
	if err != nil || strings.Count(string(out), "ATM") < 44 {
		t.Errorf("tshark on the cell capture: %v\n%s", err, out)
	}
}

// A sweep across three cell boundaries (UDP 1348/1349,
// 1396/1397, 1444/1445 over LLC/SNAP) steps down exactly where theory says,
// by the depth it says, and the report plots it beside the theory line.
// Each size runs three times and the median run counts (a run above the
// ceiling fails on its own): with the host's token bucket catching up
// after a late timer, the three runs of a size read within 0.04 % of each
// other and 0.11-0.15 % above the ceiling (netperf's figure divides by the
// sender's time what the receiver still got after it).
func TestATMSawtoothSweep(t *testing.T) {
	longOnly(t, "TestATMSmallSizes measures both sides of the 484/485 boundary within 1 %, TestSawtoothReport the quick sweep, harness/report's TestTheoryLine the plot")
	requireRoot(t)
	out, recs := labRun(t, labtest.Lab("two-hosts-atm", "NAME", `experiments:
  - name: sawtooth
    from: h1
    to: h2
    tests: [UDP_STREAM]
    sizes: [1300, 1348, 1349, 1396, 1397, 1444, 1445]
    repetitions: 3
    duration: 3s
`))
	if len(recs) != 21 {
		t.Fatalf("%d records, want 21", len(recs))
	}
	runs := map[int][]float64{}
	for _, rec := range recs {
		want := oc3(t, atm.AAL5, rec.Size, "udp")
		got := rec.Result.ThroughputBps
		t.Logf("UDP %d #%d: %.2f Mbit/s, ceiling %.2f (%d cells); steal %.1f %%, %d retakes", rec.Size, rec.Rep, got/1e6, want/1e6, atm.AAL5.Cells(rec.Size+36), 100*rec.Steal, rec.StealRetakes)
		if rec.Error != "" || rec.Ceiling != want || got > want*1.01 {
			t.Errorf("UDP %d: %.2f Mbit/s, ceiling %.2f (record says %.2f), error %q", rec.Size, got/1e6, want/1e6, rec.Ceiling/1e6, rec.Error)
		}
		if rec.Steal > quietSteal {
			got = math.NaN() // stolen: left out of the median, as figure leaves it out
		}
		runs[rec.Size] = append(runs[rec.Size], got)
	}
	by := map[int]float64{}
	for size, v := range runs {
		by[size] = median(t, v)
		if want := oc3(t, atm.AAL5, size, "udp"); !within(by[size], want, 0.01) {
			t.Errorf("UDP %d: median of three %.2f Mbit/s, want %.2f within 1%%", size, by[size]/1e6, want/1e6)
		}
	}
	for _, s := range []int{1348, 1396, 1444} {
		drop, theory := 1-by[s+1]/by[s], 1-oc3(t, atm.AAL5, s+1, "udp")/oc3(t, atm.AAL5, s, "udp")
		if math.Abs(drop-theory) > 0.01 {
			t.Errorf("step %d -> %d: goodput falls %.2f%%, theory %.2f%%", s, s+1, 100*drop, 100*theory)
		}
	}
	for _, f := range []string{"throughput.png", "throughput.svg", "report.md"} {
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s missing: %v", f, err)
		}
	}
	svg, _ := os.ReadFile(filepath.Join(out, "throughput.svg"))
	if !strings.Contains(string(svg), "stroke-dasharray") {
		t.Error("the throughput plot has no dashed theory line")
	}
}

// Through an atm-switch on OC-3c, small UDP datagrams are
// within 1 % of the cell ceiling on both sides of cell boundaries, for AAL5
// and AAL3/4 (LLC/SNAP): where the cells of one VC have their output to
// themselves, a PDU crosses each hop as one train (one event, not one per
// cell). CI runs the boundary at 484/485 B (29-32 k packets/s), on both
// sides for both AALs; below it the hosts' and the TAPs' frame rate leaves
// under 1 % of margin on a busy machine (244 B read -0.36 % in one run,
// -1.68 % in another; 340/341 B -0.93/-0.97 % after a retry), and those
// sizes are `make bench` rows and the sweep in docs/validation.md. Each is measured
// once (udpAt), not again on a miss: most misses in the sweeps were the
// receiver's socket overflowing, which its 4 MB buffer (udpSteady)
// removed (0 of 128 points below 0.99 in four sweeps).
func TestATMSmallSizes(t *testing.T) {
	requireRoot(t, "iperf3")
	for _, tc := range []struct {
		aal   atm.AAL
		sizes []int
	}{
		// AAL5: n*48-44 octets of UDP fill n cells (LLC/SNAP, IPv4, UDP).
		{atm.AAL5, []int{484, 485}},
		// AAL3/4: n*44-44.
		{atm.AAL34, []int{484, 485}},
	} {
		r := up(t, strings.ReplaceAll(smallLab, "AAL", tc.aal.String()))
		r.exec("h1", "ping", "-c", "1", "-W", "2", "10.0.0.2")
		for i, size := range tc.sizes {
			what := fmt.Sprintf("%v UDP %d (%d cells)", tc.aal, size, tc.aal.Cells(size+36))
			r.udpAt(what, "h1", "h2", "10.0.0.2", 5400+i, 5, size, oc3(t, tc.aal, size, "udp"), 0.01)
		}
		r.stop()
	}
}

// Two hosts through an atm-switch on OC-3c with the AAL given.
var smallLab = labtest.Set(labtest.Lab("two-hosts-atm-switch", "NAME"), "topology.links[0].atm.aal", "AAL", "topology.links[1].atm.aal", "AAL")
