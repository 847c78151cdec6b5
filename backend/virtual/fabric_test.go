package virtual

import (
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/atmlab/atmlab/harness/perf"
	"github.com/atmlab/atmlab/harness/vperf"
)

// Twenty TCP streams across a spine, ten into each leaf's full 1G uplink,
// start from Linux's 128 KiB receive buffer and grow their windows by
// auto-tuning: they fill the uplinks without losing a segment. With
// netstack's 1 MiB default every stream opened a window of about 700
// segments at once; slow start overshot the uplinks' queues by hundreds of
// segments, 5,438 segments were resent in 0.3 s, and SACK recovery over
// windows that large (netstack recounts the window on every ACK) took
// most of the CPU of large labs.
func TestFullUplinkStreamsLoseNothing(t *testing.T) {
	const hosts, leaves, per = 40, 2, 20
	l := lab(t, fabricLab(hosts, leaves, ""))
	v, err := Build(l, l.Seed)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	v.Sched.RunUntil(StartAt)
	total := crossSpine(t, v, leaves, per, 300*time.Millisecond)
	var resent, timeouts uint64
	for _, h := range v.Lab.Hosts {
		resent += h.Stack.Stats().TCP.Retransmits.Value()
		timeouts += h.Stack.Stats().TCP.Timeouts.Value()
	}
	t.Logf("%.1f Mbit/s in all, %d segments resent, %d timeouts", total/1e6, resent, timeouts)
	if resent != 0 || timeouts != 0 {
		t.Errorf("%d segments resent, %d timeouts; want none", resent, timeouts)
	}
}

// crossSpine runs a TCP stream of d from each of the first half of every
// leaf's per hosts to the second half of the next leaf's, all at once
// across the spine, and returns their throughput summed.
func crossSpine(tb testing.TB, v *Lab, leaves, per int, d time.Duration) float64 {
	var runs []*vperf.Running
	for lf := 1; lf <= leaves; lf++ {
		for i := 1; i <= per/2; i++ {
			to := lf%leaves + 1
			r, err := vperf.Start(vperf.Test{Lab: v.Lab, From: fmt.Sprintf("h%d_%d", lf, i), To: fmt.Sprintf("h%d_%d", to, i+per/2),
				Addr: netip.MustParseAddr(fmt.Sprintf("10.0.%d.%d", to, i+per/2)), Spec: perf.Spec{Test: perf.TCPStream, Duration: d}})
			if err != nil {
				tb.Fatal(err)
			}
			runs = append(runs, r)
		}
	}
	var total float64
	for _, r := range runs {
		res, err := r.Wait()
		if err != nil || res.Error != "" {
			tb.Fatal(err, res.Error)
		}
		total += res.ThroughputBps
	}
	return total
}
