package perf

import (
	"context"
	"encoding/binary"
	"net"
	"net/netip"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/atmlab/atmlab/emulator/vsctp"
	"github.com/pion/sctp"
)

// fakeIP is a raw socket that reads the packets queued in it and keeps
// what is written.
type fakeIP struct {
	in      []fakePacket
	written [][]byte
	to      []*net.IPAddr
}

type fakePacket struct {
	from string
	pkt  []byte
}

func (f *fakeIP) ReadFromIP(b []byte) (int, *net.IPAddr, error) {
	if len(f.in) == 0 {
		return 0, nil, os.ErrDeadlineExceeded
	}
	p := f.in[0]
	f.in = f.in[1:]
	return copy(b, p.pkt), &net.IPAddr{IP: net.ParseIP(p.from)}, nil
}

func (f *fakeIP) WriteToIP(b []byte, a *net.IPAddr) (int, error) {
	f.written = append(f.written, append([]byte(nil), b...))
	f.to = append(f.to, a)
	return len(b), nil
}

func (f *fakeIP) SetReadDeadline(time.Time) error { return nil }
func (f *fakeIP) LocalAddr() net.Addr             { return &net.IPAddr{IP: net.ParseIP("10.0.0.2")} }
func (f *fakeIP) Close() error                    { return nil }

// sctpPacket is an SCTP packet between the ports with a valid checksum,
// carrying tag as its chunk (or a bad checksum).
func sctpPacket(src, dst uint16, tag byte, good bool) []byte {
	p := make([]byte, sctpCommonHeader+4)
	p[sctpCommonHeader] = tag
	setPorts(p, src, dst)
	if !good {
		p[8] ^= 1
	}
	return p
}

// TestRawSCTPReadsOnlyItsAssociation: of the packets a raw socket sees,
// the adapter passes on only those from the peer's address, from the
// peer's port (learnt from its first packet) to its own, with a good
// checksum, each with pion's ports and a checksum that fits them.
func TestRawSCTPReadsOnlyItsAssociation(t *testing.T) {
	f := &fakeIP{in: []fakePacket{
		{"10.0.0.9", sctpPacket(40000, 50000, 1, true)},  // another host
		{"10.0.0.1", sctpPacket(40000, 50001, 2, true)},  // another association's port
		{"10.0.0.1", sctpPacket(40000, 50000, 3, false)}, // bad checksum
		{"10.0.0.1", sctpPacket(40000, 50000, 4, true)},  // the peer's INIT: port 40000 learnt
		{"10.0.0.1", sctpPacket(40001, 50000, 5, true)},  // the peer's other port
		{"10.0.0.1", []byte{1, 2, 3}},                    // too short
		{"10.0.0.1", sctpPacket(40000, 50000, 6, true)},
	}}
	c := newRawSCTP(f, netip.MustParseAddr("10.0.0.1"), 50000, 0, 1480)
	var got []byte
	buf := make([]byte, 1500)
	for {
		n, err := c.Read(buf)
		if err != nil {
			break
		}
		p := buf[:n]
		if binary.BigEndian.Uint16(p[0:2]) != pionPort || binary.BigEndian.Uint16(p[2:4]) != pionPort {
			t.Errorf("packet %d: ports %d→%d, want pion's %d", p[12], binary.BigEndian.Uint16(p[0:2]), binary.BigEndian.Uint16(p[2:4]), pionPort)
		}
		if binary.LittleEndian.Uint32(p[8:12]) != vsctp.Checksum(p) {
			t.Errorf("packet %d: checksum does not fit the rewritten ports", p[12])
		}
		got = append(got, p[12])
	}
	if string(got) != "\x04\x06" || c.skipped.Load() != 5 {
		t.Errorf("passed packets %v, skipped %d; want [4 6], 5 skipped", got, c.skipped.Load())
	}
}

// TestRawSCTPWritesTheAssociationsPorts: pion's packets (ports 5000) go
// to the peer with the association's ports and a checksum over them; a
// server's end writes nothing before it knows the peer's port.
func TestRawSCTPWritesTheAssociationsPorts(t *testing.T) {
	f := &fakeIP{}
	c := newRawSCTP(f, netip.MustParseAddr("10.0.0.1"), 50000, 0, 1480)
	if _, err := c.Write(sctpPacket(pionPort, pionPort, 1, true)); err == nil {
		t.Error("wrote before the peer's port was known")
	}
	c = newRawSCTP(f, netip.MustParseAddr("10.0.0.1"), 50000, 40000, 1480)
	pkt := sctpPacket(pionPort, pionPort, 7, true)
	if n, err := c.Write(pkt); err != nil || n != len(pkt) {
		t.Fatalf("Write: %d, %v", n, err)
	}
	w := f.written[0]
	if binary.BigEndian.Uint16(w[0:2]) != 50000 || binary.BigEndian.Uint16(w[2:4]) != 40000 ||
		binary.LittleEndian.Uint32(w[8:12]) != vsctp.Checksum(w) || f.to[0].String() != "10.0.0.1" {
		t.Errorf("wrote % x to %v", w, f.to[0])
	}
	if binary.BigEndian.Uint16(pkt[0:2]) != pionPort {
		t.Error("Write changed the caller's packet")
	}
	if _, err := c.Write(make([]byte, 1481)); err == nil {
		t.Error("wrote a packet larger than the path allows")
	}
}

