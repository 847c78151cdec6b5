package devices

import (
	"encoding/binary"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/atmlab/atmlab/emulator"
	"github.com/atmlab/atmlab/emulator/atm"
	"github.com/atmlab/atmlab/emulator/sched"
	"github.com/atmlab/atmlab/internal/labtest"
	. "github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/defaults"
	"github.com/atmlab/atmlab/topologies/labfile"
)

const asxLab = `
name: asx
topology:
  nodes:
    h1: {kind: host, ipv4: 10.0.0.1/24}
    h2: {kind: host, ipv4: 10.0.0.2/24, mtu: 1500}
    h3: {kind: host, ipv4: 10.0.0.3/24}
    atm1: {kind: atm-switch, queue: 1000, discard: epd}
    atm2: {kind: atm-switch}
  links:
    - endpoints: ["h1:eth0", "atm1:p1"]
      atm: {phy: oc3, vci: 40}
    - endpoints: ["atm1:p9", "atm2:p9"]
      atm: {phy: oc12, vpi: 1}
    - endpoints: ["h2:eth0", "atm2:p1"]
      atm: {phy: oc3}
    - endpoints: ["h3:eth0", "atm2:p2"]
      atm: {phy: ds3, pcr: 50000}
      impair: {delay: 1ms, loss: 0.1%}
`

// ipv4 is an Ethernet frame to dst's MAC with an IPv4 packet of n octets.
func ipv4(dst [6]byte, from, to string, n int) *emulator.Frame {
	d := make([]byte, 14+n)
	copy(d, dst[:])
	d[6] = 0x02
	binary.BigEndian.PutUint16(d[12:], 0x0800)
	d[14] = 0x45
	binary.BigEndian.PutUint16(d[16:], uint16(n))
	copy(d[26:], netip.MustParseAddr(from).AsSlice())
	copy(d[30:], netip.MustParseAddr(to).AsSlice())
	return &emulator.Frame{Data: d}
}

// Hosts joined by atm-switches get a PVC to every other host: VCIs from
// each link's atm.vci up, translated at each switch; a packet crosses two
// switches as cells and arrives whole.
func TestBuildATMAutoPVCs(t *testing.T) {
	lab, err := labfile.Parse("asx.yaml", []byte(asxLab))
	if err != nil {
		t.Fatal(err)
	}
	if mtu := lab.Node("h1").Interface("eth0").MTU; mtu != defaults.ATMMTU {
		t.Errorf("h1's MTU on an ATM link = %d, want 9180", mtu)
	}
	if mtu := lab.Node("h2").Interface("eth0").MTU; mtu != 1500 {
		t.Errorf("h2's MTU = %d, want the 1500 it asked for", mtu)
	}
	s := sched.New()
	n := Build(lab, s)
	var got []*emulator.Frame
	n.Hosts["h3:eth0"].Sink = func(f *emulator.Frame) { got = append(got, f) }
	// h1's PVCs: VCI 40 to h2, 41 to h3; h3's link hands out 100 (to h1), 101 (to h2).
	h1 := n.Hosts["h1:eth0"]
	h1.Input(ipv4(atm.VCMAC(0, 41), "10.0.0.1", "10.0.0.3", 1000))
	s.Run()
	if len(got) != 1 || len(got[0].Data) != 1014 {
		t.Fatalf("h3 got %d frames", len(got))
	}
	// h3 has sent nothing yet: its adapter addresses it by the lab's MAC
	// for it, which the kernel gives its TAP (a broadcast would be dropped
	// by TCP).
	if dst := lab.MAC(Endpoint{Node: "h3", Port: "eth0"}); string(got[0].Data[:6]) != string(dst) {
		t.Errorf("h3 received a frame to % x, want its own MAC % x", got[0].Data[:6], dst)
	}
	if mac := atm.VCMAC(0, 100); [6]byte(got[0].Data[6:12]) != mac {
		t.Errorf("h3 received from MAC % x, want its VC 0/100's", got[0].Data[6:12])
	}
	rows := n.Stats()
	byPort := map[string]emulator.PortStats{}
	for _, r := range rows {
		byPort[r.Port] = r
	}
	if r := byPort["atm1:p9"]; r.ATM == nil || r.TxFrames != 22 { // 1008-octet SDU: 22 cells
		t.Errorf("atm1:p9 sent %d cells, want 22 (%+v)", r.TxFrames, r.ATM)
	}
	if r := byPort["atm2:p2"]; r.TxFrames != 22 {
		t.Errorf("atm2:p2 sent %d cells", r.TxFrames)
	}
	if l := n.Link("h3:eth0"); l == nil || l.ATM == nil {
		t.Fatal("no ATM link at h3:eth0")
	}
	taps, lt, err := n.Link("h1:eth0").Tappers(false)
	if err != nil || lt != LinkTypeERF || len(taps) != 2 {
		t.Errorf("ATM link tappers: %d, link type %d, %v", len(taps), lt, err)
	}
	if _, _, err := n.Link("h1:eth0").Tappers(true); err != nil {
		t.Errorf("cell capture: %v", err)
	}
}

