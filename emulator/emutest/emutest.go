// Package emutest checks that transmitters and ports keep the contracts
// emulator.Transmitter and emulator.Port document: FIFO order, Full agrees
// with Send, counters match what was delivered, every drop is counted, a
// frame Send refuses goes back to its pool, and OnSpace runs once each time
// a full transmitter has room again. It runs
// each model in virtual time, so every expectation is exact.
//
// An implementation's test describes how to build it (a TxSubject or a
// PortSubject) and calls Transmitter or Port; conformance_test.go holds
// the table of every implementation in the emulator tree.
package emutest

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/atmlab/atmlab/emulator"
	"github.com/atmlab/atmlab/emulator/sched"
)

// Addresses of the test frames: a station A sends IPv4 to B.
var (
	MACA = [6]byte{0x02, 0, 0, 0, 0, 0x0A}
	MACB = [6]byte{0x02, 0, 0, 0, 0, 0x0B}
	IPA  = [4]byte{10, 0, 0, 1}
	IPB  = [4]byte{10, 0, 0, 2}
)

// seqAt is where a test frame carries its sequence number: the first
// octets of the IP payload, which every model here carries unchanged.
const seqAt = emulator.EtherHeader + 20

// MinFrame is the smallest test frame: header, IP header, sequence number.
const MinFrame = seqAt + 4

// Frame returns test frame seq of n octets (n >= MinFrame): Ethernet from
// MACA to dst (MACB if zero), an IPv4 packet from IPA to IPB whose payload
// starts with seq.
func Frame(seq, n int, dst [6]byte) *emulator.Frame { return FrameTo(seq, n, dst, IPB) }

// FrameTo is Frame with the IPv4 packet addressed to ip.
func FrameTo(seq, n int, dst [6]byte, ip4 [4]byte) *emulator.Frame {
	if dst == ([6]byte{}) {
		dst = MACB
	}
	d := make([]byte, n)
	copy(d, dst[:])
	copy(d[6:], MACA[:])
	binary.BigEndian.PutUint16(d[12:], 0x0800)
	ip := d[emulator.EtherHeader:]
	ip[0] = 0x45
	binary.BigEndian.PutUint16(ip[2:], uint16(n-emulator.EtherHeader))
	ip[8], ip[9] = 64, 17
	copy(ip[12:], IPA[:])
	copy(ip[16:], ip4[:])
	binary.BigEndian.PutUint16(ip[10:], ipChecksum(ip[:20]))
	binary.BigEndian.PutUint32(d[seqAt:], uint32(seq))
	return &emulator.Frame{Data: d, ID: uint64(seq)}
}

// Seq returns the sequence number a test frame carries.
func Seq(f *emulator.Frame) int { return int(binary.BigEndian.Uint32(f.Data[seqAt:])) }

func ipChecksum(h []byte) uint16 {
	var sum uint32
	for i := 0; i+1 < len(h); i += 2 {
		sum += uint32(binary.BigEndian.Uint16(h[i:]))
	}
	for sum > 0xFFFF {
		sum = sum&0xFFFF + sum>>16
	}
	return ^uint16(sum)
}

// Recorder is a Receiver that keeps the sequence numbers it is handed and
// when.
type Recorder struct {
	S     *sched.Scheduler
	Seqs  []int
	Times []time.Duration
	Bytes uint64
}

// Receive implements emulator.Receiver; frames other than test frames
// (an ARP exchange) are ignored.
func (r *Recorder) Receive(f *emulator.Frame) {
	if len(f.Data) < MinFrame || binary.BigEndian.Uint16(f.Data[12:]) != 0x0800 {
		return
	}
	r.Seqs = append(r.Seqs, Seq(f))
	r.Times = append(r.Times, r.S.Now())
	r.Bytes += uint64(len(f.Data))
}

