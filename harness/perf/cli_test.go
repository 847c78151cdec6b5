package perf

import (
	"strings"
	"testing"
	"time"
)

// netperf's -l, -r, -I and -i read as netperf's, and a bad one names
// its flag and how to write it.
func TestNetperfFlagsParse(t *testing.T) {
	if d, err := ParseLength("1.5"); err != nil || d != 1500*time.Millisecond {
		t.Errorf("-l 1.5: %v %v", d, err)
	}
	if d, err := ParseLength("250ms"); err != nil || d != 250*time.Millisecond {
		t.Errorf("-l 250ms: %v %v", d, err)
	}
	if _, err := ParseLength("0"); err == nil || !strings.HasPrefix(err.Error(), `-l "0"`) {
		t.Errorf("-l 0: %v", err)
	}
	if req, resp, err := ParseRR("128,16384"); err != nil || req != 128 || resp != 16384 {
		t.Errorf("-r 128,16384: %d %d %v", req, resp, err)
	}
	if req, resp, err := ParseRR("64"); err != nil || req != 64 || resp != 64 {
		t.Errorf("-r 64: %d %d %v", req, resp, err)
	}
	if _, _, err := ParseRR("a,b"); err == nil || !strings.HasPrefix(err.Error(), `-r "a,b"`) {
		t.Errorf("-r a,b: %v", err)
	}
	if c, err := ParseConfidence("95,10", ""); err != nil || c.Level != 95 || c.Width != 0.1 || c.Max != 10 || c.Min != 3 {
		t.Errorf("-I 95,10: %+v %v", c, err)
	}
	if _, err := ParseConfidence("", "10"); err == nil || !strings.HasPrefix(err.Error(), `--iterations "10"`) {
		t.Errorf("--iterations 10: %v", err)
	}
}

// A result's CSV is a header and one row; its words name the test.
func TestWriteResultAsCSVAndWords(t *testing.T) {
	r := Result{Test: TCPRR, Host: "10.0.0.2", Elapsed: 2, TransactionsPerSec: 1234.5, Latency: &LatencySummary{P50: 10, P90: 20, P99: 30, Max: 40}}
	r.Spec.Request, r.Spec.Response = 1, 1
	var b strings.Builder
	if err := WriteResult(&b, "csv", r); err != nil {
		t.Fatal(err)
	}
	want := "test,host,elapsed_s,throughput_bps,send_bps,transactions_per_sec,latency_p50_us,latency_p90_us,latency_p99_us,latency_max_us,lost,local_cpu,remote_cpu,error\n" +
		"TCP_RR,10.0.0.2,2,0,0,1234.5,10,20,30,40,0,0,0,\n"
	if b.String() != want {
		t.Fatalf("csv:\n%s\nwant:\n%s", b.String(), want)
	}
	b.Reset()
	WriteResult(&b, "table", r)
	if !strings.HasPrefix(b.String(), "TCP_RR to 10.0.0.2, 2.00 s, 1-byte requests, 1-byte responses\n  1234.5 transactions/s") {
		t.Fatalf("words:\n%s", b.String())
	}
}
