package virtual

import (
	"fmt"
	"github.com/atmlab/atmlab/harness/vperf"
	"net/netip"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/atmlab/atmlab/harness/perf"
	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/labfile"
)

// cpuTime is the process's user + system time: netstack's goroutines
// count as well as the scheduler's.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchVirtual runs spec from h1 to h2 of text's lab, one lab per
// iteration, and reports simulated seconds per CPU-second and the figure.
func benchVirtual(b *testing.B, text string, spec perf.Spec) {
	benchPair(b, lab(b, text), "h1", "h2", spec)
}

// benchPair runs spec from one host of l to another, one lab per
// iteration, and reports simulated seconds per CPU-second, the figure,
// and the bytes allocated per message received (emulator and netstack).
func benchPair(b *testing.B, l *topologies.Lab, from, to string, spec perf.Spec) {
	var sim, cpu time.Duration
	var fig float64
	var alloc, msgs uint64
	var m0, m1 runtime.MemStats
	for b.Loop() {
		v, err := Build(l, l.Seed)
		if err != nil {
			b.Fatal(err)
		}
		v.Sched.RunUntil(StartAt)
		runtime.ReadMemStats(&m0)
		c0 := cpuTime()
		res, err := vperf.Run(vperf.Test{Lab: v.Lab, From: from, To: to, Addr: netip.MustParseAddr(l.Node(to).Address()), Spec: spec})
		cpu += cpuTime() - c0
		runtime.ReadMemStats(&m1)
		if err != nil || res.Error != "" {
			b.Fatal(err, res.Error)
		}
		alloc += m1.TotalAlloc - m0.TotalAlloc
		msgs += res.MessagesReceived
		sim += time.Duration(res.Elapsed * 1e9)
		fig = res.Figure()
		v.Close()
	}
	b.ReportMetric(sim.Seconds()/cpu.Seconds(), "sim-s/cpu-s")
	b.ReportMetric(fig/1e6, "Mbit/s")
	if msgs > 0 {
		b.ReportMetric(float64(alloc)/float64(msgs), "B/msg")
	}
}

// BenchmarkVirtualGNS3ATMCore: gns3-mpls's routed-atm point, 1460-octet
// UDP_STREAM from h3 through five routers with MPLS over OC-3c PVCs to
// h4, 1 s: ~10,800 packets of 32 cells through four PVCs.
func BenchmarkVirtualGNS3ATMCore(b *testing.B) {
	l, err := labfile.Load("../../topologies/gns3-mpls.yaml")
	if err != nil {
		b.Fatal(err)
	}
	benchPair(b, l, "h3", "h4", perf.Spec{Test: perf.UDPStream, Message: 1460, Duration: time.Second})
}

// BenchmarkVirtualTCP100M: a 100M TCP_STREAM through a switch, 1 s.
func BenchmarkVirtualTCP100M(b *testing.B) {
	benchVirtual(b, fmt.Sprintf(etherLab, "100M"), perf.Spec{Test: perf.TCPStream, Duration: time.Second})
}

// BenchmarkVirtualUDP1G: a 1G UDP_STREAM flood of 1472-octet datagrams, 1 s.
func BenchmarkVirtualUDP1G(b *testing.B) {
	benchVirtual(b, fmt.Sprintf(etherLab, "1G"), perf.Spec{Test: perf.UDPStream, Message: 1472, Duration: time.Second})
}

// BenchmarkVirtualOC3Cells: an OC-3c UDP_STREAM flood (AAL5 LLC/SNAP,
// 9180-octet datagrams) through an atm-switch, 1 s: 350,000 cells.
func BenchmarkVirtualOC3Cells(b *testing.B) {
	benchVirtual(b, atmLab, perf.Spec{Test: perf.UDPStream, Message: 9136, Duration: time.Second})
}

// BenchmarkVirtualTCP10G: a 10G TCP_STREAM through a switch (MTU 1500), 0.5 s.
func BenchmarkVirtualTCP10G(b *testing.B) {
	benchVirtual(b, strings.Replace(fmt.Sprintf(etherLab, "10G"), "buffer: 128KiB", "buffer: 1MiB", 1), perf.Spec{Test: perf.TCPStream, Duration: 500 * time.Millisecond})
}

// fabricLab is hosts hosts on leaves leaf switches of hosts/leaves each
// (100M ports), the leaves on one spine switch (1G uplinks), one subnet;
// extra is added to every host's settings (", sysctls: {...}").
func fabricLab(hosts, leaves int, extra string) string {
	var b strings.Builder
	b.WriteString("name: fabric\ntopology:\n  nodes:\n    spine: {kind: switch, buffer: 1MiB}\n")
	per := hosts / leaves
	for l := 1; l <= leaves; l++ {
		fmt.Fprintf(&b, "    leaf%d: {kind: switch, buffer: 512KiB}\n", l)
		for i := 1; i <= per; i++ {
			fmt.Fprintf(&b, "    h%d_%d: {kind: host, ipv4: 10.0.%d.%d/16%s}\n", l, i, l, i, extra)
		}
	}
	b.WriteString("  links:\n")
	for l := 1; l <= leaves; l++ {
		fmt.Fprintf(&b, "    - {endpoints: [\"leaf%d:up\", \"spine:p%d\"], ethernet: {rate: 1G}}\n", l, l)
		for i := 1; i <= per; i++ {
			fmt.Fprintf(&b, "    - {endpoints: [\"h%d_%d:eth0\", \"leaf%d:p%d\"], ethernet: {rate: 100M}}\n", l, i, l, i)
		}
	}
	return b.String()
}

