package virtual

import (
	"encoding/binary"
	"fmt"
	"github.com/atmlab/atmlab/harness/vperf"
	"net/netip"
	"testing"
	"time"

	"github.com/atmlab/atmlab/emulator"
	"github.com/atmlab/atmlab/harness/perf"
	"github.com/atmlab/atmlab/harness/theory"
)

// wanLab is sandia-wan's 40 ms variant cut to its path: two hosts with
// jumbo frames on a 1G switch, 20 ms each way on the server's link, and
// the lab's tcp_rmem (a 128 KiB default, 32 MiB at most).
const wanLab = `
name: vwan
topology:
  nodes:
    h1: {kind: host, ipv4: 10.0.0.1/24, mtu: 9000, sysctls: {net.ipv4.tcp_rmem: "%s", net.ipv4.tcp_wmem: "4096 65536 33554432"}}
    h2: {kind: host, ipv4: 10.0.0.2/24, mtu: 9000, sysctls: {net.ipv4.tcp_rmem: "%s", net.ipv4.tcp_wmem: "4096 65536 33554432"}}
    sw: {kind: switch, buffer: 4MiB}
  links:
    - {endpoints: ["h1:eth0", "sw:p1"], ethernet: {rate: 1G}}
    - {endpoints: ["h2:eth0", "sw:p2"], ethernet: {rate: 1G}, impair: {delay: 20ms}}
`

// segTrace is what the server's link carried in one interval of model
// time: the client's data and the server's window advertisements.
type segTrace struct {
	data, retx     int    // data segments, those below the highest sequence sent
	octets         uint64 // payload octets
	acks           int    // segments from the server
	minWnd, maxWnd uint32 // advertised windows, octets (scaled)
	zero           int    // zero-window advertisements
}

// traceTCP taps the server's link and sorts every TCP segment on it into
// intervals of iv from start: payload one way, windows the other.
func traceTCP(t *testing.T, ab, ba emulator.Tapper, start, iv time.Duration) func() []segTrace {
	t.Helper()
	var out []segTrace
	var scale [2]uint8 // window scale each way, from the SYNs
	var high uint32
	sawData := false
	tap := func(f *emulator.Frame, at time.Duration) {
		d := f.Data
		if len(d) < 14+20+20 || binary.BigEndian.Uint16(d[12:]) != 0x0800 || d[14+9] != 6 {
			return
		}
		ihl := int(d[14]&15) * 4
		tcp := d[14+ihl:]
		off := int(tcp[12]>>4) * 4
		payload := int(binary.BigEndian.Uint16(d[16:])) - ihl - off
		fromServer := d[14+12+3] == 2 // 10.0.0.2's last octet
		dir := 0
		if fromServer {
			dir = 1
		}
		if tcp[13]&0x02 != 0 { // SYN: find the window scale option
			for o := 20; o < off; {
				switch tcp[o] {
				case 0:
					o = off
				case 1:
					o++
				default:
					if tcp[o] == 3 {
						scale[dir] = tcp[o+2]
					}
					o += int(tcp[o+1])
				}
			}
			return
		}
		if at < start {
			return
		}
		i := int((at - start) / iv)
		for len(out) <= i {
			out = append(out, segTrace{minWnd: ^uint32(0)})
		}
		s := &out[i]
		if fromServer {
			w := uint32(binary.BigEndian.Uint16(tcp[14:])) << scale[1]
			s.acks++
			s.minWnd, s.maxWnd = min(s.minWnd, w), max(s.maxWnd, w)
			if w == 0 {
				s.zero++
			}
			return
		}
		if payload <= 0 {
			return
		}
		seq := binary.BigEndian.Uint32(tcp[4:])
		s.data++
		s.octets += uint64(payload)
		if sawData && int32(seq-high) < 0 {
			s.retx++
		}
		if !sawData || int32(seq+uint32(payload)-high) > 0 {
			high = seq + uint32(payload)
		}
		sawData = true
	}
	ab.SetTap(tap)
	ba.SetTap(tap)
	return func() []segTrace { return out }
}

// TestLongRTTWindow: over sandia-wan's 40 ms, 1G path a TCP receiver
// starting from tcp_rmem's 128 KiB default grows its window to the path's
// bandwidth-delay product by receive-buffer auto-tuning, as Linux does,
// and fills the link. Netstack tunes only when its caller reports each
// read (ModerateRecvBuf); before vhost's Socket.Read did, the window stayed
// at half the 128 KiB default (56-64 KiB) for the whole run: 10.4 Mbit/s,
// no loss, no retransmission, and the send buffer's 4.7 MB flushed at that
// rate for 3.6 s past the test's end.
func TestLongRTTWindow(t *testing.T) {
	l := lab(t, fmt.Sprintf(wanLab, "4096 131072 33554432", "4096 131072 33554432"))
	v, err := Build(l, l.Seed)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	const iv = 250 * time.Millisecond
	var tr func() []segTrace
	for _, nl := range v.Net.Links {
		if nl.Link.A.Node == "h2" || nl.Link.B.Node == "h2" {
			tr = traceTCP(t, nl.AB, nl.BA, StartAt, iv)
		}
	}
	v.Sched.RunUntil(StartAt)
	const dur = 3 * time.Second
	res, err := vperf.Run(vperf.Test{Lab: v.Lab, From: "h1", To: "h2", Addr: netip.MustParseAddr("10.0.0.2"),
		Spec: perf.Spec{Test: perf.TCPStream, Duration: dur, Message: 131072, Interval: iv}})
	if err != nil {
		t.Fatal(err)
	}
	ceiling, _ := theory.PathCeiling(l, "h1", "h2", perf.TCPStream, 8948)
	t.Logf("%.2f Mbit/s in %.3f s (ceiling %.2f)", res.ThroughputBps/1e6, res.Elapsed, ceiling/1e6)
	var maxWnd uint32
	for i, s := range tr() {
		t.Logf("%5.2f s: %d data segments (%d retransmitted), %.1f Mbit/s; %d from the server, window %d..%d, %d zero",
			float64(i)/4, s.data, s.retx, float64(s.octets)*8/iv.Seconds()/1e6, s.acks, s.minWnd, s.maxWnd, s.zero)
		maxWnd = max(maxWnd, s.maxWnd)
		if s.retx > 0 || s.zero > 0 {
			t.Errorf("%.2f s: %d retransmissions, %d zero windows; want none (the switch holds 4 MiB, the window stays below it)", float64(i)/4, s.retx, s.zero)
		}
	}
	// 1 Gb/s over 40 ms is 5 MB in flight: the window must reach it.
	if bdp := uint32(1e9 / 8 * 0.040); maxWnd < bdp {
		t.Errorf("window reached %d octets, want at least the path's bandwidth-delay product %d: receive-buffer auto-tuning did not run", maxWnd, bdp)
	}
	// From 0.5 s on (slow start is 12 round trips) the link is full.
	for _, r := range res.Intervals {
		if r.Start >= 0.5 {
			within(t, fmt.Sprintf("interval %.2f-%.2f s", r.Start, r.End), r.Bps, ceiling, 0.002)
		}
	}
	if res.ThroughputBps < 0.9*ceiling {
		t.Errorf("%.2f Mbit/s, want at least 90 %% of the %.2f ceiling", res.ThroughputBps/1e6, ceiling/1e6)
	}
	if over := res.Elapsed - dur.Seconds(); over > 0.3 {
		t.Errorf("the test ran %.3f s past its duration, want under 0.3 s (a final flush of one window over 40 ms)", over)
	}
}
