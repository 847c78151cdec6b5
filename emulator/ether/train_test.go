package ether

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/atmlab/atmlab/emulator"
	"github.com/atmlab/atmlab/emulator/sched"
	"github.com/atmlab/atmlab/emulator/units"
)

// tapFrame is a frame a host's kernel puts in its TAP at a time: a TCP
// super-frame (gso set) or a plain frame.
type tapFrame struct {
	at   time.Duration
	data []byte
	gso  emulator.VNetHdr
}

// superFrame builds a TCP/IPv4 frame from src to dst with payload octets
// of payload, to be cut at mss.
func superFrame(dst, src byte, seq uint32, payload, mss int) tapFrame {
	const hdr = 14 + 20 + 32 // Ethernet, IPv4, TCP with timestamps
	f := make([]byte, hdr+payload)
	copy(f[0:6], mac(dst))
	copy(f[6:12], mac(src))
	binary.BigEndian.PutUint16(f[12:], 0x0800)
	ip := f[14:]
	ip[0], ip[8], ip[9] = 0x45, 64, 6
	binary.BigEndian.PutUint16(ip[2:], uint16(20+32+payload))
	binary.BigEndian.PutUint16(ip[4:], uint16(seq))
	copy(ip[12:16], []byte{10, 0, 0, src})
	copy(ip[16:20], []byte{10, 0, 0, dst})
	tcp := ip[20:]
	binary.BigEndian.PutUint16(tcp[0:], 40000)
	binary.BigEndian.PutUint16(tcp[2:], 5201)
	binary.BigEndian.PutUint32(tcp[4:], seq)
	tcp[12], tcp[13] = 8<<4, 0x18 // 32-octet header; ACK, PSH
	for i := range payload {
		f[hdr+i] = byte(seq) + byte(i)
	}
	return tapFrame{data: f, gso: emulator.VNetHdr{GSOType: emulator.GSOTCPv4, GSOSize: uint16(mss)}}
}

// seen is one wire frame as a receiver or a capture saw it.
type seen struct {
	at   time.Duration
	data []byte
}

// trainLab is a line of hosts and switches run either with trains or
// frame by frame (every channel PerFrame, every super-frame cut at the
// sending host), everything it saw recorded.
type trainLab struct {
	s        *sched.Scheduler
	hosts    []*emulator.HostPort
	got      [][]seen // per host
	captures map[string][]seen
	chans    map[string]*emulator.Channel
	switches []*Switch
	events   int // scheduler events run
}

// trainCase says how a line h1 - sw1 - ... - swN - h2 is built.
type trainCase struct {
	switches  int
	rates     []units.BitRate // per hop from h1, len switches+1
	buffer    int             // each switch port's byte buffer
	ring      int             // each host NIC's ring in frames
	latency   time.Duration   // every switch's
	prop      time.Duration   // every cable's
	captureAt []string        // channels captured ("h1>sw1", "sw1>h2", ...)
	// gro: with trains, the hosts take trains (SetSinkTrain) with this
	// hold; what they are handed is cut again to compare (-1: they don't)
	gro time.Duration
	tx  [2][]tapFrame // what h1 and h2 put in their TAPs
}

