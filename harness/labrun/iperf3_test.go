package labrun

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/atmlab/atmlab/harness/perf"
)

// iperf3Report is iperf3 -J --get-server-output's report of a UDP test
// whose receiver counted bytes in each of its windows [start, end).
func iperf3Report(windows [][3]float64) []byte {
	var ivs []string
	for _, w := range windows {
		ivs = append(ivs, fmt.Sprintf(`{"sum":{"start":%g,"end":%g,"seconds":%g,"bytes":%g,"bits_per_second":%g}}`,
			w[0], w[1], w[1]-w[0], w[2], 8*w[2]/(w[1]-w[0])))
	}
	return []byte(`{"end":{"sum_sent":{"bytes":73687500,"bits_per_second":196500000,"seconds":3.0},` +
		`"sum_received":{"bytes":1,"bits_per_second":2},"sum":{"packets":50460,"lost_packets":10493,"jitter_ms":0.1}},` +
		`"server_output_json":{"intervals":[` + strings.Join(ivs, ",") + `]}}`)
}

// A UDP point's figure is the mean of the receiver's full windows: not the
// last one, which the end-of-test message over the control connection
// ends 0.2 s after the data (a resent segment), nor a window that spans
// the whole run (as with an experiment's interval: 10s in a 3 s quick
// run, which read 145.4 against 154.9 Mbit/s). The intervals recorded are
// the windows summed to the experiment's interval.
func TestFoldIperf3(t *testing.T) {
	full := 154.8e6 / 8 // bytes a second at the L2 switch's pace
	windows := [][3]float64{{0, 1.0002, full * 1.0002}, {1.0002, 2.0001, full * 0.9999}, {2.0001, 3.0004, full * 1.0003}, {3.0004, 3.2070, 0.004 * full}}
	res, err := foldIperf3(iperf3Report(windows), nil, perf.UDPStream, 0, time.Second, perf.Result{})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(res.ThroughputBps-154.8e6) > 1e3 || res.SendBps != 196.5e6 || res.Lost != 10493 || res.MessagesReceived != 50460-10493 || res.Intervals != nil {
		t.Errorf("UDP: %+v; want 154.8 Mbit/s from the three full windows, sent 196.5, 10493 lost, no intervals", res)
	}
	res, _ = foldIperf3(iperf3Report(windows), nil, perf.UDPStream, 2*time.Second, time.Second, perf.Result{})
	want := []perf.Interval{{Start: 0, End: 2.0001, Bps: 154.8e6}, {Start: 2.0001, End: 3.207, Bps: 8 * 1.0043 * full / 1.2069}}
	if len(res.Intervals) != 2 {
		t.Fatalf("intervals of 2 s: %+v, want %+v", res.Intervals, want)
	}
	for i, iv := range res.Intervals {
		if iv.Start != want[i].Start || iv.End != want[i].End || math.Abs(iv.Bps-want[i].Bps) > 1e3 {
			t.Errorf("interval %d: %+v, want %+v", i, iv, want[i])
		}
	}
	// With a 0.5 s interval the receiver reports every 0.5 s: those are the windows.
	half := [][3]float64{{0, 0.5, full / 2}, {0.5, 1, full / 2}, {1, 1.5, full / 2}, {1.5, 1.6, 0.01}}
	if res, _ = foldIperf3(iperf3Report(half), nil, perf.UDPStream, 500*time.Millisecond, 500*time.Millisecond, perf.Result{}); math.Abs(res.ThroughputBps-154.8e6) > 1e3 || len(res.Intervals) != 4 {
		t.Errorf("half-second windows: %.0f bit/s, %d intervals; want 154.8 Mbit/s, 4", res.ThroughputBps, len(res.Intervals))
	}
	if res, _ = foldIperf3(iperf3Report(windows), nil, perf.TCPStream, 0, time.Second, perf.Result{}); res.ThroughputBps != 2 || res.BytesReceived != 1 {
		t.Errorf("TCP: %+v; want end.sum_received's", res)
	}
	if _, err := foldIperf3([]byte("iperf3: error - unable to connect"), fmt.Errorf("exit status 1"), perf.UDPStream, 0, time.Second, perf.Result{}); err == nil || !strings.Contains(err.Error(), "unable to connect") {
		t.Errorf("a report that is not JSON: %v, want the tool's words", err)
	}
}

// A client that ran before its server listened is not served, whatever
// its exit status: iperf3 3.12 -J exits 0 with the error in its JSON (the
// output below is its own), and such a point failed at once when the
// runner took the exit status for the answer.
func TestIperf3Served(t *testing.T) {
	refused := []byte("{\n\t\"start\":\t{\n\t\t\"connected\":\t[],\n\t\t\"version\":\t\"iperf 3.12\"\n\t},\n\t\"intervals\":\t[],\n\t\"end\":\t{\n\t},\n\t\"error\":\t\"unable to connect to server: Connection refused\"\n}\n")
	if iperf3Served(refused, nil) {
		t.Errorf("a refused client with exit status 0 counted as served")
	}
	if iperf3Served(refused, errors.New("exit status 1")) {
		t.Errorf("a refused client with exit status 1 counted as served")
	}
	if !iperf3Served([]byte(`{"start":{"connected":[{"socket":5}]},"end":{}}`), nil) {
		t.Errorf("a served client counted as refused")
	}
}
