//go:build linux

package kernel

import (
	"fmt"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/atmlab/atmlab/cells"
	"github.com/atmlab/atmlab/emulator"
	"github.com/atmlab/atmlab/emulator/atm"
	"github.com/atmlab/atmlab/emulator/units"
	"github.com/atmlab/atmlab/topologies"
)

// Ethernet overhead a TAP frame does not carry but the wire does: FCS,
// preamble and SFD, inter-frame gap (IEEE 802.3).
const (
	wireOverhead = emulator.EtherOverhead // 24: a size table's form of emulator.EtherWire
	wireMinimum  = emulator.EtherMinWire  // 84
	qdiscFrames  = 1000                   // the token bucket's queue, as a real NIC's txqueuelen
	bucketFrames = 8                      // the token bucket's least burst, in frames (see pushback)
	// tapRing is the TAP's ring (its txqueuelen), the NIC's hardware ring
	// as the host sees it: deep enough to hold a whole TCP window (tcp_wmem
	// max is 4 MB here), so that even when the emulator itself falls behind
	// (1G on two cores) TCP is slowed by queueing, not by drops at the TAP.
	tapRing = 4096
)

// openTAP creates a TAP named name inside ns and returns its descriptor,
// non-blocking and owned by the caller alone: it is opened with raw
// syscalls, not as an os.File, so Go's netpoller never sees it and a frame
// costs the loop one read or write and nothing else (the netpoller's
// wake-ups took ~18 % of the process's CPU). flags are added to
// IFF_TAP|IFF_NO_PI (IFF_VNET_HDR for super-frames). The device exists only
// in ns (it is created there) and disappears when the descriptor is closed,
// even after kill -9.
func openTAP(ns netns.NsHandle, name string, flags uint16) (int, error) {
	fd := -1
	err := inNamespace(ns, func() error {
		var err error
		fd, err = createTAP(name, flags)
		return err
	})
	if err != nil {
		return -1, fmt.Errorf("create tap %s: %w", name, err)
	}
	return fd, nil
}

