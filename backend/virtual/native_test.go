package virtual

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/atmlab/atmlab/cells"
	"github.com/atmlab/atmlab/emulator/atm/phy"
	"github.com/atmlab/atmlab/harness/labrun"
	"github.com/atmlab/atmlab/harness/perf"
	"github.com/atmlab/atmlab/harness/vperf"
)

// nativeLab is the CERNET testbed's shape: two hosts on one ATM switch
// over OC-3c, with native PVCs.
func nativeLab(aal string) string {
	return fmt.Sprintf(`
name: vnat
topology:
  nodes:
    h1: {kind: host, ipv4: 10.0.0.1/24}
    h2: {kind: host, ipv4: 10.0.0.2/24}
    asx: {kind: atm-switch}
  links:
    - {endpoints: ["h1:eth0", "asx:p1"], atm: {phy: oc3, aal: %s, native: true}}
    - {endpoints: ["h2:eth0", "asx:p2"], atm: {phy: oc3, aal: %s, native: true}}
`, aal, aal)
}

// runNative runs a native test from h1 to h2 and returns its result and
// the cells the switch sent to h2.
func runNative(t *testing.T, aal string, spec perf.Spec) (perf.Result, uint64) {
	t.Helper()
	l := lab(t, nativeLab(aal))
	if err := labrun.NativeSpec(l, "h1", "h2", &spec); err != nil {
		t.Fatal(err)
	}
	v, err := Build(l, l.Seed)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	v.Sched.RunUntil(StartAt)
	res, err := vperf.Run(vperf.Test{Lab: v.Lab, From: "h1", To: "h2", Addr: netip.MustParseAddr("10.0.0.2"), Spec: spec})
	if err != nil {
		t.Fatal(err)
	}
	if res.Error != "" {
		t.Fatal(res.Error)
	}
	for _, r := range v.Net.Stats() {
		if r.Port == "asx:p2" {
			return res, r.TxFrames
		}
	}
	t.Fatal("no asx:p2")
	return res, 0
}

// An AAL5_STREAM (AAL34_STREAM) of the study's SDU sizes sends each SDU in
// exactly its own cells, n*48+40 octets in n+1 cells and one more octet in
// n+2 (AAL3/4: 44 octets a cell and 8 of header and trailer), loses
// nothing, and reads within 0.05 % of the cell ceiling: OC-3c's 353,207.5
// cells/s times the SDU's octets a cell.
func TestAALStreamReachesTheCellCeiling(t *testing.T) {
	oc3 := phy.PHYs["oc3"]
	for _, tt := range []struct {
		test  string
		aal   string
		sdu   int
		cells int
	}{
		{perf.AAL5Stream, "aal5", 952, 20},
		{perf.AAL5Stream, "aal5", 953, 21},
		{perf.AAL5Stream, "aal5", 9160, 191},
		{perf.AAL5Stream, "aal5", 9161, 192},
		{perf.AAL34Stream, "aal34", 9160, 209},
	} {
		t.Run(fmt.Sprintf("%s/%d", tt.test, tt.sdu), func(t *testing.T) {
			if got := cells.AAL(map[string]cells.AAL{"aal5": cells.AAL5, "aal34": cells.AAL34}[tt.aal]).Cells(tt.sdu); got != tt.cells {
				t.Fatalf("%s cells(%d) = %d, want %d", tt.aal, tt.sdu, got, tt.cells)
			}
			res, sent := runNative(t, tt.aal, perf.Spec{Test: tt.test, Duration: time.Second, Message: tt.sdu})
			if res.MessagesReceived != res.MessagesSent || res.Lost != 0 {
				t.Errorf("received %d of %d SDUs", res.MessagesReceived, res.MessagesSent)
			}
			if want := res.MessagesReceived * uint64(tt.cells); sent != want {
				t.Errorf("asx:p2 sent %d cells for %d SDUs, want %d (%d each)", sent, res.MessagesReceived, want, tt.cells)
			}
			ceiling := oc3.CellRate() * float64(8*tt.sdu) / float64(tt.cells)
			within(t, tt.test, res.ThroughputBps, ceiling, 0.0005)
		})
	}
}

// AAL5_RR: one SDU each way at a time. A 40-octet request and response
// take one cell each, nothing is lost, and the same lab and seed give the
// same transactions.
func TestAALRRIsOneCellEachWay(t *testing.T) {
	spec := perf.Spec{Test: perf.AAL5RR, Duration: 100 * time.Millisecond, Request: 40, Response: 40}
	res, sent := runNative(t, "aal5", spec)
	if again, _ := runNative(t, "aal5", spec); again.Transactions != res.Transactions || *again.Latency != *res.Latency {
		t.Errorf("a second run gave %d transactions (%+v), the first %d (%+v)", again.Transactions, *again.Latency, res.Transactions, *res.Latency)
	}
	if res.Transactions == 0 || res.Timeouts != 0 {
		t.Fatalf("transactions %d, timeouts %d", res.Transactions, res.Timeouts)
	}
	if sent != res.Transactions && sent != res.Transactions+1 {
		t.Errorf("asx:p2 sent %d cells for %d requests, want one each", sent, res.Transactions)
	}
	t.Logf("%d transactions, %.1f/s, latency %+v", res.Transactions, res.TransactionsPerSec, *res.Latency)
}

// A test names its AAL: AAL5_STREAM over links that run AAL3/4 is refused
// with the test to use instead, and a lab without native PVCs says how to
// give them.
func TestAALTestNeedsItsNativePVC(t *testing.T) {
	spec := perf.Spec{Test: perf.AAL5Stream}
	if err := labrun.NativeSpec(lab(t, nativeLab("aal34")), "h1", "h2", &spec); err == nil || !strings.Contains(err.Error(), "use AAL34_STREAM") {
		t.Errorf("AAL5_STREAM on aal34 links: %v, want a hint to AAL34_STREAM", err)
	}
	spec = perf.Spec{Test: perf.AAL5RR}
	if err := labrun.NativeSpec(lab(t, atmLab), "h1", "h2", &spec); err == nil || !strings.Contains(err.Error(), "native: true") {
		t.Errorf("AAL5_RR without native PVCs: %v, want a hint to native: true", err)
	}
}
