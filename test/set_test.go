//go:build integration

package test

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"net"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/atmlab/atmlab/internal/labtest"
	"github.com/atmlab/atmlab/kernel"
)

var setLab = labtest.Lab("two-hosts-switch", "NAME")

// set runs atmlab set on the lab.
func (r *running) set(args ...string) {
	r.t.Helper()
	if out, err := exec.Command(atmlab, append([]string{"set", r.name}, args...)...).CombinedOutput(); err != nil {
		r.t.Fatalf("atmlab set %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

var rttRE = regexp.MustCompile(`time=([0-9.]+) ms`)

// pingQuick sends n pings 50 ms apart and returns the median RTT in ms.
func (r *running) pingQuick(n int) float64 {
	r.t.Helper()
	return r.pings(n)[n/2]
}

// pings sends n pings 50 ms apart and returns their RTTs in ms, sorted.
func (r *running) pings(n int) []float64 {
	r.t.Helper()
	out := r.exec("h1", "ping", "-c", strconv.Itoa(n), "-i", "0.05", "-W", "2", "10.0.0.2")
	var rtts []float64
	for _, m := range rttRE.FindAllSubmatch(out, -1) {
		v, _ := strconv.ParseFloat(string(m[1]), 64)
		rtts = append(rtts, v)
	}
	if len(rtts) != n {
		r.t.Fatalf("%d of %d pings answered:\n%s", len(rtts), n, out)
	}
	slices.Sort(rtts)
	return rtts
}

// tcpOFO reads how many segments h2's TCP queued out of order.
func (r *running) tcpOFO() int {
	r.t.Helper()
	return r.tcpExt("h2", "TCPOFOQueue")
}

// tcpExt reads one of a host's TcpExt counters (/proc/net/netstat).
func (r *running) tcpExt(host, counter string) int {
	r.t.Helper()
	sc := bufio.NewScanner(bytes.NewReader(r.exec(host, "cat", "/proc/net/netstat")))
	var names []string
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 || f[0] != "TcpExt:" {
			continue
		}
		if names == nil {
			names = f
			continue
		}
		if i := slices.Index(names, counter); i > 0 {
			n, _ := strconv.Atoi(f[i])
			return n
		}
	}
	r.t.Fatalf("no TcpExt %s in %s's /proc/net/netstat", counter, host)
	return 0
}

// drops sums the emulator's queue and impairment drops over all ports.
func (r *running) drops() (queue, impair uint64) {
	for _, p := range r.stats().Ports {
		queue += p.Drops
		impair += p.ImpairDrops
	}
	return queue, impair
}

// TestSetLive changes a running 100M lab's link with atmlab set while
// traffic runs: delay 0 -> 20 ms -> 0 moves ping's RTT by the model's
// 2 x 20 ms within 0.5 ms with no frame of a concurrent TCP stream lost or
// reordered; rate 100M -> 10M -> 100M moves the median of a TCP stream's
// per-second intervals to each ceiling within 1 % after a second; loss 0 -> 1 % -> 0
// loses 1 % of a UDP flow's datagrams (within 4 sigma) and then none.
func TestSetLive(t *testing.T) {
	requireRoot(t, "iperf3", "ping")
	r := up(t, setLab)
	r.exec("h1", "ping", "-c", "1", "-W", "2", "10.0.0.2")

	// Delay, under a 10 Mbit/s TCP stream (well below the line rate, so
	// that ping hardly waits behind the stream's queue). Ping waits a
	// second after each change: right after delay=0 the stream's window,
	// grown to the longer path, queues in front of ping for a while.
	var wg sync.WaitGroup
	var stream iperf
	wg.Add(1)
	go func() { defer wg.Done(); stream = r.runIperfNoFatal("h1", "h2", "10.0.0.2", 5301, 8, "-b", "10M") }()
	time.Sleep(1500 * time.Millisecond) // the stream's warm-up
	// The path's RTT is the least of each round's pings: a ping that
	// waited behind the stream's frames measured the queue as well (with
	// delay=20ms a round's median read 41.0-41.7 ms in 3 of 8 runs here;
	// every least logged read 40.1).
	ofo, probes := r.tcpOFO(), r.tcpExt("h1", "TCPLossProbes")
	baseAll := r.pings(9)
	r.set("h1:eth0", "delay=20ms")
	time.Sleep(time.Second)
	slowAll := r.pings(9)
	r.set("h1:eth0", "delay=0")
	time.Sleep(time.Second)
	backAll := r.pings(9)
	wg.Wait()
	if stream.err != nil {
		t.Fatal(stream.err)
	}
	probes = r.tcpExt("h1", "TCPLossProbes") - probes
	t.Logf("ping RTTs (ms), least and median: %.3f %.3f, with delay=20ms %.3f %.3f, back %.3f %.3f; stream retransmits %d, loss probes %d",
		baseAll[0], baseAll[4], slowAll[0], slowAll[4], backAll[0], backAll[4], stream.Retransmit, probes)
	base, slow, back := baseAll[0], slowAll[0], backAll[0]
	if math.Abs(slow-base-40) > 0.5 || math.Abs(back-base) > 0.5 {
		t.Errorf("RTT %.3f -> %.3f -> %.3f ms, want +40 ms and back within 0.5 ms", base, slow, back)
	}
	// A retransmission that is a tail loss probe is TCP's answer to the
	// RTT growing from 0.2 to 40 ms under segments in flight (no ACK
	// within twice the smoothed RTT), not a lost frame: on this machine
	// kind 4 of 14 runs sent one (each a probe), nothing dropped or reordered.
	if q, im := r.drops(); q != 0 || im != 0 || stream.Retransmit > probes || r.tcpOFO() != ofo {
		t.Errorf("the stream lost or reordered frames across the changes: %d queue and %d impairment drops, %d retransmits (%d of them loss probes at most), %d segments out of order",
			q, im, stream.Retransmit, probes, r.tcpOFO()-ofo)
	}

	// Rate: 14 s of TCP; 10M from 4.5 s to 9 s after the client's launch.
	// Measured again while the hypervisor stole any of its seconds.
	var iv []float64
	rateRuns := 0
	quietRun(t, "TCP through rate=10M and back", func() (int, int) {
		rateRuns++
		wg.Add(1)
		go func() { defer wg.Done(); stream = r.runIperfNoFatal("h1", "h2", "10.0.0.2", 5302, 14) }()
		time.Sleep(4500 * time.Millisecond) // the change's times are the point
		r.set("h1:eth0", "rate=10M")
		time.Sleep(4500 * time.Millisecond)
		r.set("h1:eth0", "--reset")
		wg.Wait()
		if stream.err != nil {
			t.Fatal(stream.err)
		}
		iv = stream.Received
		t.Logf("TCP per-second intervals (Mbit/s): %v", mbps(iv))
		if len(iv) < 13 {
			t.Fatalf("%d intervals, want 13", len(iv))
		}
		return stream.Stolen, len(iv)
	})
	// The stream starts 0.1-0.9 s after the client is launched: the
	// changes fall at 3.6-4.4 s and 8.1-8.9 s of its time, so intervals
	// 0-2 lie before the first, 5-7 more than half a second after it, and
	// 10-12 a second after the second. Each window is judged by its median
	// (a TCP second at 100M here dips to 86-91 Mbit/s now and then).
	hi, lo := ceiling(100e6, 1448, 52), ceiling(10e6, 1448, 52)
	for _, w := range []struct {
		what string
		from int
		want float64
	}{{"before", 0, hi}, {"at 10M", 5, lo}, {"back at 100M", 10, hi}} {
		if got := median(t, iv[w.from:w.from+3]); !within(got, w.want, 0.01) {
			t.Errorf("%s: %.2f Mbit/s, the median of %v, want %.2f within 1%%", w.what, got/1e6, mbps(iv[w.from:w.from+3]), w.want/1e6)
		}
	}

	// Loss: a 20 Mbit/s UDP flow of 1470-byte datagrams for 6 s; 1 % loss
	// from 2 s to 4 s, counted by the emulator.
	_, im0 := r.drops()
	wg.Add(1)
	go func() {
		defer wg.Done()
		stream = r.runIperfNoFatal("h1", "h2", "10.0.0.2", 5303, 6, "-u", "-b", "20M", "-l", "1470")
	}()
	time.Sleep(2 * time.Second) // the window's times are the point
	tx0 := port(t, r.stats(), "h1:eth0").Tx
	r.set("h1:eth0", "loss=1%", "--direction", "h1:eth0")
	time.Sleep(2 * time.Second)
	r.set("h1:eth0", "loss=0", "--direction", "h1:eth0")
	tx1 := port(t, r.stats(), "h1:eth0").Tx
	_, im1 := r.drops()
	wg.Wait()
	if stream.err != nil {
		t.Fatal(stream.err)
	}
	_, im2 := r.drops()
	n, lost := float64(tx1-tx0), float64(im1-im0)
	t.Logf("1%% loss: %v of %v frames lost; iperf3 lost %d of %d", lost, n, stream.Lost, stream.Packets)
	if sigma := math.Sqrt(n * 0.01 * 0.99); n < 1000 || math.Abs(lost-n*0.01) > 4*sigma {
		t.Errorf("lost %v of %v frames under loss=1%%, want 1%% within 4 sigma (%.0f)", lost, n, 4*sigma)
	}
	if im2 != im1 || stream.Lost != int(lost) {
		t.Errorf("after loss=0: %d more impairment drops; iperf3 lost %d, the emulator %v", im2-im1, stream.Lost, lost)
	}
	if st, made := r.stats(), 4+2*rateRuns; len(st.Changes) != made {
		t.Errorf("stats lists %d changes, want the %d made", len(st.Changes), made)
	}
}

var setATMLab = labtest.Set(labtest.Lab("two-hosts-atm-switch", "NAME"), "topology.links[1].impair", "{delay: 2ms}")

// TestSetATM: atmlab set on a running ATM lab: delay=12ms on h2's link
// (2 ms in the lab file) raises ping's RTT by 20 ms, one direction's
// loss=100% loses every ping, and --reset returns both.
func TestSetATM(t *testing.T) {
	requireRoot(t, "ping")
	r := up(t, setATMLab)
	r.exec("h1", "ping", "-c", "1", "-W", "2", "10.0.0.2")
	base := r.pingQuick(9)
	r.set("h2:eth0", "delay=12ms")
	slow := r.pingQuick(9)
	r.set("h2:eth0", "loss=100%", "--direction", "atm1:p2")
	if out, err := r.try("h1", "ping", "-c", "3", "-i", "0.05", "-W", "1", "10.0.0.2"); err == nil {
		t.Errorf("pings answered through a link losing every cell:\n%s", out)
	}
	r.set("h2:eth0", "--reset")
	back := r.pingQuick(9)
	t.Logf("ping median RTT %.3f ms, with delay=12ms %.3f ms, after --reset %.3f ms", base, slow, back)
	if math.Abs(slow-base-20) > 0.5 || math.Abs(back-base) > 0.5 {
		t.Errorf("RTT %.3f -> %.3f -> %.3f ms, want +20 ms and back within 0.5 ms", base, slow, back)
	}
	if st := r.stats(); len(st.Changes) != 3 {
		t.Errorf("stats lists %d changes, want 3: %+v", len(st.Changes), st.Changes)
	}
}

// TestSetRefusesOutOfRange: on a running lab, atmlab set's words and
// hand-written control requests outside the lab file's ranges are refused
// at once, naming the key and the range, and nothing is applied (ping's
// RTT stays, stats lists no change); rate=1k, the lab file's least rate,
// is taken and --reset undoes it.
func TestSetRefusesOutOfRange(t *testing.T) {
	requireRoot(t, "ping")
	r := up(t, setLab)
	r.exec("h1", "ping", "-c", "1", "-W", "2", "10.0.0.2")
	base := r.pingQuick(5)
	for word, want := range map[string]string{
		"delay=1000000h":   `bad delay "1000000h": a duration in Go syntax from 0 to 24h`,
		"jitter=2000000h":  `bad jitter "2000000h": a duration in Go syntax from 0 to 24h`,
		"limit=2000000000": `bad limit "2000000000": a whole number from 1 to 1048576`,
		"buffer=1000GiB":   `bad buffer "1000GiB": a size with B, KiB, MiB or GiB from 1518B to 1GiB`,
		"loss=NaN":         `bad loss "NaN": a percentage from 0% to 100%`,
	} {
		start := time.Now()
		out, err := exec.Command(atmlab, "set", r.name, "sw1:p2", word).CombinedOutput()
		if err == nil || !strings.Contains(string(out), want) || time.Since(start) > 2*time.Second {
			t.Errorf("set %s: %v after %v: %s, want %q", word, err, time.Since(start), out, want)
		}
	}
	for raw, want := range map[string]string{
		`{"rate":0}`:            "rate 0 is out of range: a bit rate (k, M, G or a PHY name) from 1k to 1000G",
		`{"rate":-5}`:           "rate -5 is out of range",
		`{"Delay":-1000000000}`: "delay -1s is out of range: a duration in Go syntax from 0 to 24h",
		`{"loss":5}`:            "loss 500% is out of range: a percentage from 0% to 100%",
		`{"buffer":-1}`:         "buffer -1B is out of range: a size with B, KiB, MiB or GiB from 1518B to 1GiB",
		`{"limit":-7}`:          "limit -7 is out of range: a whole number from 1 to 1048576",
		`{"limit":2000000000}`:  "limit 2000000000 is out of range",
	} {
		c, err := net.Dial("unix", kernel.SocketPath(r.name))
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(5 * time.Second))
		fmt.Fprintf(c, `{"op":"set","endpoint":"h1:eth0","change":%s}`+"\n", raw)
		line, err := bufio.NewReader(c).ReadString('\n')
		c.Close()
		if !strings.Contains(line, want) {
			t.Errorf("control request %s: %q %v, want %q", raw, line, err, want)
		}
	}
	if st := r.stats(); len(st.Changes) != 0 {
		t.Fatalf("refused changes were applied: %v", st.Changes)
	}
	after := r.pingQuick(5)
	t.Logf("ping's median RTT %.3f ms before the refused changes, %.3f after", base, after)
	if math.Abs(after-base) > 0.5 {
		t.Errorf("RTT %.3f ms after refused changes, %.3f before", after, base)
	}
	r.set("h1:eth0", "rate=1k")
	r.set("h1:eth0", "--reset")
	if st := r.stats(); len(st.Changes) != 2 {
		t.Fatalf("changes after rate=1k and --reset: %v", st.Changes)
	}
	r.pingQuick(5)
}
