package labrun

import (
	"math"
	"testing"

	"github.com/atmlab/atmlab/harness/perf"
)

// netperf's documented UDP_STREAM example (docs/reference.md §8): the
// receive line, not the send line, is the figure.
const netperfUDP = `UDP UNIDIRECTIONAL SEND TEST from 0.0.0.0 (0.0.0.0) port 0 AF_INET to 10.0.0.2 () port 0 AF_INET
Socket  Message  Elapsed      Messages
Size    Size     Time         Okay Errors   Throughput
bytes   bytes    secs            #      #   10^6bits/sec

124928   32768   10.00      105672      0    2770.20
135168           10.00      104844           2748.50
`

const netperfRR = `TCP REQUEST/RESPONSE TEST from 0.0.0.0 (0.0.0.0) port 0 AF_INET to 10.0.0.2 () port 0 AF_INET
Local /Remote
Socket Size   Request  Resp.   Elapsed  Trans.
Send   Recv   Size     Size    Time     Rate
bytes  Bytes  bytes    bytes   secs.    per sec

16384  87380  1        1       10.00    27867.71
16384  87380
`

const netperfTCPMiB = `TCP STREAM TEST
Recv   Send    Send
Socket Socket  Message  Elapsed
Size   Size    Size     Time     Throughput
bytes  bytes   bytes    secs.    MBytes/sec

 87380  16384  65535    10.00      11.41
`

func TestFromNetperf(t *testing.T) {
	for _, tc := range []struct {
		name, text, test string
		want             float64
	}{
		{"UDP receive line", netperfUDP, perf.UDPStream, 2748.50e6},
		{"TCP_RR rate", netperfRR, perf.TCPRR, 27867.71},
		{"-f M is 2^20 bytes/s", netperfTCPMiB, perf.TCPStream, 11.41 * 8 * (1 << 20)},
	} {
		got, err := fromNetperf(tc.text, tc.test)
		if err != nil || math.Abs(got-tc.want) > 1e-6*tc.want {
			t.Errorf("%s: %v, %v; want %v", tc.name, got, err, tc.want)
		}
	}
	if _, err := fromNetperf("nothing here", perf.TCPStream); err == nil {
		t.Error("garbage accepted")
	}
}

func TestFromIperf3(t *testing.T) {
	got, err := fromIperf3([]byte(`{"end": {"sum_sent": {"bits_per_second": 95e6}, "sum_received": {"bits_per_second": 94.1e6}}}`))
	if err != nil || got != 94.1e6 {
		t.Fatalf("TCP: %v %v", got, err)
	}
	got, err = fromIperf3([]byte(`{"end": {"sum": {"bits_per_second": 95.7e6}}}`))
	if err != nil || got != 95.7e6 {
		t.Fatalf("UDP: %v %v", got, err)
	}
	if _, err := fromIperf3([]byte(`{}`)); err == nil {
		t.Fatal("empty report accepted")
	}
}
