//go:build integration

package test

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/atmlab/atmlab/cells"
)

// Two hosts on an ATM switch over OC-3c with native AAL PVCs beside
// Classical IP's (h1 0/101 to h2, h2 0/101 to h1):
//
//	h1 --OC-3c-- asx --OC-3c-- h2
const nativeLab = `
name: NAME
topology:
  nodes:
    h1: {kind: host, ipv4: 10.0.0.1/24}
    h2: {kind: host, ipv4: 10.0.0.2/24}
    asx: {kind: atm-switch}
  links:
    - {endpoints: ["h1:eth0", "asx:p1"], atm: {phy: oc3, native: true}}
    - {endpoints: ["h2:eth0", "asx:p2"], atm: {phy: oc3, native: true}}
`

// nativeCellRate is OC-3c's cells a second.
const nativeCellRate = 149.76e6 / 424

// nativeStream runs a native stream test of sdu-octet SDUs from h1 to h2
// on their 0/101 PVC with 4 MiB socket buffers, and checks it reads within
// 1 % of the cell ceiling (OC-3c's cells a second, the SDU's octets over
// its cells) with nothing lost, nothing dropped at the receiver's socket.
func nativeStream(t *testing.T, r *running, test string, sdu, cells int) {
	t.Helper()
	var out []byte
	var err error
	for range 25 { // until the server listens
		out, err = r.try("h1", atmlab, "perf", "client", "-H", "10.0.0.2", "-t", test, "-l", "3",
			"-m", strconv.Itoa(sdu), "-s", "4194304", "-S", "4194304", "--vc", "eth0:0/101", "--peer-vc", "eth0:0/101", "-o", "json")
		if err == nil || !strings.Contains(string(out), "cannot reach") {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	var res struct {
		Throughput    float64 `json:"throughput_bps"`
		Sent          uint64  `json:"messages_sent"`
		Received      uint64  `json:"messages_received"`
		Lost          uint64  `json:"lost"`
		ReceiverDrops uint64  `json:"receiver_drops"`
	}
	if err != nil || json.Unmarshal(out, &res) != nil {
		t.Fatalf("%s %d: %v\n%s", test, sdu, err, out)
	}
	ceil := nativeCellRate * float64(8*sdu) / float64(cells)
	t.Logf("%s %d octets: %.3f Mbit/s, ceiling %.3f (%+.3f %%), %d of %d SDUs, %d dropped at the receiver's socket",
		test, sdu, res.Throughput/1e6, ceil/1e6, 100*(res.Throughput/ceil-1), res.Received, res.Sent, res.ReceiverDrops)
	if !within(res.Throughput, ceil, 0.01) || res.Lost != 0 || res.ReceiverDrops != 0 {
		t.Errorf("%s %d: %.3f Mbit/s, want the ceiling %.3f within 1 %%, none lost (lost %d, %d at the receiver's socket)",
			test, sdu, res.Throughput/1e6, ceil/1e6, res.Lost, res.ReceiverDrops)
	}
}

// In real time, atmlab perf's AAL5_STREAM sends raw SDUs from h1's
// namespace on its native VC (a packet socket, EtherType 0x88B5): at
// n*48+40 and n*48+41 octets, from 952 (17,700 SDUs a second) to 9161,
// it reads within 1 % of the cell ceiling, loses nothing, and AAL5_RR
// gets its answers. tshark decodes a capture of the stream's link as
// AAL5 PDUs on VC 0/101 with good CRCs, no IP inside.
func TestNativeAALStreamRealTime(t *testing.T) {
	requireRoot(t, "tshark")
	r := up(t, nativeLab)
	r.start("h2", atmlab, "perf", "server")
	time.Sleep(300 * time.Millisecond)
	for _, tt := range []struct{ sdu, cells int }{{952, 20}, {953, 21}, {4840, 101}, {4841, 102}, {9160, 191}, {9161, 192}} {
		nativeStream(t, r, "AAL5_STREAM", tt.sdu, tt.cells)
	}
	out := r.exec("h1", atmlab, "perf", "client", "-H", "10.0.0.2", "-t", "AAL5_RR", "-l", "1", "-r", "40,40",
		"--vc", "eth0:0/101", "--peer-vc", "eth0:0/101", "-o", "json")
	var rr struct {
		Transactions uint64 `json:"transactions"`
	}
	if json.Unmarshal(out, &rr) != nil || rr.Transactions == 0 {
		t.Errorf("AAL5_RR: %s", out)
	}

	pcap := filepath.Join(t.TempDir(), "api.pcap")
	capture := exec.Command(atmlab, "capture", r.name, "h2:eth0", "-w", pcap, "-c", "100")
	if err := capture.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	r.exec("h1", atmlab, "perf", "client", "-H", "10.0.0.2", "-t", "AAL5_STREAM", "-l", "0.5", "-m", "9160",
		"--vc", "eth0:0/101", "--peer-vc", "eth0:0/101")
	waitOrKill(t, capture, 10*time.Second)
	// Each record of the stream: AAL5, VC 0/101, the SDU alone in 191
	// cells, its CRC checked. (Wireshark guesses what an ERF AAL5 record
	// carries from its first octets: a raw SDU it reads as LANE.)
	dec, err := exec.Command("tshark", "-r", pcap, "-V").CombinedOutput()
	text := string(dec)
	pdus := len(regexp.MustCompile(`VCI: 101\s+Cells: 191\s+AAL5 UU: 0x00\s+AAL5 CPI: 0x00\s+AAL5 len: 9160\s+AAL5 CRC: 0x[0-9a-f]+ \(correct\)`).FindAllStringIndex(text, -1))
	if err != nil || pdus < 20 || strings.Contains(text, "(incorrect") || strings.Contains(text, "Malformed") {
		t.Errorf("tshark on a capture of the API stream: %v, %d PDUs of 9160 octets on 0/101 in 191 cells\n%.3000s", err, pdus, text)
	}
	if i := strings.Index(text, "VCI: 101"); i >= 0 {
		t.Logf("tshark -V, a PDU of the stream:\n%s", text[max(i-400, 0):min(i+300, len(text))])
	}
}

// In real time over AAL3/4 links, AAL34_STREAM's SDUs take AAL3/4's
// cells, 44 octets of each, after 8 octets of header and trailer and the
// SDU padded to 4: 9144 octets fill 208 cells, 9145 take a 209th. Each
// reads within 1 % of its ceiling with nothing lost (the host's one
// bucket on an AAL3/4 interface bills 9144 a cell more than it takes,
// 0.48 % below that ceiling), and AAL34_RR gets its answers.
func TestNativeAAL34StreamRealTime(t *testing.T) {
	requireRoot(t)
	r := up(t, strings.ReplaceAll(nativeLab, "native: true", "aal: aal34, native: true"))
	r.start("h2", atmlab, "perf", "server")
	time.Sleep(300 * time.Millisecond)
	for _, tt := range []struct{ sdu, cells int }{{9144, 208}, {9145, 209}} {
		if c := cells.AAL34Cells(tt.sdu); c != tt.cells {
			t.Fatalf("%d octets take %d AAL3/4 cells, not %d", tt.sdu, c, tt.cells)
		}
		nativeStream(t, r, "AAL34_STREAM", tt.sdu, tt.cells)
	}
	out := r.exec("h1", atmlab, "perf", "client", "-H", "10.0.0.2", "-t", "AAL34_RR", "-l", "1", "-r", "40,40",
		"--vc", "eth0:0/101", "--peer-vc", "eth0:0/101", "-o", "json")
	var rr struct {
		Transactions uint64 `json:"transactions"`
	}
	if json.Unmarshal(out, &rr) != nil || rr.Transactions == 0 {
		t.Errorf("AAL34_RR: %s", out)
	}
}
