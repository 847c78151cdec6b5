//go:build linux

package kernel

import (
	"encoding/binary"
	"fmt"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/atmlab/atmlab/emulator"
	"github.com/atmlab/atmlab/emulator/units"
	"github.com/atmlab/atmlab/topologies"
)

// Segmentation offload: on fast Ethernet links a host's TAP is opened with
// IFF_VNET_HDR and TSO/USO on, so the host's kernel hands the emulator TCP
// and UDP super-frames of up to gsoMaxSize octets (one read instead of
// forty) and its TCP stack works on large segments, as with a real NIC's
// TSO. The emulator cuts every super-frame into wire frames at the NIC
// (emulator.Segment); the models see only those.
const (
	// offloadRate is the slowest link that gets offloads: below it the
	// per-frame path keeps up (and ATM, hub and CPU-limited hosts keep
	// the size tables they have).
	offloadRate = units.Gbps
	// gsoMaxSize caps the host's super-frames so that the size table
	// below (2-octet slots, u16 entries) covers every one: 60,000 octets
	// are at most 64,000 on the wire.
	gsoMaxSize = 60000
	// gsoHeaders is the headers every TCP segment repeats in the size
	// table's reckoning: Ethernet, IPv4 and TCP with timestamps (Linux's
	// default), 14 + 20 + 32 octets.
	gsoHeaders = emulator.EtherHeader + 20 + 32
)

// tun offload flags (linux/if_tun.h).
const (
	tunFCsum = 0x01
	tunFTSO4 = 0x02
	tunFTSO6 = 0x04
	tunFECN  = 0x08
	tunFUSO4 = 0x20
	tunFUSO6 = 0x40
)

// offloads reports whether a host interface gets super-frames: an Ethernet
// link of offloadRate or faster in the direction it sends, and a host
// without a CPU limit (whose token bucket bills its copy rate instead).
func offloads(lab *topologies.Lab, e topologies.Endpoint) bool {
	l := lab.LinkOf(e)
	if l == nil || l.ATM != nil {
		return false
	}
	if lab.Node(e.Node).Interface(e.Port).MTU+emulator.EtherHeader > gsoMaxSize/2 {
		return false // a jumbo MTU beyond any Ethernet's: the size table would not hold two frames
	}
	w := wireOf(lab, e)
	return w.perFrame == 0 && w.rate >= offloadRate && w.rate == linkWire(lab, e).rate
}

// setOffloads tells the TAP behind fd which super-frames the emulator
// takes: checksum offload, TSO for IPv4 and IPv6 with ECN, and USO where
// the kernel knows it (Linux 6.2 and later).
func setOffloads(fd int) error {
	base := tunFCsum | tunFTSO4 | tunFTSO6 | tunFECN
	if err := unix.IoctlSetInt(fd, unix.TUNSETOFFLOAD, base|tunFUSO4|tunFUSO6); err == nil {
		return nil
	}
	if err := unix.IoctlSetInt(fd, unix.TUNSETOFFLOAD, base); err != nil {
		return fmt.Errorf("tun offloads: %w", err)
	}
	return nil
}

// gsoStab is the size table (tc-stab(8)) that bills what a host's TBF
// sees as the wire frames it becomes. The kernel bills a packet by its
// skb->len through the size table once, however many segments a GSO skb
// holds (__qdisc_calculate_pkt_len: the table's result replaces the
// gso_segs x hdr_len accounting of qdisc_pkt_len_init), so the table does
// the segmenting: a length up to the MTU is one frame (FCS, preamble and
// gap, padded to 64 octets: the "overhead 24 mpu 84" of the per-frame
// path); a longer one is ceil(payload / MSS) segments, each with the
// headers again and its own 24 octets. Slots are 2 octets wide, each
// billed as its even length (odd lengths one octet short). It returns
// the table's tc_sizespec and its entries.
func gsoStab(mtu int) (spec []byte, data []uint16) {
	const cellLog = 1
	tsize := gsoMaxSize>>cellLog + 1
	mss := mtu - (gsoHeaders - emulator.EtherHeader)
	data = make([]uint16, tsize)
	for slot := range data {
		n := slot << cellLog
		if n <= mtu+emulator.EtherHeader {
			data[slot] = uint16(emulator.EtherWire(n))
			continue
		}
		payload := n - gsoHeaders
		segs := (payload + mss - 1) / mss
		data[slot] = uint16(payload + segs*(gsoHeaders+wireOverhead))
	}
	// struct tc_sizespec: cell_log, size_log, cell_align, overhead,
	// linklayer, mpu, mtu, tsize.
	spec = make([]byte, 24)
	spec[0] = cellLog
	ne := binary.NativeEndian
	ne.PutUint32(spec[20:], uint32(tsize))
	return spec, data
}

// setGSOStab gives the root qdisc of dev in ns the size table of gsoStab
// and caps the device's super-frames at gsoMaxSize. tc cannot load a table
// of its own, so it goes through netlink as a change of the qdisc.
func setGSOStab(ns netns.NsHandle, dev string, mtu int) error {
	h, err := netlink.NewHandleAt(ns)
	if err != nil {
		return err
	}
	defer h.Close()
	link, err := h.LinkByName(dev)
	if err != nil {
		return err
	}
	if err := h.LinkSetGSOMaxSize(link, gsoMaxSize); err != nil {
		return fmt.Errorf("gso_max_size %d on %s: %w", gsoMaxSize, dev, err)
	}
	spec, data := gsoStab(mtu)
	tab := make([]byte, 2*len(data))
	for i, v := range data {
		binary.NativeEndian.PutUint16(tab[2*i:], v)
	}
	req := nl.NewNetlinkRequest(unix.RTM_NEWQDISC, unix.NLM_F_ACK)
	req.AddData(&nl.TcMsg{Family: nl.FAMILY_ALL, Ifindex: int32(link.Attrs().Index), Parent: netlink.HANDLE_ROOT})
	req.AddData(nl.NewRtAttr(nl.TCA_KIND, nl.ZeroTerminated("tbf")))
	stab := nl.NewRtAttr(nl.TCA_STAB, nil)
	stab.AddRtAttr(1, spec) // TCA_STAB_BASE
	stab.AddRtAttr(2, tab)  // TCA_STAB_DATA
	req.AddData(stab)
	err = inNamespace(ns, func() error {
		_, err := req.Execute(unix.NETLINK_ROUTE, 0)
		return err
	})
	if err != nil {
		return fmt.Errorf("size table for super-frames on %s: %w", dev, err)
	}
	return nil
}
