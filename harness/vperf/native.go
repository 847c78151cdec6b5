package vperf

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/atmlab/atmlab/emulator/vhost"
	"github.com/atmlab/atmlab/harness/perf"
)

// openNative opens the test's VC at both ends and checks the SDU sizes
// against the native frame the client's interface carries.
func (r *run) openNative() (cl, sv *vhost.NativeVC, err error) {
	sp := r.t.Spec
	if cl, err = r.cl.OpenNative(sp.VC.Iface, sp.VC.VPI, sp.VC.VCI); err != nil {
		return nil, nil, err
	}
	if sv, err = r.sv.OpenNative(sp.PeerVC.Iface, sp.PeerVC.VPI, sp.PeerVC.VCI); err != nil {
		cl.Close()
		return nil, nil, err
	}
	return cl, sv, nil
}

// sduTooLarge is the data point of an SDU the host's native frame cannot
// carry: atmlab's framing takes 8 octets of the interface's MTU.
func sduTooLarge(size, mtu int) string {
	return fmt.Sprintf("SDU too large: %d octets; a native frame on an interface of MTU %d carries at most %d", size, mtu, perf.MaxAALSDU(mtu))
}

// aalStream: AAL5_STREAM (AAL34_STREAM) sends SDUs for the duration,
// paced by its host's queue as UDP_STREAM is, each with UDP_STREAM's
// sequence number and send time when it has room; the elapsed time ends
// when the host has sent its last cell; the server counts what arrives
// until 300 ms pass without an SDU after the client is done.
func (r *run) aalStream() error {
	cl, sv, err := r.openNative()
	if err != nil {
		return err
	}
	s := r.t.Lab.Sched
	size := r.t.Spec.Message
	if size > perf.MaxAALSDU(r.mtu()) {
		r.res.Error = sduTooLarge(size, r.mtu())
		cl.Close()
		sv.Close()
		r.begin()
		r.finish()
		return nil
	}
	var tally perf.UDPTally
	lastArrival := time.Duration(0)
	sv.OnSDU = func(sdu []byte) {
		lastArrival = s.Now()
		if len(sdu) < udpHeader {
			r.res.MessagesReceived++
		} else if tally.Add(binary.BigEndian.Uint64(sdu), s.Now()-time.Duration(binary.BigEndian.Uint64(sdu[8:]))) {
			r.res.MessagesReceived++
		}
		r.count += uint64(len(sdu))
	}
	msg := make([]byte, size)
	var seq uint64
	sending, flushing := true, false
	base := r.cl.TxFrames
	var wrote uint64
	flushed := r.flushThenDrain(size, &tally, &lastArrival, func() { cl.Close(); sv.Close() })
	var send func()
	send = func() {
		for sending {
			if s.Now() >= r.end {
				sending = false
				break
			}
			if wrote-(r.cl.TxFrames-base) >= UDPQueue {
				return // the drain watch brings us back
			}
			if size >= udpHeader {
				binary.BigEndian.PutUint64(msg[0:8], seq)
				binary.BigEndian.PutUint64(msg[8:16], uint64(s.Now()))
			}
			if err := cl.Send(msg); err != nil {
				r.res.SendErrors++
				return
			}
			seq++
			wrote++
			r.res.MessagesSent++
			r.res.BytesSent += uint64(size)
		}
		if !sending && !flushing {
			flushing = true
			r.cl.OnDrain(nil)
			flushed()
		}
	}
	r.cl.OnDrain(r.cl.Waker(send))
	r.begin()
	s.At(r.end, func() { r.cl.Do(send) })
	r.cl.Do(send)
	return nil
}

// aalRR: AAL5_RR (AAL34_RR) sends a request SDU and waits for the response
// SDU on the VC back; a lost one costs UDP_RR's timeout, then the test goes
// on.
func (r *run) aalRR() error {
	cl, sv, err := r.openNative()
	if err != nil {
		return err
	}
	sp := r.t.Spec
	if n := max(sp.Request, sp.Response); n > perf.MaxAALSDU(r.mtu()) {
		r.res.Error = sduTooLarge(n, r.mtu())
		cl.Close()
		sv.Close()
		r.begin()
		r.finish()
		return nil
	}
	resp := make([]byte, sp.Response)
	sv.OnSDU = func(sdu []byte) {
		if len(sdu) >= 8 && len(resp) >= 8 {
			copy(resp, sdu[:8])
		}
		sv.Send(resp)
	}
	start, answer := r.lossyRR(func(req []byte) error {
		if err := cl.Send(req); err != nil {
			return fmt.Errorf("send: %s", err)
		}
		return nil
	}, func() { cl.Close(); sv.Close() })
	cl.OnSDU = answer
	r.begin()
	r.cl.Do(start)
	return nil
}
