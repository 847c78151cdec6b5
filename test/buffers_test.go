//go:build integration

package test

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/atmlab/atmlab/internal/labtest"
	"github.com/atmlab/atmlab/kernel"
	"github.com/atmlab/atmlab/topologies"
	"github.com/vishvananda/netns"
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

// What a host's socket is charged for a datagram its TAP hands it (the
// sk_buff's truesize, read with ss -m from a socket nobody reads) is the
// figure topologies.SmallestTruesize and the docs give; and the host's
// default receive buffer is the machine's own net.core.rmem_default, which
// its namespace can read but not write, so atmlab leaves it alone.
func TestTAPDatagramTruesize(t *testing.T) {
	requireRoot(t)
	r := up(t, labtest.Lab("two-hosts-atm", "NAME"))
	r.exec("h1", "ping", "-c", "1", "-W", "2", "10.0.0.2")
	b, err := os.ReadFile("/proc/sys/net/core/rmem_default")
	if err != nil {
		t.Fatal(err)
	}
	machine := strings.TrimSpace(string(b))
	if got := strings.TrimSpace(string(r.exec("h2", "cat", "/proc/sys/net/core/rmem_default"))); got != machine {
		t.Errorf("h2's net.core.rmem_default = %s, want the machine's %s", got, machine)
	}
	if out, err := r.try("h2", "sh", "-c", "echo "+machine+" > /proc/sys/net/core/rmem_default"); err == nil {
		t.Logf("this kernel lets a namespace write net.core.rmem_default (%s): atmlab could size it (Lab.SocketBufferDefault)", out)
	}
	const n = 100
	for i, c := range []struct{ size, truesize int }{{0, topologies.SmallestTruesize}, {18, 704}, {100, 832}, {200, 896}} {
		port := 7100 + i
		rx := udpIn(t, r.name+"-h2", &net.UDPAddr{IP: net.IPv4(10, 0, 0, 2), Port: port})
		tx := udpIn(t, r.name+"-h1", nil)
		for range n {
			if _, err := tx.WriteTo(make([]byte, c.size), &net.UDPAddr{IP: net.IPv4(10, 0, 0, 2), Port: port}); err != nil {
				t.Fatal(err)
			}
			time.Sleep(200 * time.Microsecond) // well under OC-3c's rate: nothing queues in the lab
		}
		time.Sleep(200 * time.Millisecond)
		out := string(r.exec("h2", "ss", "-u", "-a", "-n", "-m", fmt.Sprintf("sport = :%d", port)))
		m := regexp.MustCompile(`skmem:\(r(\d+),rb\d+,.*,d(\d+)\)`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("%d B: no skmem in ss's output:\n%s", c.size, out)
		}
		if got, want := m[1], fmt.Sprint(n*c.truesize); got != want || m[2] != "0" {
			t.Errorf("%d B: %d datagrams charge %s octets (dropped %s), want %s (%d each)", c.size, n, got, m[2], want, c.truesize)
		}
		rx.Close()
		tx.Close()
	}
}

// udpIn opens a UDP socket in the named namespace, bound to laddr (nil:
// any port), which the test then uses from any thread.
func udpIn(t *testing.T, ns string, laddr *net.UDPAddr) *net.UDPConn {
	t.Helper()
	runtime.LockOSThread() // left locked if the thread cannot return: Go then ends it
	orig, err := netns.Get()
	if err != nil {
		t.Fatal(err)
	}
	defer orig.Close()
	h, err := netns.GetFromPath(filepath.Join(kernel.NetnsDir, ns))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if err := netns.Set(h); err != nil {
		t.Fatal(err)
	}
	c, err := net.ListenUDP("udp4", laddr)
	if err := netns.Set(orig); err != nil {
		t.Fatal(err)
	}
	runtime.UnlockOSThread()
	if err != nil {
		t.Fatal(err)
	}
	return c
}