func runTrainLab(tc trainCase, perFrame bool) *trainLab {
	s := sched.New()
	l := &trainLab{s: s, got: make([][]seen, 2), captures: map[string][]seen{}, chans: map[string]*emulator.Channel{}}
	for i := range 2 {
		h := &emulator.HostPort{Name: fmt.Sprint("h", i+1)}
		h.Sink = func(f *emulator.Frame) { l.got[i] = append(l.got[i], seen{s.Now(), bytes.Clone(f.Data)}) }
		if !perFrame && tc.gro >= 0 {
			hdr := make([]byte, 256)
			h.SetSinkTrain(s, tc.gro, func(f *emulator.Frame, first, n int) {
				vh, head, payload := emulator.SuperRange(hdr, f.Data, f.GSO, first, n)
				segs, err := emulator.Segment(nil, append(bytes.Clone(head), payload...), vh)
				if err != nil || len(segs) != n {
					panic(fmt.Sprint("a super-frame handed to the host does not cut into its ", n, " segments: ", err))
				}
				for _, d := range segs {
					l.got[i] = append(l.got[i], seen{s.Now(), d})
				}
			})
		}
		l.hosts = append(l.hosts, h)
	}
	var left emulator.Port = l.hosts[0]
	leftName := "h1"
	for i := range tc.switches + 1 {
		var right emulator.Port
		var rightName string
		var sw *Switch
		if i < tc.switches {
			rightName = fmt.Sprint("sw", i+1)
			sw = NewSwitch(s, rightName)
			sw.Latency = tc.latency
			l.switches = append(l.switches, sw)
			right = sw.AddPort("p1")
		} else {
			right, rightName = l.hosts[1], "h2"
		}
		cfg := func(from emulator.Port) emulator.ChannelConfig {
			c := emulator.ChannelConfig{Rate: tc.rates[i], Propagation: tc.prop, PerFrame: perFrame}
			if _, host := from.(*emulator.HostPort); host {
				c.QueueFrames = tc.ring
			} else {
				c.QueueBytes = tc.buffer
			}
			return c
		}
		ab, ba := emulator.Connect(s, left, right, cfg(left), cfg(right))
		l.chans[leftName+">"+rightName], l.chans[rightName+">"+leftName] = ab, ba
		if sw != nil {
			left, leftName = sw.AddPort("p2"), rightName
		}
	}
	for _, name := range tc.captureAt {
		l.chans[name].SetTap(func(f *emulator.Frame, at time.Duration) {
			l.captures[name] = append(l.captures[name], seen{at, bytes.Clone(f.Data)})
		})
	}
	for i, h := range l.hosts {
		queue := tc.tx[i]
		read := func() { // the loop's reader: while the NIC has room
			for len(queue) > 0 && queue[0].at <= s.Now() && h.CanAccept() {
				f := queue[0]
				queue = queue[1:]
				if !perFrame {
					sp, err := emulator.PlanSuper(f.data, f.gso)
					if err != nil {
						panic(err)
					}
					h.InputSuper(&emulator.Frame{Data: f.data, GSO: sp})
					continue
				}
				segs, err := emulator.Segment(nil, f.data, f.gso)
				if err != nil {
					panic(err)
				}
				var fs []*emulator.Frame
				for _, d := range segs {
					fs = append(fs, &emulator.Frame{Data: d})
				}
				h.InputSegments(fs)
			}
		}
		h.SetOnSpace(read)
		for _, f := range queue {
			s.At(f.at, read)
		}
	}
	for s.Step() {
		l.events++
	}
	return l
}

// compare fails unless both runs saw the same frames at the same times
// everywhere and counted the same.
func compareRuns(t *testing.T, name string, a, b *trainLab, hold time.Duration) {
	t.Helper()
	same := func(what string, x, y []seen, slack time.Duration) {
		t.Helper()
		if len(x) != len(y) {
			t.Fatalf("%s: %s: %d frames with trains, %d frame by frame", name, what, len(x), len(y))
		}
		for i := range x {
			if x[i].at < y[i].at || x[i].at > y[i].at+slack || !bytes.Equal(x[i].data, y[i].data) {
				t.Fatalf("%s: %s: frame %d at %v (%d octets) with trains, %v (%d) frame by frame",
					name, what, i, x[i].at, len(x[i].data), y[i].at, len(y[i].data))
			}
		}
	}
	for i := range a.got {
		same(fmt.Sprint("h", i+1, " received"), a.got[i], b.got[i], max(hold, 0))
	}
	for k := range b.captures {
		same("capture "+k, a.captures[k], b.captures[k], 0)
	}
	for k, ch := range a.chans {
		if x, y := ch.Stats(), b.chans[k].Stats(); x != y {
			t.Fatalf("%s: channel %s: %+v with trains, %+v frame by frame", name, k, x, y)
		}
	}
	for i, sw := range a.switches {
		for j, p := range sw.Ports() {
			if x, y := p.Stats(), b.switches[i].Ports()[j].Stats(); x.RxFrames != y.RxFrames || x.RxBytes != y.RxBytes || sw.Filtered != b.switches[i].Filtered {
				t.Fatalf("%s: %s: %+v with trains, %+v frame by frame", name, p.PortName(), x, y)
			}
		}
	}
}

