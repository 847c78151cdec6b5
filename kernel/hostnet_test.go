//go:build linux

package kernel

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"

	"github.com/atmlab/atmlab/control"
	"github.com/atmlab/atmlab/netstat"
	"github.com/atmlab/atmlab/topologies/labfile"
)

// needRoot skips a test that makes namespaces without root; under CI a
// missing root is a failure.
func needRoot(tb testing.TB) {
	tb.Helper()
	if os.Geteuid() != 0 {
		if os.Getenv("CI") != "" {
			tb.Fatal("needs root (namespaces): run `sudo make test`")
		}
		tb.Skip("needs root (namespaces): run with sudo")
	}
}

// hostNamespace makes a marked namespace for a test and removes it at
// cleanup.
func hostNamespace(tb testing.TB) (netns.NsHandle, string) {
	tb.Helper()
	needRoot(tb)
	lab := fmt.Sprintf("hr%d", os.Getpid())
	name := lab + "-h1"
	ns, err := createNamespace(lab, name)
	if ns.IsOpen() {
		tb.Cleanup(func() { ns.Close(); Remove([]string{name}) })
	}
	if err != nil {
		tb.Fatal(err)
	}
	return ns, name
}

// freshCounters reads a host's counters as Stats did before hostReader:
// enter the namespace, open /proc, read, leave.
func freshCounters(ns string) (netstat.Counters, error) {
	var c netstat.Counters
	h, err := netns.GetFromPath(filepath.Join(NetnsDir, ns))
	if err != nil {
		return c, err
	}
	defer h.Close()
	err = inNamespace(h, func() error {
		snmp, err := os.ReadFile("/proc/thread-self/net/snmp")
		if err != nil {
			return err
		}
		ext, err := os.ReadFile("/proc/thread-self/net/netstat")
		if err != nil {
			return err
		}
		if c, err = netstat.Parse(bytes.NewReader(append(snmp, ext...))); err != nil {
			return err
		}
		dev, err := os.Open("/proc/thread-self/net/dev")
		if err != nil {
			return err
		}
		defer dev.Close()
		c.IfaceRxDrops, err = netstat.ParseDev(dev)
		return err
	})
	return c, err
}

// freshDrops reads an interface's drops as Stats did before hostReader:
// a new netlink handle (a socket per family) per read.
func freshDrops(ns, dev string) uint64 {
	nsh, err := netns.GetFromPath(filepath.Join(NetnsDir, ns))
	if err != nil {
		return 0
	}
	defer nsh.Close()
	h, err := netlink.NewHandleAt(nsh)
	if err != nil {
		return 0
	}
	defer h.Close()
	link, err := h.LinkByName(dev)
	if err != nil {
		return 0
	}
	var n uint64
	if st := link.Attrs().Statistics; st != nil {
		n += st.TxDropped
	}
	qdiscs, _ := h.QdiscList(link)
	for _, q := range qdiscs {
		if st := q.Attrs().Statistics; st != nil && st.Queue != nil {
			n += uint64(st.Queue.Drops)
		}
	}
	return n
}

