package virtual

import (
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/atmlab/atmlab/harness/perf"
	"github.com/atmlab/atmlab/harness/vperf"
)

// A host waits for netstack's TCP processor (the barrier) only when a TCP
// segment has entered its stack since the last wait: a UDP flood takes
// none on either host, and a TCP stream at most one a segment received.
func TestBarrierOnlyAfterTCPSegments(t *testing.T) {
	l := lab(t, fmt.Sprintf(etherLab, "100M"))
	for _, spec := range []perf.Spec{
		{Test: perf.UDPStream, Message: 1472, Duration: 100 * time.Millisecond},
		{Test: perf.TCPStream, Duration: 100 * time.Millisecond},
	} {
		v, err := Build(l, l.Seed)
		if err != nil {
			t.Fatal(err)
		}
		v.Sched.RunUntil(StartAt)
		res, err := vperf.Run(vperf.Test{Lab: v.Lab, From: "h1", To: "h2", Addr: netip.MustParseAddr(l.Node("h2").Address()), Spec: spec})
		if err != nil || res.Error != "" {
			t.Fatal(err, res.Error)
		}
		for _, name := range []string{"h1", "h2"} {
			h := v.Hosts[name]
			segs := h.Stack.Stats().TCP.ValidSegmentsReceived.Value()
			t.Logf("%s %s: %d barriers, %d TCP segments received, %d frames sent", spec.Test, name, h.Barriers, segs, h.TxFrames)
			if h.Barriers > segs || spec.Test == perf.UDPStream && h.Barriers != 0 || spec.Test == perf.TCPStream && h.Barriers == 0 {
				t.Errorf("%s %s: %d barriers for %d TCP segments received", spec.Test, name, h.Barriers, segs)
			}
		}
		v.Close()
	}
}