// TestTrainsEthernet runs the same traffic through lines of switches with
// trains and frame by frame (every channel PerFrame, every super-frame cut
// at the sending host): every frame every host receives, at the same
// model time with the same octets, every captured frame, every channel's
// counters (frames, octets, tail drops, queue high-water mark, busy time)
// and every switch port's must agree exactly. The cases cover a host's
// ring making segments wait, a slower hop whose buffer tail-drops
// segments out of the middle of trains, switches in a row, forwarding
// latency, cable delay, captures (which need wire frames), and traffic
// the other way between the trains.
func TestTrainsEthernet(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 1))
	stream := func(from, to byte, n int, gap time.Duration, sizes []int) []tapFrame {
		var fs []tapFrame
		at, seq := time.Duration(0), uint32(1)
		for i := range n {
			size := sizes[i%len(sizes)]
			f := superFrame(to, from, seq, size, 1448)
			f.at = at
			fs = append(fs, f)
			seq += uint32(size)
			at += time.Duration(rng.Int64N(int64(gap) + 1))
		}
		return fs
	}
	acks := func(from, to byte, n int, every time.Duration) []tapFrame {
		var fs []tapFrame
		for i := range n {
			f := superFrame(to, from, uint32(i), 0, 1448)
			f.gso = emulator.VNetHdr{} // a plain frame
			f.at = time.Duration(i) * every
			fs = append(fs, f)
		}
		return fs
	}
	big := []int{45 * 1448, 7 * 1448, 44*1448 + 100, 1448, 300, 20 * 1448}
	for _, tc := range []struct {
		name string
		trainCase
	}{
		{"10G one switch", trainCase{gro: -1, switches: 1, rates: []units.BitRate{10 * units.Gbps, 10 * units.Gbps}, buffer: DefaultBuffer, ring: 4,
			tx: [2][]tapFrame{stream(1, 2, 40, 20*time.Microsecond, big), acks(2, 1, 30, 25*time.Microsecond)}}},
		{"1G into 100M, drops", trainCase{gro: -1, switches: 1, rates: []units.BitRate{units.Gbps, 100 * units.Mbps}, buffer: 32 << 10, ring: 8,
			tx: [2][]tapFrame{stream(1, 2, 30, 200*time.Microsecond, big), acks(2, 1, 50, 300*time.Microsecond)}}},
		{"a buffer of exactly 20 full segments", trainCase{gro: -1, switches: 1, rates: []units.BitRate{units.Gbps, 100 * units.Mbps}, buffer: 20 * 1514, ring: 8,
			tx: [2][]tapFrame{stream(1, 2, 20, 100*time.Microsecond, []int{45 * 1448}), nil}}},
		{"three switches, latency, cable, captures", trainCase{gro: -1, switches: 3,
			rates:  []units.BitRate{10 * units.Gbps, units.Gbps, 10 * units.Gbps, 100 * units.Mbps},
			buffer: 48 << 10, ring: 4, latency: 3 * time.Microsecond, prop: 5 * time.Microsecond,
			captureAt: []string{"sw2>sw3", "sw3>h2"},
			tx:        [2][]tapFrame{stream(1, 2, 30, 100*time.Microsecond, big), acks(2, 1, 40, 200*time.Microsecond)}}},
		{"capture on the first hop", trainCase{gro: -1, switches: 1, rates: []units.BitRate{units.Gbps, units.Gbps}, buffer: DefaultBuffer, ring: 64,
			captureAt: []string{"h1>sw1"},
			tx:        [2][]tapFrame{stream(1, 2, 10, 300*time.Microsecond, big), nil}}},
		{"10G, hosts take trains (GRO hold 100 µs)", trainCase{gro: 100 * time.Microsecond, switches: 1, rates: []units.BitRate{10 * units.Gbps, 10 * units.Gbps}, buffer: DefaultBuffer, ring: 4,
			tx: [2][]tapFrame{stream(1, 2, 40, 20*time.Microsecond, big), acks(2, 1, 30, 25*time.Microsecond)}}},
		{"1G into 100M, drops, hosts take trains (GRO hold 100 µs)", trainCase{gro: 100 * time.Microsecond, switches: 1, rates: []units.BitRate{units.Gbps, 100 * units.Mbps}, buffer: 32 << 10, ring: 8,
			tx: [2][]tapFrame{stream(1, 2, 30, 200*time.Microsecond, big), acks(2, 1, 50, 300*time.Microsecond)}}},
		{"both ways, hosts take trains one segment each (GRO hold 0)", trainCase{switches: 2, rates: []units.BitRate{units.Gbps, 10 * units.Gbps, units.Gbps}, buffer: 64 << 10, ring: 16,
			tx: [2][]tapFrame{stream(1, 2, 20, 150*time.Microsecond, big), stream(2, 1, 20, 150*time.Microsecond, big)}}},
	} {
		trains, frames := runTrainLab(tc.trainCase, false), runTrainLab(tc.trainCase, true)
		compareRuns(t, tc.name, trains, frames, tc.gro)
		var delivered, drops uint64
		for _, ch := range trains.chans {
			st := ch.Stats()
			delivered += st.Delivered
			drops += st.QueueDrops
		}
		t.Logf("%s: %d frames to h2, %d to h1, %d tail drops, %d deliveries on all channels; %d events with trains, %d frame by frame",
			tc.name, len(trains.got[1]), len(trains.got[0]), drops, delivered, trains.events, frames.events)
		if len(trains.got[1]) == 0 {
			t.Fatalf("%s: nothing arrived", tc.name)
		}
		// With trains the last hop hands the hosts one frame an event;
		// every other hop costs a few events a super-frame (its last bit,
		// its arrival, the ring's room), not one a segment.
		received, sent, hops := len(trains.got[0])+len(trains.got[1]), len(tc.tx[0])+len(tc.tx[1]), tc.switches+1
		if tc.captureAt == nil && trains.events-received > 3*hops*sent {
			t.Errorf("%s: %d events with trains for %d frames received: more than %d a frame sent per hop", tc.name, trains.events, received, 3)
		}
	}
}
