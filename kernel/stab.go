//go:build linux

package kernel

import (
	"encoding/binary"
	"fmt"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// A size table (stab) turns a packet's length into the length a qdisc
// bills: the kernel looks len+overhead up in a table of tsize entries
// (net/sched/sch_api.c, __qdisc_calculate_pkt_len). tc fills it only from
// formulas (`linklayer atm` is AAL5's 48-octet cells); atmlab fills it
// through netlink with any billing, one entry per frame length, so AAL3/4's
// 44-octet segments and both encapsulations are billed to the cell.
const (
	tcaStabBase = 1 // TCA_STAB_BASE: struct tc_sizespec
	tcaStabData = 2 // TCA_STAB_DATA: __u16 table[tsize]
)

// sizeTable is a size table and the shift of its entries.
type sizeTable struct {
	sizeLog uint8
	data    []uint16
}

// newSizeTable tabulates billed(n) for every frame length n up to
// maxFrame. Entries are billed octets, shifted right (rounding up) only as
// far as 16 bits need: exact up to 65535 billed octets a frame.
func newSizeTable(maxFrame int, billed func(n int) int) sizeTable {
	var t sizeTable
	for billed(maxFrame)>>t.sizeLog > 0xFFFF {
		t.sizeLog++
	}
	t.data = make([]uint16, maxFrame+1)
	for n := range t.data {
		t.data[n] = uint16((billed(max(n, 1)) + 1<<t.sizeLog - 1) >> t.sizeLog)
	}
	return t
}

// lookup is what the kernel bills a packet of n octets through the table
// (cell_log 0, cell_align 0, overhead 0).
func (t sizeTable) lookup(n int) int {
	tsize := len(t.data)
	var l int
	if n < tsize {
		l = int(t.data[n])
	} else {
		l = int(t.data[tsize-1])*(n/tsize) + int(t.data[n%tsize])
	}
	return max(l<<t.sizeLog, 1)
}

// attr is the table as the TCA_STAB attribute of a qdisc request.
func (t sizeTable) attr() *nl.RtAttr {
	var spec [24]byte // struct tc_sizespec
	spec[1] = t.sizeLog
	binary.NativeEndian.PutUint32(spec[20:], uint32(len(t.data))) // tsize; cell_log, cell_align, overhead, linklayer, mpu, mtu 0
	data := make([]byte, 2*len(t.data))
	for i, v := range t.data {
		binary.NativeEndian.PutUint16(data[2*i:], v)
	}
	a := nl.NewRtAttr(nl.TCA_STAB, nil)
	a.AddRtAttr(tcaStabBase, spec[:])
	a.AddRtAttr(tcaStabData, data)
	return a
}

// replaceTBF makes a token bucket at rate (bit/s) with burst and limit
// (billed octets) the root qdisc of dev in ns, billing through table:
// `tc qdisc replace dev DEV root stab ... tbf rate R burst B limit L` with
// a table tc cannot express.
func replaceTBF(ns netns.NsHandle, dev string, rate uint64, burst, limit int, table sizeTable) error {
	return inNamespace(ns, func() error {
		link, err := netlink.LinkByName(dev)
		if err != nil {
			return err
		}
		req := nl.NewNetlinkRequest(unix.RTM_NEWQDISC, unix.NLM_F_CREATE|unix.NLM_F_REPLACE|unix.NLM_F_ACK)
		req.AddData(&nl.TcMsg{Family: nl.FAMILY_ALL, Ifindex: int32(link.Attrs().Index), Parent: netlink.HANDLE_ROOT})
		req.AddData(nl.NewRtAttr(nl.TCA_KIND, nl.ZeroTerminated("tbf")))
		var q nl.TcTbfQopt
		bytesPerSec := (rate + 7) / 8 // never below the line
		q.Rate.Rate = uint32(min(bytesPerSec, 1<<32-1))
		q.Rate.Linklayer = 1 // TC_LINKLAYER_ETHERNET: the table, not the rate, knows the cells
		q.Limit = uint32(limit)
		opts := nl.NewRtAttr(nl.TCA_OPTIONS, nil)
		opts.AddRtAttr(nl.TCA_TBF_PARMS, q.Serialize())
		if bytesPerSec >= 1<<32 {
			opts.AddRtAttr(nl.TCA_TBF_RATE64, nl.Uint64Attr(bytesPerSec))
		}
		opts.AddRtAttr(nl.TCA_TBF_BURST, nl.Uint32Attr(uint32(burst)))
		req.AddData(opts)
		req.AddData(table.attr())
		if _, err := req.Execute(unix.NETLINK_ROUTE, 0); err != nil {
			return fmt.Errorf("tbf with a size table on %s: %w", dev, err)
		}
		return nil
	})
}
