//go:build integration

package test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/gopacket/pcapgo"

	"github.com/atmlab/atmlab/emulator/atm"
	"github.com/atmlab/atmlab/wireshark"
)

// A VC-mux AAL5 link (h1-h2) and an AAL3/4 link (h3-h4), both OC-3c.
const decodeLab = `
name: NAME
topology:
  nodes:
    h1: {kind: host, ipv4: 10.0.0.1/24}
    h2: {kind: host, ipv4: 10.0.0.2/24}
    h3: {kind: host, ipv4: 10.0.1.3/24}
    h4: {kind: host, ipv4: 10.0.1.4/24}
  links:
    - endpoints: ["h1:eth0", "h2:eth0"]
      atm: {phy: oc3, aal: aal5, encap: vcmux}
    - endpoints: ["h3:eth0", "h4:eth0"]
      atm: {phy: oc3, aal: aal34, encap: llc}
`

// tshark decodes captures to IP without flags on a VC-mux link,
// and with atmlab's Lua dissector (which `atmlab capture` names and
// writes out) on an AAL3/4 link: SAR fields, CRC-10, reassembly, CPCS,
// LLC/SNAP, IP. A corrupted cell fails its CRC-10 and loses its message.
func TestCaptureDecodes(t *testing.T) {
	requireRoot(t, "ping", "tshark")
	r := up(t, decodeLab)
	r.exec("h1", "ping", "-c", "1", "-W", "2", "10.0.0.2")
	r.exec("h3", "ping", "-c", "1", "-W", "2", "10.0.1.4")
	dir := t.TempDir()
	pdus, cellFile := filepath.Join(dir, "vcmux.pcap"), filepath.Join(dir, "aal34.pcapng")
	// 2 echoes of 1036-octet LLC/SNAP SDUs each way: 4 messages of 24 AAL3/4 cells.
	var capErr bytes.Buffer
	capPDU := exec.Command(atmlab, "capture", r.name, "h1:eth0", "-w", pdus, "-c", "4")
	capCells := exec.Command(atmlab, "capture", r.name, "h3:eth0", "-w", cellFile, "-c", "96")
	capCells.Stderr = &capErr
	for _, c := range []*exec.Cmd{capPDU, capCells} {
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
	}
	captureAttached(t, pdus)
	captureAttached(t, cellFile)
	r.exec("h1", "ping", "-c", "2", "-i", "0.2", "-s", "1000", "10.0.0.2")
	r.exec("h3", "ping", "-c", "2", "-i", "0.2", "-s", "1000", "10.0.1.4")
	waitOrKill(t, capPDU, 10*time.Second)
	waitOrKill(t, capCells, 10*time.Second)

	out, err := exec.Command("tshark", "-r", pdus, "-V").CombinedOutput()
	text := string(out)
	if err != nil || strings.Count(text, "Internet Protocol Version 4, Src: 10.0.0.") != 4 ||
		strings.Count(text, "Echo (ping) re") != 4 || strings.Contains(text, "Malformed") || !strings.Contains(text, "VCI: 100") {
		t.Errorf("tshark on the VC-mux capture, no flags: %v\n%s", err, text)
	}

	if !strings.Contains(capErr.String(), "tshark -X lua_script:aal34.lua -r "+cellFile) {
		t.Errorf("atmlab capture of an AAL3/4 link does not say how to decode it:\n%s", capErr.String())
	}
	lua := filepath.Join(dir, "aal34.lua")
	if out, err := exec.Command(atmlab, "capture", "--lua-dissector", lua).CombinedOutput(); err != nil || !strings.Contains(string(out), "lua_script:"+lua) {
		t.Fatalf("atmlab capture --lua-dissector: %v\n%s", err, out)
	}
	if got, _ := os.ReadFile(lua); !bytes.Equal(got, wireshark.AAL34) {
		t.Fatalf("the dissector written out differs from the embedded one")
	}

	decode := func(file string) string {
		t.Helper()
		out, err := exec.Command("tshark", "-X", "lua_script:"+lua, "-r", file, "-V").CombinedOutput()
		if err != nil {
			t.Fatalf("tshark with the dissector: %v\n%s", err, out)
		}
		return string(out)
	}
	text = decode(cellFile)
	if strings.Count(text, "[CRC-10 correct: True]") != 96 || strings.Count(text, "AAL3/4 CPCS-PDU") != 4 ||
		strings.Count(text, "[Cells: 24]") != 4 || strings.Count(text, "    Length: 1036") != 4 ||
		strings.Count(text, "Internet Protocol Version 4, Src: 10.0.1.") != 4 || strings.Count(text, "Echo (ping) re") != 4 ||
		strings.Contains(text, "Malformed") {
		t.Fatalf("tshark with the dissector on the AAL3/4 capture:\n%s", text)
	}

	// The file is pcapng, its interface named for the link; flip one
	// payload octet of the third cell.
	f, err := os.Open(cellFile)
	if err != nil {
		t.Fatal(err)
	}
	rd, err := pcapgo.NewNgReader(f, pcapgo.DefaultNgReaderOptions)
	if err != nil || rd.LinkType() != atm.LinkTypeERF {
		t.Fatalf("AAL3/4 capture: %v, link type %v", err, rd.LinkType())
	}
	iface, _ := rd.Interface(0)
	if !strings.HasPrefix(iface.Description, "atmlab aal34 llc") {
		t.Errorf("interface description %q", iface.Description)
	}
	bad := filepath.Join(dir, "bad.pcapng")
	bf, _ := os.Create(bad)
	w, err := pcapgo.NewNgWriterInterface(bf, iface, pcapgo.DefaultNgWriterOptions)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		data, ci, err := rd.ReadPacketData()
		if err != nil {
			break
		}
		if i == 2 {
			data[16+4+20] ^= 0x01
		}
		w.WritePacket(ci, data)
	}
	w.Flush()
	bf.Close()
	f.Close()
	text = decode(bad)
	if strings.Count(text, "[CRC-10 correct: False]") != 1 || strings.Count(text, "Internet Protocol Version 4, Src: 10.0.1.") != 3 ||
		!strings.Contains(text, "AAL3/4 sequence gap") {
		t.Errorf("tshark with the dissector on a corrupted cell: want one CRC-10 failure, a gap and 3 messages\n%s", text)
	}
}

