package devices

import (
	"encoding/binary"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/atmlab/atmlab/emulator"
	"github.com/atmlab/atmlab/emulator/router"
	"github.com/atmlab/atmlab/emulator/sched"
	. "github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/labfile"
)

// atmCoreLab is ../topologies/testdata/atm-core.yaml (h1, four routers
// joined by OC-3c AAL5 links through an atm-switch, h2) with keys on every
// router.
func atmCoreLab(t *testing.T, keys string) *Lab {
	t.Helper()
	b, err := os.ReadFile("../topologies/testdata/atm-core.yaml")
	if err != nil {
		t.Fatal(err)
	}
	lab, err := labfile.Parse("atm-core.yaml", []byte(strings.NewReplacer("NAME", "core", "KEYS", keys).Replace(string(b))))
	if err != nil {
		t.Fatal(err)
	}
	return lab
}

// pduOnWire is one AAL5 PDU a capture of an ATM link saw: the direction
// (the link's endpoints, "r1:atm0>atm1:p1"), its cells, and the label
// stack entries in front of the IP packet (none for a bare one).
type pduOnWire struct {
	dir    string
	cells  int
	labels []router.Entry
	ipTTL  byte
}

func (p pduOnWire) String() string {
	var ls []string
	for _, e := range p.labels {
		ls = append(ls, fmt.Sprintf("%d/S%v/TTL%d", e.Label, e.Bottom, e.TTL))
	}
	return fmt.Sprintf("%s %d cells [%s] IP TTL %d", p.dir, p.cells, strings.Join(ls, " "), p.ipTTL)
}

// wireLog taps every ATM link of n, PDUs (ERF records: 16 octets of ERF
// header, the first cell's 4 header octets, then the CPCS-PDU) and cells,
// and returns the PDUs seen so far, in the order they were sent.
func wireLog(t *testing.T, n *Network) func() []pduOnWire {
	var log []pduOnWire
	cellsOn := map[string]int{} // cells since the last PDU, by direction
	for _, l := range n.Links {
		if l.ATM == nil {
			continue
		}
		dirs := [2]string{l.Link.A.String() + ">" + l.Link.B.String(), l.Link.B.String() + ">" + l.Link.A.String()}
		cellTaps, _, _ := l.Tappers(true)
		pduTaps, _, _ := l.Tappers(false)
		for i := range 2 {
			dir := dirs[i]
			cellTaps[i].SetTap(func(*emulator.Frame, time.Duration) { cellsOn[dir]++ })
			pduTaps[i].SetTap(func(f *emulator.Frame, _ time.Duration) {
				pdu := f.Data[20:]
				if string(pdu[:6]) != "\xaa\xaa\x03\x00\x00\x00" {
					t.Errorf("%s: a PDU without LLC/SNAP: % x", dir, pdu[:8])
					return
				}
				p := pduOnWire{dir: dir, cells: cellsOn[dir]}
				cellsOn[dir] = 0
				rest := pdu[8:]
				if binary.BigEndian.Uint16(pdu[6:]) == 0x8847 {
					for {
						e := router.ParseEntry(rest)
						p.labels = append(p.labels, e)
						rest = rest[4:]
						if e.Bottom {
							break
						}
					}
				}
				p.ipTTL = rest[8]
				log = append(log, p)
			})
		}
	}
	return func() []pduOnWire { return log }
}

// udpFrom is an Ethernet frame to dst's MAC carrying a UDP datagram of
// payload octets from one address to another, TTL 64.
func udpFrom(dst []byte, from, to [4]byte, payload int) *emulator.Frame {
	f := make([]byte, 14+28+payload)
	copy(f, dst)
	binary.BigEndian.PutUint16(f[12:], 0x0800)
	ip := f[14:]
	ip[0], ip[8], ip[9] = 0x45, 64, 17
	binary.BigEndian.PutUint16(ip[2:], uint16(28+payload))
	copy(ip[12:], from[:])
	copy(ip[16:], to[:])
	return &emulator.Frame{Data: f}
}

// answerARP makes host port name answer ARP requests as its kernel would
// and keeps the IP packets it gets.
func answerARP(lab *Lab, n *Network, name string, got *[][]byte) {
	hp := n.Hosts[name]
	node, iface, _ := strings.Cut(name, ":")
	hp.Sink = func(f *emulator.Frame) {
		d := f.Data
		if a, ok := emulator.ParseARP(d[14:]); ok && binary.BigEndian.Uint16(d[12:]) == emulator.EtherTypeARP {
			hp.Input(&emulator.Frame{Data: a.Reply([6]byte(lab.MAC(Endpoint{Node: node, Port: iface}))).Frame()})
			return
		}
		*got = append(*got, d[14:])
	}
}

