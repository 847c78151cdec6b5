package topologies_test

import (
	"testing"

	"github.com/atmlab/atmlab/internal/labtest"
	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/labfile"
)

// A host's TCP buffers are sized for its own link's rate over the lab's
// round trip, both directions' delays and the cable's propagation counted.
func TestTCPBufferMaxFillsTheLinkOverTheRoundTrip(t *testing.T) {
	lab, err := labfile.Parse("wan.yaml", []byte(labtest.Set(labtest.Lab("two-hosts-switch", "wan"), "topology.links[0].ethernet.rate", "10G", "topology.links[1].impair", "{delay: 10ms}")))
	if err != nil {
		t.Fatal(err)
	}
	// 10 Gbit/s over 20 ms: 25 MB in flight, twice that rounded up to MiB.
	if got, want := lab.TCPBufferMax("h1"), 48<<20; got != want {
		t.Errorf("h1 (10G, 20 ms): %d, want %d", got, want)
	}
	// 100 Mbit/s over 20 ms: 250 kB, twice that is under a MiB.
	if got, want := lab.TCPBufferMax("h2"), 1<<20; got != want {
		t.Errorf("h2 (100M, 20 ms): %d, want %d", got, want)
	}
	if got := lab.TCPBufferMax("sw1"); got != 0 {
		t.Errorf("a switch has no sockets: %d, want 0", got)
	}
}

// Without delays the kernel's own maximum is left alone, and a round trip
// of seconds is capped.
func TestTCPBufferMaxLeavesShortPathsAndCapsLongOnes(t *testing.T) {
	lan := labtest.Set(labtest.Lab("two-hosts", "lan"), "topology.links[0].ethernet.rate", "10G")
	lab, err := labfile.Parse("lan.yaml", []byte(lan))
	if err != nil {
		t.Fatal(err)
	}
	if got := lab.TCPBufferMax("h1"); got != 0 {
		t.Errorf("no delay: %d, want 0", got)
	}
	lab, err = labfile.Parse("far.yaml", []byte(labtest.Set(lan, "topology.links[0].impair", "{delay: 1s}")))
	if err != nil {
		t.Fatal(err)
	}
	if got := lab.TCPBufferMax("h1"); got != topologies.MaxTCPBuffer {
		t.Errorf("10G over 2 s: %d, want the cap %d", got, topologies.MaxTCPBuffer)
	}
}

// A host's default receive buffer would hold 10 ms of its link's smallest
// frames at 704 octets each: OC-3c's 353,207.5 one-cell frames a second,
// Ethernet's 84-octet frames at 100M, 1G and 10G; a peak cell rate slows
// an ATM link's frames.
func TestSocketBufferDefaultHoldsTheBudgetOfSmallestFrames(t *testing.T) {
	for _, c := range []struct {
		what, lab string
		want      int
	}{
		{"OC-3c", labtest.Lab("two-hosts-atm", "oc3"), 2_490_368},                                                                              // 2,486,581.1 rounded up to 4 KiB
		{"OC-3c at pcr 100000", labtest.Set(labtest.Lab("two-hosts-atm", "pcr"), "topology.links[0].atm", "{phy: oc3, pcr: 100000}"), 704_512}, // 704,000
		{"100M", labtest.Lab("two-hosts", "e100"), 1_048_576},                                                                                  // 1,047,619.0
		{"1G", labtest.Set(labtest.Lab("two-hosts", "e1g"), "topology.links[0].ethernet.rate", "1G"), 10_477_568},                              // 10,476,190.5
		{"10G", labtest.Set(labtest.Lab("two-hosts", "e10g"), "topology.links[0].ethernet.rate", "10G"), 104_763_392},                          // 104,761,904.8
	} {
		lab, err := labfile.Parse(c.what+".yaml", []byte(c.lab))
		if err != nil {
			t.Fatalf("%s: %v", c.what, err)
		}
		for _, h := range []string{"h1", "h2"} {
			if got := lab.SocketBufferDefault(h); got != c.want {
				t.Errorf("%s %s: %d, want %d", c.what, h, got, c.want)
			}
		}
	}
	lab, err := labfile.Parse("sw.yaml", []byte(labtest.Lab("two-hosts-switch", "sw")))
	if err != nil {
		t.Fatal(err)
	}
	if got := lab.SocketBufferDefault("sw1"); got != 0 {
		t.Errorf("a switch has no sockets: %d, want 0", got)
	}
}