// TxSubject builds one transmitter implementation for the suite.
type TxSubject struct {
	Name string
	// New returns the transmitter on s, refusing frames once queue of them
	// are held (queue > 0), and delivering the frames it carries to rx.
	New func(s *sched.Scheduler, queue int, rx emulator.Receiver) emulator.Transmitter
	// Sizes are the frame lengths to send, in turn; nil: 60, 1514, 590, 1000.
	Sizes []int
	// Lossy subjects lose frames after accepting them (impairments): the
	// suite then requires ImpairDrops and LimitDrops to account for every
	// frame sent but not delivered, and both to be non-zero.
	Lossy bool
	// Delivered says Stats().Delivered counts the frames handed to rx.
	Delivered bool
}

func (sub TxSubject) size(i int) int {
	sizes := sub.Sizes
	if sizes == nil {
		sizes = []int{60, 1514, 590, 1000}
	}
	return sizes[i%len(sizes)]
}

// Transmitter runs the conformance suite on sub.
func Transmitter(t *testing.T, sub TxSubject) {
	t.Run("fifo", func(t *testing.T) { txFIFO(t, sub) })
	t.Run("full", func(t *testing.T) { txFull(t, sub) })
	t.Run("onspace", func(t *testing.T) { txOnSpace(t, sub) })
}

// sender sends test frames to a transmitter and keeps what it accepted.
type sender struct {
	t        *testing.T
	sub      TxSubject
	tx       emulator.Transmitter
	next     int
	accepted []int
	bytes    uint64
	refused  int
	pool     emulator.Pool // the frames sent come from it
}

// send offers the next frame; Full must predict Send's answer.
func (sn *sender) send() bool {
	n := sn.sub.size(sn.next)
	f := sn.pool.Get(n)
	copy(f.Data, Frame(sn.next, n, [6]byte{}).Data)
	f.ID = uint64(sn.next)
	full := sn.tx.Full(n)
	ok := sn.tx.Send(f)
	if ok == full {
		sn.t.Errorf("frame %d (%d octets): Full said %v, Send returned %v", sn.next, n, full, ok)
	}
	if !ok && f.Pooled() {
		sn.t.Errorf("frame %d (%d octets): refused but not released to its pool", sn.next, n)
	}
	if ok {
		sn.accepted = append(sn.accepted, sn.next)
		sn.bytes += uint64(n)
	} else {
		sn.refused++
	}
	sn.next++
	return ok
}

// check compares the transmitter's counters and the receiver's record with
// what was sent, once everything has drained.
func (sn *sender) check(rx *Recorder, seeBoth bool) {
	t := sn.t
	t.Helper()
	st := sn.tx.Stats()
	if st.TxFrames != uint64(len(sn.accepted)) || st.TxBytes != sn.bytes {
		t.Errorf("Stats: %d frames, %d octets sent; accepted %d frames, %d octets", st.TxFrames, st.TxBytes, len(sn.accepted), sn.bytes)
	}
	if st.QueueDrops != uint64(sn.refused) {
		t.Errorf("Stats: %d queue drops; Send refused %d", st.QueueDrops, sn.refused)
	}
	if st.Queue != 0 {
		t.Errorf("Stats: %d octets queued after draining", st.Queue)
	}
	if sn.sub.Delivered && st.Delivered != uint64(len(rx.Seqs)) {
		t.Errorf("Stats: %d delivered; the receiver got %d", st.Delivered, len(rx.Seqs))
	}
	lost := st.ImpairDrops + st.LimitDrops
	if sn.sub.Lossy {
		if seeBoth && (st.ImpairDrops == 0 || st.LimitDrops == 0) {
			t.Errorf("lossy subject: %d impairment and %d limit drops; the test should see both", st.ImpairDrops, st.LimitDrops)
		}
	} else if lost != 0 {
		t.Errorf("lossless subject lost %d frames", lost)
	}
	if uint64(len(rx.Seqs))+lost != uint64(len(sn.accepted)) {
		t.Errorf("%d delivered + %d lost != %d accepted", len(rx.Seqs), lost, len(sn.accepted))
	}
	// Deliveries are the accepted frames in order, with the lost ones missing.
	inOrder(t, "frame", sn.accepted, rx.Seqs, rx.Times)
}