// An AAL3/4 host's token bucket bills AAL3/4 cells exactly
// (a size table filled through netlink), so a UDP flood over AAL3/4 runs
// at the cell ceiling with nothing dropped inside the sending host: the
// "hosts dropped frames at their TAPs" warning no longer fires when the
// emulator keeps up. tc's AAL5 billing ran the bucket 9 % fast and
// overflowed the TAP's ring on every run.
func TestAAL34Billing(t *testing.T) {
	requireRoot(t, "iperf3")
	r := up(t, decodeLab)
	r.exec("h3", "ping", "-c", "1", "-W", "2", "10.0.1.4")
	before := tapDrops(t, r, "h3")
	want := oc3(t, atm.AAL34, 1444, "udp")
	got, it := r.udpSteady("h3", "h4", "10.0.1.4", 5330, 5, 1444)
	drops := tapDrops(t, r, "h3") - before
	t.Logf("AAL3/4 UDP 1444: %.2f Mbit/s, ceiling %.2f; %d dropped in h3, %d of %d lost", got/1e6, want/1e6, drops, it.Lost, it.Packets)
	if drops != 0 {
		t.Errorf("h3 dropped %d frames at its TAP or qdisc under a UDP flood over AAL3/4; want 0", drops)
	}
	if !within(got, want, 0.01) {
		t.Errorf("AAL3/4 UDP 1444: %.2f Mbit/s, want %.2f within 1%%", got/1e6, want/1e6)
	}
	if st := r.stats(); st.HostDrops() != 0 {
		t.Errorf("atmlab stats counts %d host drops", st.HostDrops())
	}
}