// With mappings, the switch does what they say and nothing else; each host
// has its link's VC as its only PVC. Hosts whose encapsulations differ
// cannot talk, and the receiver counts why.
func TestBuildATMMappings(t *testing.T) {
	lab, err := labfile.Parse("map.yaml", []byte(`
name: map
topology:
  nodes:
    h1: {kind: host, ipv4: 10.0.0.1/24}
    h2: {kind: host, ipv4: 10.0.0.2/24}
    atm1: {kind: atm-switch, mappings: {"p1:0:100": "p2:0:200"}}
  links:
    - endpoints: ["h1:eth0", "atm1:p1"]
      atm: {phy: oc3, vci: 100}
    - endpoints: ["h2:eth0", "atm1:p2"]
      atm: {phy: oc3, vci: 200}
`))
	if err != nil {
		t.Fatal(err)
	}
	send := func() (int, *emulator.ATMStats) {
		s := sched.New()
		n := Build(lab, s)
		got := 0
		n.Hosts["h1:eth0"].Sink = func(f *emulator.Frame) {
			if [6]byte(f.Data[6:12]) == atm.VCMAC(0, 100) {
				got++
			}
		}
		n.Hosts["h2:eth0"].Input(ipv4([6]byte{}, "10.0.0.2", "10.0.0.1", 100))
		s.Run()
		return got, n.Hosts["h1:eth0"].Stats().ATM
	}
	if got, st := send(); got != 1 || st.RxCells != 3 {
		t.Errorf("mapped PVC: %d delivered, %+v", got, st)
	}
	lab.Links[1].ATM.Encap = "vcmux"
	if got, st := send(); got != 0 || st.EncapErrors != 1 {
		t.Errorf("VC-mux into LLC/SNAP: %d delivered, %+v", got, st)
	}
}

func TestParseATMErrors(t *testing.T) {
	_, err := labfile.Parse("bad.yaml", []byte(`name: bad
topology:
  nodes:
    h1: {kind: host, ipv4: 10.0.0.1/24, mtu: 65535}
    h2: {kind: host, ipv4: 10.0.0.2/24}
    sw1: {kind: switch}
    atm1: {kind: atm-switch, discard: maybe, mappings: {"p1:0:100": "p7:0:40", "p1:300": "p2:1:40"}}
  links:
    - endpoints: ["h1:eth0", "atm1:p1"]
      atm: {phy: oc48, vpi: 256}
      impair: {rate: 10M}
    - endpoints: ["h2:eth0", "atm1:p2"]
      ethernet: {rate: 100M}
    - endpoints: ["sw1:p1", "atm1:p3"]
      atm: {phy: oc3, pcr: fast}
`))
	if err == nil {
		t.Fatal("a malformed ATM lab parsed")
	}
	for _, want := range []string{
		`topology.nodes.atm1.discard: "maybe": use none, ppd`,
		`topology.nodes.atm1.mappings.p1:300: "p1:300": write port:vpi:vci`,
		`topology.links[0].atm.phy: "oc48": use one of atm25, ds3, e3, oc12, oc3`,
		`topology.links[0].atm.vpi: want a whole number from 0 to 255`,
		`topology.links[0].impair: an ATM link's impairments are per cell`,
		`atm1:p2 is an atm-switch port: give the link atm:`,
		`an ATM link joins hosts, atm-switches and routers; sw1:p1 is a switch`,
		`topology.links[2].atm.pcr: bad peak cell rate "fast"`,
		`p7:0:40: port p7 of atm1 has no link`,
		`MTU 65535 on eth0's ATM link`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("errors lack %q; got:\n%s", want, err)
		}
	}
}

