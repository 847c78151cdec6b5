package topologies

import (
	"testing"
)

// A host's TCP buffers are sized for its own link's rate over the lab's
// round trip, both directions' delays and the cable's propagation counted.
func TestTCPBufferMaxFillsTheLinkOverTheRoundTrip(t *testing.T) {
	lab, err := Parse("wan.yaml", []byte(`
name: wan
topology:
  nodes:
    h1: {kind: host, ipv4: 10.0.0.1/24}
    h2: {kind: host, ipv4: 10.0.0.2/24}
    sw1: {kind: switch}
  links:
    - endpoints: ["h1:eth0", "sw1:p1"]
      ethernet: {rate: 10G}
    - endpoints: ["h2:eth0", "sw1:p2"]
      ethernet: {rate: 100M}
      impair: {delay: 10ms}
`))
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
	src := func(delay string) string {
		return `
name: lan
topology:
  nodes:
    h1: {kind: host, ipv4: 10.0.0.1/24}
    h2: {kind: host, ipv4: 10.0.0.2/24}
  links:
    - endpoints: ["h1:eth0", "h2:eth0"]
      ethernet: {rate: 10G}
` + delay
	}
	lab, err := Parse("lan.yaml", []byte(src("")))
	if err != nil {
		t.Fatal(err)
	}
	if got := lab.TCPBufferMax("h1"); got != 0 {
		t.Errorf("no delay: %d, want 0", got)
	}
	lab, err = Parse("far.yaml", []byte(src("      impair: {delay: 1s}\n")))
	if err != nil {
		t.Fatal(err)
	}
	if got := lab.TCPBufferMax("h1"); got != MaxTCPBuffer {
		t.Errorf("10G over 2 s: %d, want the cap %d", got, MaxTCPBuffer)
	}
}
