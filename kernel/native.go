//go:build linux

package kernel

import (
	"fmt"
	"os/exec"
	"strconv"
	"strings"

	"github.com/atmlab/atmlab/cells"
	"github.com/atmlab/atmlab/cells/native"
	"github.com/atmlab/atmlab/emulator"
	"github.com/atmlab/atmlab/topologies"
)

// A host interface with native AAL VCs sends two kinds of frame of one
// length that cost different cells: a Classical IP packet takes its
// encapsulation's octets on top, a native frame's SDU takes neither its
// 8-octet header nor any encapsulation. One size table cannot bill both to
// the cell (an n*48+40-octet SDU would be billed a cell more, and the host
// held 1/(n+2) below its link), and this kernel kind takes a size table on
// a root qdisc only ("STAB not supported on a non root") and has no prio.
// So an AAL5 interface with native VCs gets an htb root whose size table
// strips the Ethernet header (overhead -14), classes that never limit
// (100 Gbit/s), a u32 filter that sends the native EtherType to the second,
// and under each class a token bucket at the cell-stream rate that counts
// 48-octet cells itself (linklayer atm) after its own overhead: the
// encapsulation and AAL5's 8-octet trailer for IP, nothing for a native
// frame, whose 8-octet header is as long as the trailer it stands for.
// When both kinds send at once their buckets together let the host run
// ahead of its link; the NIC model still times every cell, and the loop's
// stage holds the rest. An AAL3/4 interface (44-octet cells, which
// linklayer atm cannot count) keeps the one bucket, which bills a native
// SDU as an IP packet of its frame's payload: up to a cell more.

// nativeIP returns the overhead the IP bucket of an interface with native
// VCs counts before its cells, and true, when the interface is on an AAL5
// link and has a native VC.
func nativeIP(lab *topologies.Lab, e topologies.Endpoint) (int, bool) {
	i := lab.Node(e.Node).Interface(e.Port)
	l := lab.LinkOf(e)
	if i == nil || l == nil || l.ATM == nil {
		return 0, false
	}
	_, aal, encap := l.ATM.Layers()
	if aal != cells.AAL5 {
		return 0, false
	}
	for _, vc := range i.VCs {
		if vc.Native {
			return encap.Overhead() + cells.AAL5Trailer, true
		}
	}
	return 0, false
}

// replaceNativeTBFs puts the htb, its classes and filter and the two token
// buckets on dev in namespace ns.
func replaceNativeTBFs(ns, dev string, rate uint64, burst, limit, ipOverhead int) error {
	tc := func(args ...string) ([]byte, error) {
		return exec.Command("ip", append([]string{"netns", "exec", ns, "tc"}, args...)...).CombinedOutput()
	}
	tbf := func(parent, handle string, overhead int) []string {
		return []string{"qdisc", "replace", "dev", dev, "parent", parent, "handle", handle, "tbf",
			"rate", strconv.FormatUint(rate, 10) + "bit", "burst", strconv.Itoa(burst), "limit", strconv.Itoa(limit),
			"overhead", strconv.Itoa(overhead), "linklayer", "atm"}
	}
	cmds := [][]string{
		{"class", "replace", "dev", dev, "parent", "1:", "classid", "1:1", "htb", "rate", "100gbit", "quantum", "200000"},
		{"class", "replace", "dev", dev, "parent", "1:", "classid", "1:2", "htb", "rate", "100gbit", "quantum", "200000"},
		{"filter", "replace", "dev", dev, "parent", "1:", "protocol", fmt.Sprintf("%#x", native.EtherType), "prio", "1",
			"handle", "800::800", "u32", "match", "u32", "0", "0", "flowid", "1:2"},
		tbf("1:1", "11:", ipOverhead),
		tbf("1:2", "12:", 0),
	}
	if out, _ := tc("qdisc", "show", "dev", dev, "root"); !strings.Contains(string(out), "htb 1: root") { // htb cannot be changed in place
		root := []string{"qdisc", "replace", "dev", dev, "root", "handle", "1:", "stab", "overhead", strconv.Itoa(-emulator.EtherHeader),
			"linklayer", "ethernet", "htb", "default", "1"}
		cmds = append([][]string{root}, cmds...)
	}
	for _, c := range cmds {
		if out, err := tc(c...); err != nil {
			return fmt.Errorf("%s: tc %s: %v: %s", ns, strings.Join(c, " "), err, strings.TrimSpace(string(out)))
		}
	}
	return nil
}
