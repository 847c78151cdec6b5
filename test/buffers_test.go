//go:build integration

package test

import (
	"strings"
	"testing"
)

// A host on a long fat path gets TCP buffers that can fill it (its
// namespace's tcp_rmem and tcp_wmem maximum raised to twice the path's
// bandwidth-delay product), and a host whose lab file sets one keeps its own.
func TestHostTCPBuffersSizedForThePath(t *testing.T) {
	requireRoot(t)
	r := up(t, `
name: NAME
topology:
  nodes:
    h1: {kind: host, ipv4: 10.0.0.1/24}
    h2: {kind: host, ipv4: 10.0.0.2/24, sysctls: {net.ipv4.tcp_wmem: "4096 16384 1048576"}}
    sw1: {kind: switch}
  links:
    - endpoints: ["h1:eth0", "sw1:p1"]
      ethernet: {rate: 10G}
    - endpoints: ["h2:eth0", "sw1:p2"]
      ethernet: {rate: 10G}
      impair: {delay: 20ms}
`)
	read := func(host, key string) string {
		return strings.Join(strings.Fields(string(r.exec(host, "cat", "/proc/sys/net/ipv4/"+key))), " ")
	}
	// 10 Gbit/s over 40 ms: 50 MB in flight, twice that is 96 MiB.
	const sized = "100663296"
	for _, key := range []string{"tcp_rmem", "tcp_wmem"} {
		if got := read("h1", key); !strings.HasSuffix(got, " "+sized) {
			t.Errorf("h1 %s = %q, want its maximum %s", key, got, sized)
		}
	}
	if got := read("h2", "tcp_rmem"); !strings.HasSuffix(got, " "+sized) {
		t.Errorf("h2 tcp_rmem = %q, want its maximum %s", got, sized)
	}
	if got, want := read("h2", "tcp_wmem"), "4096 16384 1048576"; got != want {
		t.Errorf("h2 tcp_wmem = %q, want the lab file's %q", got, want)
	}
}