// createTAP opens /dev/net/tun and attaches a new TAP device named name to
// it, in the calling thread's network namespace.
func createTAP(name string, flags uint16) (int, error) {
	fd, err := unix.Open("/dev/net/tun", unix.O_RDWR|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("open /dev/net/tun: %w (is the tun module loaded?)", err)
	}
	ifr, err := unix.NewIfreq(name)
	if err == nil {
		ifr.SetUint16(unix.IFF_TAP | unix.IFF_NO_PI | flags)
		err = unix.IoctlIfreq(fd, unix.TUNSETIFF, ifr)
	}
	if err == nil && flags&unix.IFF_VNET_HDR != 0 {
		err = setOffloads(fd)
	}
	if err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

// setupHost gives a host's interfaces their MAC, MTU, addresses, qdisc and
// routes, and writes its sysctls.
func setupHost(lab *topologies.Lab, node *topologies.Node, ns netns.NsHandle) error {
	h, err := netlink.NewHandleAt(ns)
	if err != nil {
		return err
	}
	defer h.Close()
	nsName := lab.Namespace(node.Name)
	for _, iface := range node.Interfaces {
		link, err := h.LinkByName(iface.Name)
		if err != nil {
			return fmt.Errorf("%s: find %s: %w", nsName, iface.Name, err)
		}
		steps := []struct {
			what string
			err  func() error
		}{
			{"set mac", func() error {
				return h.LinkSetHardwareAddr(link, lab.MAC(topologies.Endpoint{Node: node.Name, Port: iface.Name}))
			}},
			{"set mtu", func() error { return h.LinkSetMTU(link, iface.MTU) }},
			{"set txqueuelen", func() error {
				return h.LinkSetTxQLen(link, tapRing)
			}},
			{"set up", func() error { return h.LinkSetUp(link) }},
		}
		for _, s := range steps {
			if err := s.err(); err != nil {
				return fmt.Errorf("%s: %s %s: %w", nsName, s.what, iface.Name, err)
			}
		}
		if iface.IPv4.IsValid() {
			addr := &netlink.Addr{IPNet: &net.IPNet{IP: iface.IPv4.Addr().AsSlice(), Mask: net.CIDRMask(iface.IPv4.Bits(), 32)}}
			if err := h.AddrAdd(link, addr); err != nil {
				return fmt.Errorf("%s: address %s on %s: %w", nsName, iface.IPv4, iface.Name, err)
			}
		}
		e := topologies.Endpoint{Node: node.Name, Port: iface.Name}
		if err := pushback(nsName, iface.Name, iface.MTU, wireOf(lab, e), offloads(lab, e)); err != nil {
			return err
		}
		if offloads(lab, e) {
			if err := setGSOStab(ns, iface.Name, iface.MTU); err != nil {
				return fmt.Errorf("%s: %w", nsName, err)
			}
		}
	}
	for _, r := range node.Routes {
		route := &netlink.Route{
			Dst: &net.IPNet{IP: r.To.Addr().AsSlice(), Mask: net.CIDRMask(r.To.Bits(), 32)},
			Gw:  r.Via.AsSlice(),
		}
		if err := h.RouteAdd(route); err != nil {
			return fmt.Errorf("%s: route to %s via %s: %w", nsName, r.To, r.Via, err)
		}
	}
	kv, err := bufferSysctls(lab, node, ns)
	if err != nil {
		return fmt.Errorf("%s: size TCP buffers: %w", nsName, err)
	}
	for _, s := range node.Sysctls {
		kv = append(kv, sysctl{s.Key, s.Value})
	}
	return setSysctls(ns, kv)
}

// wire is how the token bucket in front of a host's TAP bills a frame: a
// rate and tc size-table arguments that turn a frame's length into what it
// takes on the wire.
type wire struct {
	rate     units.BitRate
	stab     func(mtu int) []string
	overhead int // octets stab adds to every frame
	perFrame int // octets the size table adds to a frame beyond its wire overhead (a CPU's per-packet cost)
	// billed, when set, is the wire octets of a TAP frame of n octets,
	// which a size table filled through netlink bills exactly (stab.go);
	// stab is then unused.
	billed func(n int) int
	// nativeIP, when native is set, is the overhead the IP bucket of an
	// interface with native AAL VCs counts (native.go).
	nativeIP int
	native   bool
}

// wireOf returns the billing of the link a host interface is on. Ethernet
// adds FCS, preamble and gap and pads to the minimum frame. An ATM link
// bills cells at the cell-stream rate, 53 octets for each cell the frame's
// packet takes with its encapsulation (AAL5's 48-octet or AAL3/4's
// 44-octet segments), through a size table with an entry per frame length.
func wireOf(lab *topologies.Lab, e topologies.Endpoint) wire {
	link := linkWire(lab, e)
	c := lab.Node(e.Node).CPU
	if c == nil || c.Copy <= 0 && c.PerPacket <= 0 {
		return link
	}
	// A host slower than its link: the bucket runs at the host's copy rate,
	// billing its per-packet cost as octets, so that the host's own queues
	// hold what its CPU cannot take yet. A host with a per-packet cost only
	// is billed at 80 Gbit/s (0.1 ns an octet), where length hardly counts.
	copyRate := c.Copy
	if copyRate <= 0 {
		copyRate = 80 * units.Gbps
	}
	overhead := int(c.PerPacket.Seconds() * float64(copyRate) / 8) // octets copied in that time
	cpu := wire{rate: copyRate, stab: func(int) []string {
		return []string{"overhead", strconv.Itoa(overhead), "mpu", "1"} // tc refuses a table that changes nothing
	}, overhead: overhead, perFrame: overhead}
	n := lab.Node(e.Node).Interface(e.Port).MTU + emulator.EtherHeader
	frame, onLink := float64(n), float64(n+wireOverhead)
	if link.billed != nil {
		onLink = float64(link.billed(n))
	}
	if (frame+float64(overhead))/float64(cpu.rate) > onLink/float64(link.rate) {
		return cpu
	}
	return link
}

// bucket is the token bucket pushback puts in front of a host's TAP, as
// the loop needs it to date frames back (stage.go).
type bucket struct {
	rate  units.BitRate
	burst int             // octets
	frame int             // octets billed for a full-sized frame: no TAP frame costs more
	cost  func(n int) int // octets billed for a TAP frame of n octets, or fewer
}

// bucket returns the token bucket pushback makes for w. It holds 2 ms of
// line rate, and at least 8 frames, so that when its own timer fires late
// the host catches up instead of losing the time. At 10M, 2 ms is under
// two frames: with two, the host's seconds read up to 3 % short here and a
// CI run's UDP at 10M up to 9 % (the sender's own intervals fell, so the
// bucket, not the emulator, lost the time). It is no bigger because a
// burst after idle counts in netperf's figures: UDP_STREAM divides what
// was received by the sender's time (a 64-frame bucket read a 3 s point
// at OC-3c, MTU 9180, 1.1 % above its ceiling).
func (w wire) bucket(mtu int) bucket {
	frame := mtu + emulator.EtherHeader + wireOverhead + w.perFrame // as the size table counts it
	if w.billed != nil {
		frame = w.billed(mtu + emulator.EtherHeader)
	}
	return bucket{
		rate:  w.rate,
		burst: max(bucketFrames*frame, int(int64(w.rate)/8/500)),
		frame: frame,
		cost:  w.octets,
	}
}

// octets is what the bucket bills for a TAP frame of n octets, or a little
// less: Ethernet's minimum frame is left out.
func (w wire) octets(n int) int {
	if w.billed != nil {
		return w.billed(n)
	}
	return n + w.overhead
}

// linkWire is the billing of the link itself.
func linkWire(lab *topologies.Lab, e topologies.Endpoint) wire {
	l := lab.LinkOf(e)
	dir := l.AB
	if l.B == e {
		dir = l.BA
	}
	if l.ATM == nil {
		return wire{rate: dir.Rate, overhead: wireOverhead, stab: func(int) []string {
			return []string{"overhead", strconv.Itoa(wireOverhead), "mpu", strconv.Itoa(wireMinimum)}
		}}
	}
	phy, aal, encap := l.ATM.Layers()
	ipOverhead, native := nativeIP(lab, e)
	return wire{rate: units.BitRate(math.Ceil(phy.CellStreamRate())), billed: atmBilled(aal, encap), native: native, nativeIP: ipOverhead}
}

// atmBilled is the octets of a TAP frame of n octets on an ATM link at the
// cell-stream rate: 53 a cell, for each cell the adapter sends its packet
// in (atm.Billing).
func atmBilled(aal atm.AAL, encap cells.Encap) func(n int) int {
	b := atm.Billing{AAL: aal, Encap: encap}
	return func(n int) int { return cells.Size * b.FrameCells(n) }
}

// pushback makes the host's own queues hold what its NIC cannot send yet
// (docs/design.md, modelling rule 4). A TAP frees a frame's socket memory as soon as
// the frame enters its ring and drops when the ring is full, so a sender
// would never block. A token bucket on the TAP at the emulated line rate,
// counting each frame's wire overhead through a size table, holds frames in
// the qdisc instead: sockets block on their send buffers as on a real NIC.
// The emulator still times every frame itself; the qdisc only keeps the
// host from outrunning it. Segmentation offload is turned off so every
// frame the qdisc counts is one wire frame, unless the TAP takes
// super-frames (offload): then a size table that bills each super-frame as
// its segments follows (setGSOStab).
func pushback(ns, dev string, mtu int, w wire, offload bool) error {
	b := w.bucket(mtu)
	seg := "off"
	if offload {
		seg = "on"
	}
	cmds := [][]string{{"ethtool", "-K", dev, "gso", seg, "tso", seg, "gro", "off"}}
	if w.stab != nil {
		qdisc := append([]string{"tc", "qdisc", "replace", "dev", dev, "root", "stab"}, w.stab(mtu)...)
		cmds = append(cmds, append(qdisc, "tbf", "rate", strconv.FormatInt(int64(w.rate), 10)+"bit",
			"burst", strconv.Itoa(b.burst), "limit", strconv.Itoa(qdiscFrames*b.frame)))
	}
	for _, c := range cmds {
		args := append([]string{"netns", "exec", ns}, c...)
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			return fmt.Errorf("%s: %s: %v: %s (is %s installed?)", ns, strings.Join(c, " "), err, strings.TrimSpace(string(out)), c[0])
		}
	}
	if w.billed == nil {
		return nil
	}
	nsh, err := netns.GetFromPath(filepath.Join(NetnsDir, ns))
	if err != nil {
		return fmt.Errorf("%s: %w", ns, err)
	}
	defer nsh.Close()
	if w.native {
		return replaceNativeTBFs(ns, dev, uint64(w.rate), b.burst, qdiscFrames*b.frame, w.nativeIP)
	}
	if err := replaceTBF(nsh, dev, uint64(w.rate), b.burst, qdiscFrames*b.frame, newSizeTable(mtu+emulator.EtherHeader, w.billed)); err != nil {
		return fmt.Errorf("%s: %w", ns, err)
	}
	return nil
}