// BenchmarkVirtualFabric200: 200 hosts on ten leaf switches under a spine,
// 100 TCP streams at once (the first half of each leaf's hosts to the
// second half of the next leaf's, across the spine), 1 s of model time:
// its wall time, CPU, memory and the streams' total.
func BenchmarkVirtualFabric200(b *testing.B) { benchFabric(b, "") }

// BenchmarkVirtualFabric200NoSACK is the fabric with SACK off on every
// host (net.ipv4.tcp_sack: 0): netstack's SACK recovery recounts the
// whole window against its scoreboard on every ACK (sender.SetPipe), so
// with the deep queues of full uplinks its cost grows with the square of
// the window; without SACK, recovery is NewReno's.
func BenchmarkVirtualFabric200NoSACK(b *testing.B) {
	benchFabric(b, ", sysctls: {net.ipv4.tcp_sack: 0}")
}

// benchFabric runs the fabric's 100 streams with extra on every host.
func benchFabric(b *testing.B, extra string) {
	const hosts, leaves = 200, 10
	l := lab(b, fabricLab(hosts, leaves, extra))
	per := hosts / leaves
	for b.Loop() {
		start, c0 := time.Now(), cpuTime()
		v, err := Build(l, l.Seed)
		if err != nil {
			b.Fatal(err)
		}
		v.Sched.RunUntil(StartAt)
		total := crossSpine(b, v, leaves, per, time.Second)
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		v.Close()
		b.ReportMetric(time.Since(start).Seconds(), "wall-s")
		b.ReportMetric((cpuTime() - c0).Seconds(), "cpu-s")
		b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "heap-MiB")
		b.ReportMetric(float64(ru.Maxrss)/1024, "maxrss-MiB")
		b.ReportMetric(total/1e6, "total-Mbit/s")
		b.ReportMetric(float64(v.Sched.Scheduled()), "events")
		b.ReportMetric((cpuTime()-c0).Seconds()*1e6/float64(v.Sched.Scheduled()), "cpu-us/event")
	}
}

// BenchmarkBesideNS3 runs the scenarios of ns-3's side of the comparison
// (scripts/bench/ns3/beside.cc): a TCP_STREAM at 100M and at 1G and a 1G
// UDP_STREAM flood of 1472-octet datagrams, h1 to h2 through a switch,
// 10 s of model time each (ATMLAB_BESIDE_SECONDS sets another), and
// reports simulated seconds per wall second, the lab's build included. It
// runs at GOMAXPROCS 1 and GOGC GCPercent, as lab run measures one point
// at a time.
func BenchmarkBesideNS3(b *testing.B) {
	secs := 10.0
	if s := os.Getenv("ATMLAB_BESIDE_SECONDS"); s != "" {
		var err error
		if secs, err = strconv.ParseFloat(s, 64); err != nil {
			b.Fatalf("ATMLAB_BESIDE_SECONDS=%s: %v", s, err)
		}
	}
	d := time.Duration(secs * float64(time.Second))
	for _, c := range []struct {
		name, rate string
		spec       perf.Spec
	}{
		{"tcp100m", "100M", perf.Spec{Test: perf.TCPStream, Duration: d}},
		{"tcp1g", "1G", perf.Spec{Test: perf.TCPStream, Duration: d}},
		{"udp1g", "1G", perf.Spec{Test: perf.UDPStream, Message: 1472, Duration: d}},
	} {
		b.Run(c.name, func(b *testing.B) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
			defer debug.SetGCPercent(debug.SetGCPercent(GCPercent))
			defer debug.SetMemoryLimit(debug.SetMemoryLimit(MemoryLimit))
			l := lab(b, fmt.Sprintf(etherLab, c.rate))
			var sim, wall time.Duration
			var fig float64
			for b.Loop() {
				start := time.Now()
				v, err := Build(l, l.Seed)
				if err != nil {
					b.Fatal(err)
				}
				v.Sched.RunUntil(StartAt)
				res, err := vperf.Run(vperf.Test{Lab: v.Lab, From: "h1", To: "h2", Addr: netip.MustParseAddr(l.Node("h2").Address()), Spec: c.spec})
				if err != nil || res.Error != "" {
					b.Fatal(err, res.Error)
				}
				v.Close()
				wall += time.Since(start)
				sim += time.Duration(res.Elapsed * 1e9)
				fig = res.Figure()
			}
			b.ReportMetric(sim.Seconds()/wall.Seconds(), "sim-s/wall-s")
			b.ReportMetric(fig/1e6, "Mbit/s")
		})
	}
}
