//go:build integration

package test

import (
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/atmlab/atmlab/control"
	"github.com/atmlab/atmlab/netstat"
)

// Two senders on 1G links into one 100M port. IPv6 is off and ARP entries
// are fixed, so that every frame on the path is a test datagram.
const overloadLab = `
name: NAME
topology:
  nodes:
    h1: {kind: host, ipv4: 10.0.0.1/24, sysctls: {net.ipv6.conf.all.disable_ipv6: 1, net.ipv6.conf.default.disable_ipv6: 1}}
    h2: {kind: host, ipv4: 10.0.0.2/24, sysctls: {net.ipv6.conf.all.disable_ipv6: 1, net.ipv6.conf.default.disable_ipv6: 1}}
    h3: {kind: host, ipv4: 10.0.0.3/24, sysctls: {net.ipv6.conf.all.disable_ipv6: 1, net.ipv6.conf.default.disable_ipv6: 1}}
    sw1: {kind: switch, buffer: 128KiB}
  links:
    - {endpoints: ["h1:eth0", "sw1:p1"], ethernet: {rate: 1G}}
    - {endpoints: ["h2:eth0", "sw1:p2"], ethernet: {rate: 1G}}
    - {endpoints: ["h3:eth0", "sw1:p3"], ethernet: {rate: 100M}}
`

