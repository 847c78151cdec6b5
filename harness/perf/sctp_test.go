package perf

import (
	"bytes"
	"encoding/json"
	"net/netip"
	"strings"
	"testing"
	"time"
)

// TestSCTPTestsAreNetperfsNames: SCTP_STREAM and SCTP_RR are tests the
// tool takes, with stream and request/response defaults.
func TestSCTPTestsAreNetperfsNames(t *testing.T) {
	for _, test := range []string{"sctp_stream", "SCTP_RR"} {
		s := Spec{Test: test}
		if err := s.Validate(); err != nil {
			t.Fatalf("%s: %v", test, err)
		}
		if !IsSCTP(s.Test) || s.Message != 16384 || s.Request != 1 {
			t.Errorf("%s: %+v", test, s)
		}
	}
}

// TestResultNamesTheSCTPImplementation: the result's JSON carries the SCTP
// stack as "implementation", and the words say it.
func TestResultNamesTheSCTPImplementation(t *testing.T) {
	r := Result{Test: SCTPStream, Implementation: "kernel", Spec: Spec{Test: SCTPStream, Message: 16384}}
	b, _ := json.Marshal(r)
	var m map[string]any
	json.Unmarshal(b, &m)
	if m["implementation"] != "kernel" {
		t.Errorf("JSON %s: no implementation", b)
	}
	var w bytes.Buffer
	WriteResult(&w, "", r)
	if !strings.Contains(w.String(), "SCTP stack: kernel") {
		t.Errorf("words:\n%s", w.String())
	}
}

// TestSCTPOverLoopback runs both SCTP tests against a server on loopback
// over this host's stack (pion over raw IP where the kernel lacks SCTP;
// raw sockets need CAP_NET_RAW, so the test skips without it).
func TestSCTPOverLoopback(t *testing.T) {
	if _, err := openRawIP(netip.MustParseAddr("127.0.0.1"), 0); err != nil && !kernelHasSCTP() {
		t.Skip(err)
	}
	port := startServer(t)
	res := run(t, port, Spec{Test: SCTPStream, Duration: 300 * time.Millisecond})
	t.Logf("%s: %.1f Mbit/s, %d bytes, %s", res.Test, res.ThroughputBps/1e6, res.BytesReceived, res.Implementation)
	if res.BytesReceived == 0 || res.BytesReceived != res.BytesSent || res.Implementation != sctpStackHere().Name() {
		t.Errorf("SCTP_STREAM: sent %d, received %d, implementation %q", res.BytesSent, res.BytesReceived, res.Implementation)
	}
	if res.Implementation == PionImplementation && (res.LocalSockBuf.Recv != sctpDefaultBuf || res.RemoteSockBuf.Recv != sctpDefaultBuf) {
		t.Errorf("pion's buffers without -s/-S: local %+v, remote %+v, want %d", res.LocalSockBuf, res.RemoteSockBuf, sctpDefaultBuf)
	}
	res = run(t, port, Spec{Test: SCTPRR, Duration: 300 * time.Millisecond, Request: 64, Response: 20000})
	t.Logf("%s: %.0f transactions/s, p50 %.0f µs", res.Test, res.TransactionsPerSec, res.Latency.P50)
	if res.Transactions < 10 {
		t.Errorf("SCTP_RR: %d transactions", res.Transactions)
	}
}