func head(s []int) string {
	if len(s) > 20 {
		return fmt.Sprint(s[:20], "...")
	}
	return fmt.Sprint(s)
}

// txFIFO: a burst and then frames at random instants, all fitting; every
// one is delivered (or, lossy, counted), in the order sent.
func txFIFO(t *testing.T, sub TxSubject) {
	s := sched.New()
	rx := &Recorder{S: s}
	sn := &sender{t: t, sub: sub, tx: sub.New(s, 1000, rx)}
	for range 100 {
		sn.send()
	}
	rng := rand.New(rand.NewPCG(1, 2))
	at := time.Duration(0)
	for range 100 {
		at += time.Duration(rng.IntN(300)) * time.Microsecond
		s.At(at, func() { sn.send() })
	}
	drain(t, s)
	if sn.refused != 0 {
		t.Errorf("%d frames refused with room for 1000", sn.refused)
	}
	sn.check(rx, true)
}

// txFull: a queue of 4 offered bursts, at once and while it drains.
func txFull(t *testing.T, sub TxSubject) {
	s := sched.New()
	rx := &Recorder{S: s}
	sn := &sender{t: t, sub: sub, tx: sub.New(s, 4, rx)}
	for k := range 20 {
		s.At(time.Duration(k)*37*time.Microsecond, func() {
			for range 5 {
				sn.send()
			}
		})
	}
	drain(t, s)
	if sn.refused == 0 {
		t.Errorf("a queue of 4 refused none of %d frames in bursts of 5", sn.next)
	}
	sn.check(rx, false)
}

// txOnSpace: a reader fills the transmitter until Full(0) and refills it
// from OnSpace; each full-to-room transition calls OnSpace exactly once.
func txOnSpace(t *testing.T, sub TxSubject) {
	s := sched.New()
	rx := &Recorder{S: s}
	tx := sub.New(s, 3, rx)
	sn := &sender{t: t, sub: sub, tx: tx}
	full, fills, calls := false, 0, 0
	fill := func() {
		for !tx.Full(0) && sn.next < 10_000 {
			sn.send()
		}
		if full = tx.Full(0); full {
			fills++
		}
	}
	tx.SetOnSpace(func() {
		calls++
		if !full {
			t.Errorf("OnSpace call %d at %v: the transmitter was not full", calls, s.Now())
		}
		if tx.Full(0) {
			t.Errorf("OnSpace call %d at %v: still full", calls, s.Now())
		}
		full = false
		if fills < 50 {
			fill()
		}
	})
	fill()
	if fills == 0 {
		t.Fatalf("never full after %d frames in a queue of 3", sn.next)
	}
	drain(t, s)
	if full || calls != fills {
		t.Errorf("filled %d times, OnSpace called %d times, full at the end: %v", fills, calls, full)
	}
	sn.check(rx, false)
}

// drain runs the model until it is idle, within a minute of model time.
func drain(t *testing.T, s *sched.Scheduler) {
	t.Helper()
	s.RunUntil(s.Now() + time.Minute)
	if s.Pending() > 0 {
		t.Fatalf("%d events still pending after a minute of model time", s.Pending())
	}
}

// PortSubject builds one port implementation for the suite.
type PortSubject struct {
	Name string
	// New returns the port on s and transmit, which makes the node send
	// test frame seq of n octets out of the port (a host writing it, a
	// frame arriving on another port that the node forwards through
	// this one). The suite gives the port its transmitter.
	New func(s *sched.Scheduler) (p emulator.Port, transmit func(seq, n int))
	// Dst is the MAC address frames the port receives are sent to (its
	// own, for a router's interface); zero: MACB.
	Dst [6]byte
}