// A reader opened once sees its namespace's counters as they are at each
// read: three datagrams sent inside the namespace to a closed port count
// three more out and three more to no port, and it reads what a fresh
// read inside the namespace reads; its netlink socket is the namespace's.
func TestHostReader(t *testing.T) {
	ns, name := hostNamespace(t)
	r, err := openHostReader(name)
	if err != nil {
		t.Fatal(err)
	}
	defer r.close()
	before, err := r.counters()
	if err != nil {
		t.Fatal(err)
	}
	err = inNamespace(ns, func() error {
		c, err := net.ListenPacket("udp", "127.0.0.1:0") // unconnected: ICMP errors do not fail the next send
		if err != nil {
			return err
		}
		defer c.Close()
		for range 3 {
			if _, err := c.WriteTo([]byte("x"), &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 9}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var after netstat.Counters
	for deadline := time.Now().Add(time.Second); ; time.Sleep(10 * time.Millisecond) {
		if after, err = r.counters(); err != nil {
			t.Fatal(err)
		}
		if after.UDPNoPorts-before.UDPNoPorts >= 3 || time.Now().After(deadline) {
			break
		}
	}
	if d := after.Sub(before); d.UDPOutDatagrams != 3 || d.UDPNoPorts != 3 || d.UDPInDatagrams != 0 {
		t.Errorf("after three datagrams to a closed port: %+v, want 3 out, 3 to no port, 0 in", d)
	}
	fresh, err := freshCounters(name)
	if err != nil {
		t.Fatal(err)
	}
	if fresh != after {
		t.Errorf("reader read %+v, a fresh read inside the namespace %+v", after, fresh)
	}

	// A fresh namespace has its loopback alone.
	if links, err := r.nl.LinkList(); err != nil || len(links) != 1 || links[0].Attrs().Name != "lo" {
		t.Errorf("the reader's netlink socket lists %d links (%v), want the namespace's lo alone", len(links), err)
	}
	if tap, qdisc, _ := r.drops("lo"); tap+qdisc != freshDrops(name, "lo") {
		got, want := tap+qdisc, freshDrops(name, "lo")
		t.Errorf("drops on lo: reader %d, fresh handle %d", got, want)
	}
}

// BenchmarkHostCounters is what one host's part of a stats snapshot costs:
// its kernel counters and one interface's drops, read through a hostReader
// and, as before it, through a fresh netlink handle and setns per read.
func BenchmarkHostCounters(b *testing.B) {
	_, name := hostNamespace(b)
	b.Run("reader", func(b *testing.B) {
		r, err := openHostReader(name)
		if err != nil {
			b.Fatal(err)
		}
		defer r.close()
		for b.Loop() {
			if _, err := r.counters(); err != nil {
				b.Fatal(err)
			}
			r.drops("lo")
		}
	})
	b.Run("setns", func(b *testing.B) {
		for b.Loop() {
			if _, err := freshCounters(name); err != nil {
				b.Fatal(err)
			}
			freshDrops(name, "lo")
		}
	})
}

// BenchmarkLabStats is what one stats snapshot of a running two-host lab
// costs (atmlab stats and each poll of the live view take one): the
// loop's part alone (its counters, taken on the loop goroutine), and the
// whole of Stats with the hosts' kernel counters.
func BenchmarkLabStats(b *testing.B) {
	needRoot(b)
	lab, err := labfile.Parse("bs.yaml", []byte(fmt.Sprintf(`name: bs%d
topology:
  nodes:
    h1: {kind: host, ipv4: 10.0.0.1/24}
    h2: {kind: host, ipv4: 10.0.0.2/24}
    sw1: {kind: switch}
  links:
    - {endpoints: ["h1:eth0", "sw1:p1"], ethernet: {rate: 100M}}
    - {endpoints: ["h2:eth0", "sw1:p2"], ethernet: {rate: 100M}}
`, os.Getpid()%100000)))
	if err != nil {
		b.Fatal(err)
	}
	k, err := Up(lab)
	if err != nil {
		b.Fatal(err)
	}
	defer k.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- k.Run(ctx) }()
	defer func() { cancel(); <-done }()
	b.Run("loop", func(b *testing.B) {
		for b.Loop() {
			if err := k.Loop.Query(ctx, func() {
				control.Snapshot(k.Lab.Name, k.Loop.Stats(), k.Net, k.Loop.Now(), k.changes)
			}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("stats", func(b *testing.B) {
		for b.Loop() {
			st, err := k.Stats(ctx)
			if err != nil {
				b.Fatal(err)
			}
			if len(st.Hosts) != 2 {
				b.Fatalf("counters of %d hosts, want 2", len(st.Hosts))
			}
		}
	})
}
