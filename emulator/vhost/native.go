package vhost

import (
	"encoding/binary"
	"errors"
	"fmt"

	"gvisor.dev/gvisor/pkg/buffer"
	"gvisor.dev/gvisor/pkg/tcpip/stack"

	"github.com/atmlab/atmlab/cells/native"
	"github.com/atmlab/atmlab/emulator"
)

// NativeVC is a virtual host's end of a native AAL API VC (cells/native):
// the host side of what `atmlab perf` opens as a packet socket in real
// time. Send puts an SDU in a native frame into the host's queue in front
// of its NIC, beside netstack's own frames; SDUs that arrive on the VC go
// to OnSDU instead of the stack. Call it only on the driver's goroutine.
type NativeVC struct {
	h        *Host
	c        *nic
	VPI, VCI uint16
	// OnSDU is called with each SDU the VC delivers (valid only during
	// the call), on the driver's goroutine, followed by the barrier.
	OnSDU func(sdu []byte)
	// Dropped counts SDUs Send refused because the host's queue was full.
	Dropped uint64
}

// ErrQueueFull is Send's error when the host's queue in front of its NIC
// holds QueueFrames frames already.
var ErrQueueFull = errors.New("host queue full")

// OpenNative opens VC vpi/vci on the host's interface iface; one end a
// VC, as a PVC has one owner.
func (h *Host) OpenNative(iface string, vpi, vci uint16) (*NativeVC, error) {
	for _, c := range h.nics {
		if c.port.Name != h.Name+":"+iface {
			continue
		}
		k := uint32(vpi)<<16 | uint32(vci)
		if c.native[k] != nil {
			return nil, fmt.Errorf("%s: VC %d/%d is open already", c.port.Name, vpi, vci)
		}
		v := &NativeVC{h: h, c: c, VPI: vpi, VCI: vci}
		if c.native == nil {
			c.native = map[uint32]*NativeVC{}
		}
		c.native[k] = v
		return v, nil
	}
	return nil, fmt.Errorf("host %s has no interface %s", h.Name, iface)
}

// Close closes the VC: what arrives on it afterwards is dropped.
func (v *NativeVC) Close() { delete(v.c.native, uint32(v.VPI)<<16|uint32(v.VCI)) }

// Send queues sdu on the VC; the host's barrier hands it to the NIC. It
// returns ErrQueueFull when the host's queue is full.
func (v *NativeVC) Send(sdu []byte) error {
	d := make([]byte, emulator.EtherHeader, emulator.EtherHeader+native.HeaderLen+len(sdu))
	mac := native.VCMAC(v.VPI, v.VCI)
	copy(d, mac[:])
	copy(d[6:], v.c.ch.LinkAddress())
	binary.BigEndian.PutUint16(d[12:], native.EtherType)
	d, err := native.Append(d, v.VPI, v.VCI, sdu)
	if err != nil {
		return err
	}
	pkt := stack.NewPacketBuffer(stack.PacketBufferOptions{Payload: buffer.MakeWithData(d)})
	defer pkt.DecRef()
	var l stack.PacketBufferList
	l.PushBack(pkt)
	if n, _ := v.c.ch.WritePackets(l); n == 0 {
		v.Dropped++
		return ErrQueueFull
	}
	return nil
}

// nativeIn hands a native frame to the VC it names; false if it is not
// one (the stack then sees it, and drops it as an unknown EtherType).
func (c *nic) nativeIn(d []byte) bool {
	if len(d) < emulator.EtherHeader || binary.BigEndian.Uint16(d[12:]) != native.EtherType {
		return false
	}
	h, sdu, err := native.Parse(d[emulator.EtherHeader:])
	if err != nil {
		return true
	}
	if v := c.native[uint32(h.VPI)<<16|uint32(h.VCI)]; v != nil && v.OnSDU != nil {
		v.OnSDU(sdu)
	}
	return true
}