// 20 s (60 s in `make test-long`) of two UDP senders at 500 Mbit/s each
// (10x the 100M port they share): every datagram the senders' kernels sent
// is delivered to the receiver's sockets or counted as a drop somewhere,
// exactly: at the switch port, at the senders' TAPs, or inside the
// receiving host's kernel (a full socket receive buffer), which only the
// host counters atmlab stats now reads can show. The count is exact for
// any length; the long run shows memory staying flat over a minute.
func TestOverloadCount(t *testing.T) {
	requireRoot(t, "iperf")
	secs := 20
	if longTests {
		secs = 60
	}
	r := up(t, overloadLab)
	macs := map[string]string{}
	for _, h := range []string{"h1", "h2", "h3"} {
		f := strings.Fields(string(r.exec(h, "ip", "-o", "link", "show", "eth0"))) // not /sys: that is the caller's namespace
		if i := slices.Index(f, "link/ether"); i >= 0 && i+1 < len(f) {
			macs[h] = f[i+1]
		} else {
			t.Fatalf("no MAC for %s in %v", h, f)
		}
	}
	ips := map[string]string{"h1": "10.0.0.1", "h2": "10.0.0.2", "h3": "10.0.0.3"}
	for _, a := range []string{"h1", "h2", "h3"} {
		for _, b := range []string{"h1", "h2", "h3"} {
			if a != b {
				r.exec(a, "ip", "neigh", "replace", ips[b], "lladdr", macs[b], "dev", "eth0", "nud", "permanent")
			}
		}
	}
	// iperf 2's servers keep their sockets open and reading after a test,
	// so nothing waits unread in a socket when the counters are read.
	r.start("h3", "iperf", "-s", "-u", "-p", "5001")
	r.start("h3", "iperf", "-s", "-u", "-p", "5002")
	r.waitListening("h3", "udp", 5001)
	r.waitListening("h3", "udp", 5002)

	st0 := r.stats()
	c1 := r.start("h1", "iperf", "-c", "10.0.0.3", "-u", "-p", "5001", "-b", "500M", "-l", "1472", "-t", fmt.Sprint(secs))
	c2 := r.start("h2", "iperf", "-c", "10.0.0.3", "-u", "-p", "5002", "-b", "500M", "-l", "1472", "-t", fmt.Sprint(secs))
	var mem []string
	for range 6 {
		time.Sleep(time.Duration(secs) * time.Second / 6) // six memory samples over the overload
		mem = append(mem, rss(r))
	}
	waitOrKill(t, c1, 30*time.Second)
	waitOrKill(t, c2, 30*time.Second)
	time.Sleep(2 * time.Second) // the switch's queue and the hosts' drain
	st1 := r.stats()
	host := func(st control.Stats, h string) netstat.Counters { return st.Hosts[h] }
	d := func(h string) netstat.Counters { return host(st1, h).Sub(host(st0, h)) }
	// Frames the receiving host's kernel dropped below UDP (its input
	// backlog on a busy machine: counted on the interface, /proc/net/dev,
	// which stats reads beside /proc/net/snmp), and writes into its TAP
	// that failed.
	atIface := d("h3").IfaceRxDrops
	tapWrites := st1.Loop.WriteErrors - st0.Loop.WriteErrors
	// Frames for h3 the loop dropped rather than hand them over later than
	// its release bound (kernel.Loop.ReleaseBound), when it lost its core.
	// h3 sends nothing, so the switch floods the datagrams to the other
	// sender too: late drops there are copies, counted at their own port
	// and not in this ledger.
	var lateDropped, lateCopies uint64
	late0 := map[string]uint64{}
	for _, p := range st0.Ports {
		late0[p.Port] = p.LateDropped
	}
	for _, p := range st1.Ports {
		if p.Port == "h3:eth0" {
			lateDropped += p.LateDropped - late0[p.Port]
		} else {
			lateCopies += p.LateDropped - late0[p.Port]
		}
	}
	sent := d("h1").UDPOutDatagrams + d("h2").UDPOutDatagrams
	delivered := d("h3").UDPInDatagrams
	inHost := d("h3").UDPDropped()
	var switchDrops, tapDrops, otherDrops uint64
	rows0 := map[string]uint64{}
	for _, p := range st0.Ports {
		rows0[p.Port+"/d"] = p.Drops + p.ImpairDrops + p.HostOverruns + p.CPUDrops
		rows0[p.Port+"/h"] = p.HostDrops
	}
	for _, p := range st1.Ports {
		drops := p.Drops + p.ImpairDrops + p.HostOverruns + p.CPUDrops - rows0[p.Port+"/d"]
		host := p.HostDrops - rows0[p.Port+"/h"]
		switch {
		case p.Port == "sw1:p3":
			switchDrops += drops
		case strings.HasPrefix(p.Port, "h1:") || strings.HasPrefix(p.Port, "h2:"):
			tapDrops += host
			otherDrops += drops
		default:
			otherDrops += drops + host
		}
	}
	t.Logf("%d s at 2 x 500M into 100M: %d datagrams sent = %d delivered + %d switch drops + %d at the senders' TAPs + %d inside h3's kernel (%d receive buffer full, %d at its interface) + %d failed TAP writes + %d dropped later than the release bound + %d elsewhere; flooded copies dropped late %d; senders' queues refused %d; memory (RSS) %s",
		secs, sent, delivered, switchDrops, tapDrops, inHost+atIface, d("h3").UDPRcvbufErrors, atIface, tapWrites, lateDropped, otherDrops, lateCopies, d("h1").UDPSndbufErrors+d("h2").UDPSndbufErrors, strings.Join(mem, " "))
	if sent < uint64(secs)*8127 {
		t.Errorf("only %d datagrams sent in %d s: no overload of a 100M port (8127 a second)", sent, secs)
	}
	if total := delivered + switchDrops + tapDrops + inHost + atIface + tapWrites + lateDropped + otherDrops; total != sent {
		t.Errorf("sent %d != delivered + counted drops %d (off by %d)", sent, total, int64(sent)-int64(total))
	}
	if delivered > uint64(secs+1)*8127 || delivered < uint64(secs-5)*8127 { // 5 s for the senders' start and end
		t.Errorf("delivered %d in %d s, want about the 100M port's 8127 a second", delivered, secs)
	}
}

// rss is the atmlab process's resident memory, as ps prints it.
func rss(r *running) string {
	out, err := exec.Command("ps", "-o", "rss=", "-p", fmt.Sprint(r.cmd.Process.Pid)).Output()
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(out)) + "K"
}