// Routers joined over OC-3c AAL5 through an atm-switch switch labels as on
// Ethernet: a 100-octet UDP datagram (a 128-octet IP packet, 144 octets
// with LLC/SNAP and the AAL5 trailer: exactly 3 cells) takes 4 cells with
// its label. Each way the ingress pushes, the next router swaps, the
// penultimate one pops: the last ATM hop carries the bare packet in 3
// cells. The label TTL counts each hop (uniform model) and the IP TTL the
// receiver sees counts every router. Without MPLS every hop carries 3
// cells of bare IP.
func TestATMCoreLabelsAndPHP(t *testing.T) {
	for _, tc := range []struct {
		keys string
		want []string // the PDUs on the wire, h1 to h2 then h2 to h1
	}{
		{"mpls: true,", []string{
			"r1:atm0>atm1:p1 4 cells [17/Strue/TTL63] IP TTL 64",
			"atm1:p2>r2:atm0 4 cells [17/Strue/TTL63] IP TTL 64",
			"r2:atm1>atm1:p3 4 cells [17/Strue/TTL62] IP TTL 64",
			"atm1:p4>r3:atm0 4 cells [17/Strue/TTL62] IP TTL 64",
			"r3:atm1>atm1:p5 3 cells [] IP TTL 61",
			"atm1:p6>r4:atm0 3 cells [] IP TTL 61",
			"r4:atm0>atm1:p6 4 cells [16/Strue/TTL63] IP TTL 64",
			"atm1:p5>r3:atm1 4 cells [16/Strue/TTL63] IP TTL 64",
			"r3:atm0>atm1:p4 4 cells [16/Strue/TTL62] IP TTL 64",
			"atm1:p3>r2:atm1 4 cells [16/Strue/TTL62] IP TTL 64",
			"r2:atm0>atm1:p2 3 cells [] IP TTL 61",
			"atm1:p1>r1:atm0 3 cells [] IP TTL 61",
		}},
		{"", []string{
			"r1:atm0>atm1:p1 3 cells [] IP TTL 63",
			"atm1:p2>r2:atm0 3 cells [] IP TTL 63",
			"r2:atm1>atm1:p3 3 cells [] IP TTL 62",
			"atm1:p4>r3:atm0 3 cells [] IP TTL 62",
			"r3:atm1>atm1:p5 3 cells [] IP TTL 61",
			"atm1:p6>r4:atm0 3 cells [] IP TTL 61",
			"r4:atm0>atm1:p6 3 cells [] IP TTL 63",
			"atm1:p5>r3:atm1 3 cells [] IP TTL 63",
			"r3:atm0>atm1:p4 3 cells [] IP TTL 62",
			"atm1:p3>r2:atm1 3 cells [] IP TTL 62",
			"r2:atm0>atm1:p2 3 cells [] IP TTL 61",
			"atm1:p1>r1:atm0 3 cells [] IP TTL 61",
		}},
	} {
		lab := atmCoreLab(t, tc.keys)
		s := sched.New()
		n := Build(lab, s)
		wire := wireLog(t, n)
		var at1, at2 [][]byte
		answerARP(lab, n, "h1:eth0", &at1)
		answerARP(lab, n, "h2:eth0", &at2)
		n.Hosts["h1:eth0"].Input(udpFrom(lab.MAC(Endpoint{Node: "r1", Port: "eth0"}), [4]byte{10, 0, 0, 1}, [4]byte{10, 0, 4, 1}, 100))
		s.Run()
		n.Hosts["h2:eth0"].Input(udpFrom(lab.MAC(Endpoint{Node: "r4", Port: "eth1"}), [4]byte{10, 0, 4, 1}, [4]byte{10, 0, 0, 1}, 100))
		s.Run()
		if len(at2) != 1 || at2[0][8] != 60 || len(at1) != 1 || at1[0][8] != 60 {
			t.Errorf("%q: h2 got %d packets, h1 %d (want one each with TTL 60, four routers on)", tc.keys, len(at2), len(at1))
		}
		var got []string
		for _, p := range wire() {
			got = append(got, p.String())
		}
		if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
			t.Errorf("%q: on the ATM links:\n%s\nwant\n%s", tc.keys, strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
		}
	}
}
