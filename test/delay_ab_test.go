//go:build integration

package test

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"
)

// TestDelayAB is TestSetLive's delay step for builds of atmlab side by
// side, alternating (ATMLAB_BEFORE as for TestBenchAB; the last build is
// this tree's): a 100M switch lab, a TCP stream at 10 Mbit/s h1 -> h2,
// ping h1 -> h2 before, with `atmlab set h1:eth0 delay=20ms` and after.
// Each round and build prints the least and median of each batch of
// pings and how many of the 29 delayed ones came back more than 0.5 ms
// above their least (the high medians, 41.0-41.7 ms where the model gives
// 40.1, that had the pooled frames reverted). ATMLAB_ROUNDS rounds
// (default 3); ATMLAB_BUSY=N runs N busy loops beside each round, the
// load under which both builds read them. It asserts nothing and runs
// only with ATMLAB_BENCH=1 and ATMLAB_BEFORE set.
func TestDelayAB(t *testing.T) {
	builds, rounds := abBuilds(t, 3, "iperf3", "ping")
	busy, _ := strconv.Atoi(os.Getenv("ATMLAB_BUSY"))
	var rows []string
	for round := range rounds {
		for _, b := range builds {
			atmlab = b.bin
			stop := busyLoops(t, busy)
			r := up(t, setLab)
			r.exec("h1", "ping", "-c", "1", "-W", "2", "10.0.0.2")
			var wg sync.WaitGroup
			var stream iperf
			wg.Add(1)
			go func() { defer wg.Done(); stream = r.runIperfNoFatal("h1", "h2", "10.0.0.2", 5301, 8, "-b", "10M") }()
			// Time is the point here, as in TestSetLive: the stream's
			// warm-up, then a second after each change for the frames
			// queued under the old delay to drain before ping measures.
			time.Sleep(1500 * time.Millisecond)
			base := r.pings(9)
			r.set("h1:eth0", "delay=20ms")
			time.Sleep(time.Second)
			slow := r.pings(9)
			more := r.pings(20)
			r.set("h1:eth0", "delay=0")
			time.Sleep(time.Second)
			back := r.pings(9)
			wg.Wait()
			if stream.err != nil {
				t.Fatal(stream.err)
			}
			st := r.stats().Loop
			r.stop()
			stop()
			high := 0
			for _, v := range append(slow, more...) {
				if v > min(slow[0], more[0])+0.5 {
					high++
				}
			}
			rows = append(rows, fmt.Sprintf("%d %-7s busy %d  base %.3f %.3f  delay=20ms %.3f %.3f (next 20: %.3f %.3f, %2d of 29 > least+0.5)  back %.3f %.3f  retrans %d  lateness p50 %v p99 %v",
				round+1, b.name, busy, base[0], base[4], slow[0], slow[4], more[0], more[10], high, back[0], back[4], stream.Retransmit, st.Lateness.P50, st.Lateness.P99))
		}
	}
	for _, r := range rows {
		fmt.Println(r)
	}
}

// busyLoops starts n shell loops that spin until the returned function
// stops them (or the test ends).
func busyLoops(t *testing.T, n int) (stop func()) {
	var cmds []*exec.Cmd
	stop = func() {
		for _, c := range cmds {
			c.Process.Kill()
			c.Wait()
		}
		cmds = nil
	}
	t.Cleanup(stop)
	for range n {
		c := exec.Command("sh", "-c", "while :; do :; done")
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, c)
	}
	return stop
}