// bufferSysctls sizes a host's TCP socket buffers for the lab: it raises
// the third value of the namespace's net.ipv4.tcp_rmem and tcp_wmem (the
// most autotuning grows a socket to) to lab.TCPBufferMax, keeping their
// minimum and default, so that a tool run with its default buffers can
// fill the host's link over the lab's round trip. A key the lab file sets
// itself is left to it: the user's value wins. The UDP and SO_RCVBUF
// defaults (net.core.rmem_default and the like) are host-wide, which a
// namespace cannot write.
func bufferSysctls(lab *topologies.Lab, node *topologies.Node, ns netns.NsHandle) ([]sysctl, error) {
	want := lab.TCPBufferMax(node.Name)
	if want == 0 {
		return nil, nil
	}
	var kv []sysctl
	err := inNamespace(ns, func() error {
		for _, key := range []string{"net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem"} {
			if slices.ContainsFunc(node.Sysctls, func(s topologies.Sysctl) bool { return s.Key == key }) {
				continue
			}
			b, err := os.ReadFile("/proc/sys/" + strings.ReplaceAll(key, ".", "/"))
			if err != nil {
				return err
			}
			if v, ok := raiseMax(string(b), want); ok {
				kv = append(kv, sysctl{key, v})
			}
		}
		return nil
	})
	return kv, err
}

// raiseMax returns a "min default max" sysctl value with its max raised to
// at least want, and whether that changed it.
func raiseMax(cur string, want int) (string, bool) {
	f := strings.Fields(cur)
	if len(f) != 3 {
		return "", false
	}
	if n, err := strconv.Atoi(f[2]); err != nil || n >= want {
		return "", false
	}
	return f[0] + " " + f[1] + " " + strconv.Itoa(want), true
}