// TestSCTPChecksumKnownAnswer: RFC 9260's CRC32c over a packet, as
// Wireshark checks it (the known answer is the CRC32c test vector of
// RFC 3720 B.4: 32 octets of zero give 0xaa36918a).
func TestSCTPChecksumKnownAnswer(t *testing.T) {
	p := make([]byte, 32)
	p[8], p[9], p[10], p[11] = 0xff, 0xff, 0xff, 0xff // the field counts as zero
	if got := vsctp.Checksum(p); got != 0x8a9136aa {
		t.Errorf("CRC32c of 32 zero octets = %#08x, want 0x8a9136aa (0xaa36918a in wire order)", got)
	}
}

// TestKernelSCTPIsChosenWhenTheKernelHasIt: the kernel's SCTP measures
// when a probe says the kernel has it (a fake: CI's kernel may lack it),
// pion over raw IP otherwise, and the result names which.
func TestKernelSCTPIsChosenWhenTheKernelHasIt(t *testing.T) {
	if s := chooseSCTP(func() bool { return true }); s.Name() != "kernel" {
		t.Errorf("kernel with SCTP: chose %q", s.Name())
	}
	if s := chooseSCTP(func() bool { return false }); s.Name() != "pion/sctp "+pionVersion+" (userspace, raw IP 132)" {
		t.Errorf("kernel without SCTP: chose %q", s.Name())
	}
}

// TestPionVersionIsGoMods: the version the results name is the one
// go.mod builds.
func TestPionVersionIsGoMods(t *testing.T) {
	b, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	if want := "github.com/pion/sctp " + pionVersion; !strings.Contains(string(b), want) {
		t.Errorf("go.mod does not require %s", want)
	}
}

// TestPionPacketsFitItsReadBuffer: pion's packets are the path MTU less
// the IPv4 header, and at most the 8192 octets pion reads a packet into.
func TestPionPacketsFitItsReadBuffer(t *testing.T) {
	for mtu, want := range map[int]int{1500: 1480, 9000: 8192, 65536: 8192} {
		if got := pionPacket(mtu); got != want {
			t.Errorf("MTU %d: packets of %d, want %d", mtu, got, want)
		}
	}
}

// TestSCTPPacketMTUIsTheStacks: a ceiling for pion's figures takes its
// 8192-octet packets; the kernel's uses the path MTU.
func TestSCTPPacketMTUIsTheStacks(t *testing.T) {
	if got := SCTPPacketMTU((pionSCTP{}).Name(), 9000); got != 8212 {
		t.Errorf("pion at MTU 9000: %d", got)
	}
	if got := SCTPPacketMTU((pionSCTP{}).Name(), 1500); got != 1500 {
		t.Errorf("pion at MTU 1500: %d", got)
	}
	if got := SCTPPacketMTU("kernel", 9000); got != 9000 {
		t.Errorf("kernel at MTU 9000: %d", got)
	}
}

// initIP is a raw socket that keeps the first packet written to it and
// never reads one.
type initIP struct {
	first  chan []byte
	closed chan struct{}
}

func (f *initIP) ReadFromIP([]byte) (int, *net.IPAddr, error) {
	<-f.closed
	return 0, nil, net.ErrClosed
}
func (f *initIP) WriteToIP(b []byte, _ *net.IPAddr) (int, error) {
	select {
	case f.first <- append([]byte(nil), b...):
	default:
	}
	return len(b), nil
}
func (f *initIP) SetReadDeadline(time.Time) error { return nil }
func (f *initIP) LocalAddr() net.Addr             { return &net.IPAddr{IP: net.ParseIP("10.0.0.2")} }
func (f *initIP) Close() error                    { return nil }

// TestPionAdvertisesLinuxsDefaultWindow: with no -s/-S, pion's INIT
// offers Linux's default SCTP window (865,500 octets, the model's too),
// not pion's own 1 MiB, and a requested buffer when one is given.
func TestPionAdvertisesLinuxsDefaultWindow(t *testing.T) {
	for requested, want := range map[int]uint32{0: 865500, 1 << 25: 1 << 25} {
		f := &initIP{first: make(chan []byte, 1), closed: make(chan struct{})}
		rc := newRawSCTP(f, netip.MustParseAddr("10.0.0.1"), 50000, 40000, 1480)
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		go func() {
			var opts []sctp.ClientOption
			for _, o := range pionOptions(rc, 1480, pionBufs(requested)) {
				opts = append(opts, o)
			}
			sctp.ClientContext(ctx, opts...)
		}()
		pkt := <-f.first
		cancel()
		close(f.closed)
		p, err := vsctp.Parse(pkt)
		if err != nil || len(p.Chunks) == 0 {
			t.Fatalf("requested %d: first packet % x: %v", requested, pkt, err)
		}
		in, err := vsctp.ParseInit(p.Chunks[0])
		if err != nil {
			t.Fatalf("requested %d: first chunk is no INIT: %v", requested, err)
		}
		if in.Rwnd != want {
			t.Errorf("requested %d: INIT offers a window of %d, want %d", requested, in.Rwnd, want)
		}
	}
	if sctpDefaultBuf != vsctp.DefaultBuf || vsctp.DefaultBuf != 865500 {
		t.Errorf("default buffers: userspace %d, model %d", sctpDefaultBuf, vsctp.DefaultBuf)
	}
}