// Variants can change an ATM link's PHY, AAL and encapsulation, and only
// an ATM link's.
func TestATMVariants(t *testing.T) {
	file := filepath.Join(t.TempDir(), "v.yaml")
	os.WriteFile(file, []byte(labtest.Lab("two-hosts-atm", "v", `variants:
  - {name: oc12-aal34, set: [{link: "h1:eth0", phy: oc12, aal: aal34, encap: vcmux}]}
`)), 0o644)
	lab, err := labfile.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	v, err := lab.WithVariant("oc12-aal34")
	if err != nil {
		t.Fatal(err)
	}
	if a := v.Links[0].ATM; a.PHY != "oc12" || a.AAL != "aal34" || a.Encap != "vcmux" || v.Links[0].AB.Rate != atm.PHYs["oc12"].LineRate {
		t.Errorf("variant link %+v, rate %v", a, v.Links[0].AB.Rate)
	}
	if lab.Links[0].ATM.PHY != "oc3" {
		t.Error("the variant changed the base lab")
	}
	_, err = labfile.Parse("bad.yaml", []byte(`name: bad
topology:
  nodes:
    h1: {kind: host, ipv4: 10.0.0.1/24}
    h2: {kind: host, ipv4: 10.0.0.2/24}
    h3: {kind: host, ipv4: 10.0.1.1/24}
    h4: {kind: host, ipv4: 10.0.1.2/24}
  links:
    - endpoints: ["h1:eth0", "h2:eth0"]
      atm: {phy: oc3}
    - endpoints: ["h3:eth0", "h4:eth0"]
variants:
  - {name: a, set: [{link: "h1:eth0", rate: 10M}]}
  - {name: b, set: [{link: "h3:eth0", phy: oc3}]}
  - {name: c, set: [{link: "h1:eth0", aal: aal2}]}
`))
	for _, want := range []string{"set phy: instead of rate:", "h3:eth0 is Ethernet", `"aal2": use one of aal5, aal34`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("errors lack %q: %v", want, err)
		}
	}
}

// A capture's format follows the link: ERF PDUs on LLC/SNAP, SunATM PDUs
// on VC-mux, cells in pcapng named "atmlab aal34 ..." on AAL3/4.
func TestCaptureFormats(t *testing.T) {
	lab, err := labfile.Parse("cap.yaml", []byte(`
name: cap
topology:
  nodes:
    h1: {kind: host, ipv4: 10.0.0.1/24}
    h2: {kind: host, ipv4: 10.0.0.2/24}
    h3: {kind: host, ipv4: 10.0.1.3/24}
    h4: {kind: host, ipv4: 10.0.1.4/24}
    h5: {kind: host, ipv4: 10.0.2.5/24}
    h6: {kind: host, ipv4: 10.0.2.6/24}
  links:
    - {endpoints: ["h1:eth0", "h2:eth0"], atm: {phy: oc3}}
    - {endpoints: ["h3:eth0", "h4:eth0"], atm: {phy: oc3, encap: vcmux}}
    - {endpoints: ["h5:eth0", "h6:eth0"], atm: {phy: oc3, aal: aal34, encap: vcmux}}
`))
	if err != nil {
		t.Fatal(err)
	}
	n := Build(lab, sched.New())
	for _, c := range []struct {
		end      string
		cells    bool
		linkType int
		desc     string
	}{
		{"h1:eth0", false, LinkTypeERF, ""},
		{"h1:eth0", true, LinkTypeERF, ""},
		{"h3:eth0", false, LinkTypeSunATM, ""},
		{"h3:eth0", true, LinkTypeERF, ""},
		{"h5:eth0", false, LinkTypeERF, "atmlab aal34 vcmux h5:eth0-h6:eth0"},
	} {
		l := n.Link(c.end)
		_, lt, err := l.Tappers(c.cells)
		if err != nil || lt != c.linkType || l.CaptureDescription() != c.desc {
			t.Errorf("%s cells=%v: link type %d, description %q, %v; want %d, %q", c.end, c.cells, lt, l.CaptureDescription(), err, c.linkType, c.desc)
		}
	}
}

// An ATM link's limit: bounds the cells in flight in its pipe; the rest are
// counted as limit drops in the port's counters.
func TestBuildATMLimit(t *testing.T) {
	lab, err := labfile.Parse("lim.yaml", []byte(labtest.Set(labtest.Lab("two-hosts-atm", "lim"), "topology.links[0].impair", "{delay: 1h, limit: 100}")))
	if err != nil {
		t.Fatal(err)
	}
	s := sched.New()
	n := Build(lab, s)
	h1 := n.Hosts["h1:eth0"]
	for range 5 { // 22 cells each: 110 cells, 100 in flight
		h1.Input(ipv4(atm.VCMAC(0, 100), "10.0.0.1", "10.0.0.2", 1000))
	}
	s.Run()
	st := n.Link("h1:eth0").ATM.AB.Stats()
	if st.TxCells != 110 || st.LimitDrops != 10 || st.Delivered != 100 {
		t.Errorf("link stats %+v, want 110 cells sent, 10 limit drops, 100 delivered", st)
	}
	for _, r := range n.Stats() {
		if r.Port == "h1:eth0" && (r.ATM == nil || r.ATM.LimitDrops != 10 || r.ImpairDrops != 10) {
			t.Errorf("h1:eth0's row: impair drops %d, ATM %+v", r.ImpairDrops, r.ATM)
		}
	}
}
