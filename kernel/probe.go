//go:build linux

package kernel

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// The veth probe: what a ping costs between two namespaces joined by a
// plain veth pair on this machine, measured once when a lab comes up, so
// that the lab's own round trips can be read beside it (the emulator's
// added latency is a lab's RTT minus this and the model's). The probe's two
// namespaces are the lab's own, named <lab>-probe-a and <lab>-probe-b (a
// node's name has no hyphen, so no node's namespace has these names) and
// marked like the hosts', so Down removes them if a run dies mid-probe; Up
// removes them as soon as the probe is done, before any traffic, so the
// probe is never on a measured path.

// ProbeNamespaces are the probe's namespaces for lab.
func ProbeNamespaces(lab string) [2]string {
	return [2]string{lab + "-probe-a", lab + "-probe-b"}
}

// probePings is how many echoes the probe times, after one that warms the
// neighbour cache (and waits for the pair's carrier).
const probePings = 20

var probeA, probeB = net.IPv4(192, 0, 2, 1).To4(), net.IPv4(192, 0, 2, 2).To4() // TEST-NET-1, in the probe's namespaces only

// probeVeth measures the median ping RTT over a veth pair between two
// throwaway namespaces of lab, and removes them.
func probeVeth(lab string) (rtt time.Duration, err error) {
	names := ProbeNamespaces(lab)
	var made []string
	defer func() {
		if _, rerr := Remove(made); rerr != nil && err == nil {
			err = rerr
		}
	}()
	var ns [2]netns.NsHandle
	for i, name := range names {
		h, err := createNamespace(lab, name)
		if h.IsOpen() || err == nil {
			made = append(made, name)
			defer h.Close()
		}
		if err != nil {
			return 0, err
		}
		ns[i] = h
	}
	if err := joinProbe(ns); err != nil {
		return 0, fmt.Errorf("veth probe: %w", err)
	}
	var fd int
	if err := inNamespace(ns[0], func() (err error) {
		fd, err = unix.Socket(unix.AF_INET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.IPPROTO_ICMP)
		return err
	}); err != nil {
		return 0, fmt.Errorf("veth probe: icmp socket: %w", err)
	}
	defer unix.Close(fd)
	// A veth pair just set up drops what is sent before its carrier is up:
	// the first echo is retried until one comes back.
	for try := 0; ; try++ {
		if _, err = pingFD(fd, probeB, 1, 50*time.Millisecond); err == nil || try == 40 {
			break
		}
	}
	if err != nil {
		return 0, fmt.Errorf("veth probe: %w", err)
	}
	rtts, err := pingFD(fd, probeB, probePings, time.Second)
	if err != nil {
		return 0, fmt.Errorf("veth probe: %w", err)
	}
	return median(rtts), nil
}

// joinProbe makes a veth pair between the two namespaces, addresses its
// ends and sets them up.
func joinProbe(ns [2]netns.NsHandle) error {
	var h [2]*netlink.Handle
	for i := range ns {
		var err error
		if h[i], err = netlink.NewHandleAt(ns[i]); err != nil {
			return err
		}
		defer h[i].Close()
	}
	veth := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: "probe"}, PeerName: "probe", PeerNamespace: netlink.NsFd(ns[1])}
	if err := h[0].LinkAdd(veth); err != nil {
		return fmt.Errorf("add veth pair: %w", err)
	}
	for i, ip := range []net.IP{probeA, probeB} {
		link, err := h[i].LinkByName("probe")
		if err != nil {
			return err
		}
		if err := h[i].AddrAdd(link, &netlink.Addr{IPNet: &net.IPNet{IP: ip, Mask: net.CIDRMask(30, 32)}}); err != nil {
			return err
		}
		if err := h[i].LinkSetUp(link); err != nil {
			return err
		}
	}
	return nil
}

// pingFD sends n ICMP echo requests to dst one at a time on a raw ICMP
// socket and returns each round trip, from just before the send to just
// after the reply's receive (what ping's own figure spans).
func pingFD(fd int, dst net.IP, n int, timeout time.Duration) ([]time.Duration, error) {
	tv := unix.NsecToTimeval(int64(timeout))
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		return nil, err
	}
	to := &unix.SockaddrInet4{}
	copy(to.Addr[:], dst)
	id := uint16(os.Getpid())
	buf := make([]byte, 1500)
	var rtts []time.Duration
	for range n {
		pingSeq++
		seq := pingSeq
		req := echoRequest(id, seq, 56)
		t0 := time.Now()
		if err := unix.Sendto(fd, req, 0, to); err != nil {
			return nil, fmt.Errorf("send echo: %w", err)
		}
		for {
			m, _, err := unix.Recvfrom(fd, buf, 0)
			if errors.Is(err, unix.EINTR) {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("no echo reply from %v within %v: %w", dst, timeout, err)
			}
			if isReply(buf[:m], id, seq) {
				break
			}
		}
		rtts = append(rtts, time.Since(t0))
	}
	return rtts, nil
}

// pingSeq numbers echoes, so a late reply to a retried one is not taken
// for the next one's.
var pingSeq uint16

// echoRequest is an ICMP echo request with size bytes of payload (ping's
// default 56), its checksum filled in.
func echoRequest(id, seq uint16, size int) []byte {
	b := make([]byte, 8+size)
	b[0] = 8 // echo request
	binary.BigEndian.PutUint16(b[4:], id)
	binary.BigEndian.PutUint16(b[6:], seq)
	for i := range size {
		b[8+i] = byte(i)
	}
	binary.BigEndian.PutUint16(b[2:], inetChecksum(b))
	return b
}

// isReply reports whether pkt (an IPv4 packet, as a raw socket reads it) is
// the echo reply to id and seq.
func isReply(pkt []byte, id, seq uint16) bool {
	if len(pkt) < 20 {
		return false
	}
	ihl := int(pkt[0]&0x0f) * 4
	if len(pkt) < ihl+8 {
		return false
	}
	icmp := pkt[ihl:]
	return icmp[0] == 0 && binary.BigEndian.Uint16(icmp[4:]) == id && binary.BigEndian.Uint16(icmp[6:]) == seq
}

// inetChecksum is the Internet checksum (RFC 1071) of b.
func inetChecksum(b []byte) uint16 {
	var sum uint32
	for i := 0; i+1 < len(b); i += 2 {
		sum += uint32(binary.BigEndian.Uint16(b[i:]))
	}
	if len(b)%2 == 1 {
		sum += uint32(b[len(b)-1]) << 8
	}
	for sum > 0xffff {
		sum = sum>>16 + sum&0xffff
	}
	return ^uint16(sum)
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 0 {
		return (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return s[len(s)/2]
}