// Port runs the conformance suite on sub: received frames are counted,
// transmitted ones reach the port's transmitter in order, and the port's
// Stats row reports the transmitter's counters.
func Port(t *testing.T, sub PortSubject) {
	s := sched.New()
	p, transmit := sub.New(s)
	tx := &FakeTX{Room: 5}
	p.SetTX(tx)
	drain(t, s)
	base := p.Stats() // what the subject's set-up did
	var rxBytes uint64
	for i := range 10 {
		n := MinFrame + 100*i
		p.Receive(Frame(1000+i, n, sub.Dst))
		rxBytes += uint64(n)
	}
	for i := range 8 {
		transmit(i, MinFrame+10*i)
	}
	drain(t, s)
	row := p.Stats()
	if row.Port != p.PortName() || row.Port == "" {
		t.Errorf("Stats names port %q, PortName %q", row.Port, p.PortName())
	}
	if row.RxFrames-base.RxFrames != 10 || row.RxBytes-base.RxBytes != rxBytes {
		t.Errorf("received 10 frames, %d octets; Stats counts %d, %d", rxBytes, row.RxFrames-base.RxFrames, row.RxBytes-base.RxBytes)
	}
	want := []int{0, 1, 2, 3, 4}
	if fmt.Sprint(tx.Seqs) != fmt.Sprint(want) {
		t.Errorf("transmitter took frames %v, want %v (5 of 8 fit)", tx.Seqs, want)
	}
	st := tx.Stats()
	if row.TxFrames != st.TxFrames || row.TxBytes != st.TxBytes || row.Drops != st.QueueDrops ||
		row.ImpairDrops != st.ImpairDrops+st.LimitDrops || row.Queue != st.Queue || row.QueueHigh != st.QueueHigh || row.Busy != st.BusyTime {
		t.Errorf("Stats row %+v does not report the transmitter's %+v", row, st)
	}
	if st.QueueDrops != 3 {
		t.Errorf("transmitter refused %d frames, want 3", st.QueueDrops)
	}
}

// FakeTX is a Transmitter with room for Room frames that never sends
// them: it keeps the test frames' sequence numbers (other frames, such as
// ARP, pass uncounted) and reports fixed counters besides its own.
type FakeTX struct {
	Room int
	Seqs []int
	st   emulator.ChannelStats
}

// Send implements emulator.Transmitter.
func (f *FakeTX) Send(fr *emulator.Frame) bool {
	if len(fr.Data) < MinFrame || binary.BigEndian.Uint16(fr.Data[12:]) != 0x0800 {
		return true
	}
	if f.Full(len(fr.Data)) {
		f.st.QueueDrops++
		return false
	}
	f.Seqs = append(f.Seqs, Seq(fr))
	f.st.TxFrames++
	f.st.TxBytes += uint64(len(fr.Data))
	return true
}

// Full implements emulator.Transmitter.
func (f *FakeTX) Full(int) bool { return len(f.Seqs) >= f.Room }

// Stats implements emulator.Transmitter; the fields it does not count
// have distinct values for the port's row to copy.
func (f *FakeTX) Stats() emulator.ChannelStats {
	st := f.st
	st.ImpairDrops, st.LimitDrops, st.Queue, st.QueueHigh, st.BusyTime = 7, 11, 13, 17, 19
	return st
}

// SetOnSpace implements emulator.Transmitter.
func (f *FakeTX) SetOnSpace(func()) {}

var _ emulator.Transmitter = (*FakeTX)(nil)

// inOrder checks that the deliveries (sequence numbers and times) are the
// accepted units in order, with lost ones missing, at times that never
// go back.
func inOrder(t *testing.T, unit string, accepted, seqs []int, times []time.Duration) {
	t.Helper()
	j := 0
	for i, seq := range seqs {
		for j < len(accepted) && accepted[j] != seq {
			j++
		}
		if j == len(accepted) {
			t.Fatalf("delivery %d is %s %d: out of order or never accepted (deliveries %v)", i, unit, seq, head(seqs))
		}
		j++
		if i > 0 && times[i] < times[i-1] {
			t.Fatalf("%s delivery %d at %v, before the one before it at %v", unit, i, times[i], times[i-1])
		}
	}
}
