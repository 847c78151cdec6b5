// Package netstat reads a host kernel's own UDP and TCP counters from
// /proc/net/snmp and its interfaces' receive drops from /proc/net/dev: what
// a host lost or resent inside itself (a full socket receive buffer or
// input backlog, a bad checksum, a retransmitted segment), which no
// emulator counter sees, so that a lab's figures can add up end to end;
// and the machine's steal time from /proc/stat, what a hypervisor took.
package netstat

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// Counters are a host's UDP and TCP counters (RFC 4113, RFC 4022 and
// Linux's additions, as /proc/net/snmp names them).
type Counters struct {
	UDPInDatagrams  uint64 `json:"udp_in_datagrams"`  // delivered to a socket and read
	UDPNoPorts      uint64 `json:"udp_no_ports"`      // for a port nobody listens on
	UDPInErrors     uint64 `json:"udp_in_errors"`     // not delivered: every cause below, and more
	UDPRcvbufErrors uint64 `json:"udp_rcvbuf_errors"` // the socket's receive buffer was full (also in UDPInErrors)
	UDPInCsumErrors uint64 `json:"udp_in_csum_errors,omitempty"`
	UDPOutDatagrams uint64 `json:"udp_out_datagrams"` // handed to IP and the qdisc
	UDPSndbufErrors uint64 `json:"udp_sndbuf_errors"` // refused by a full qdisc or send buffer
	TCPOutSegs      uint64 `json:"tcp_out_segs"`
	TCPRetransSegs  uint64 `json:"tcp_retrans_segs"`
	TCPInErrs       uint64 `json:"tcp_in_errs"`
	// TCPRcvDrops are the segments the host's TCP dropped for want of
	// receive memory: a full socket's receive queue, its backlog or its
	// out-of-order queue (/proc/net/netstat's TcpExt TCPRcvQDrop,
	// TCPBacklogDrop and TCPOFODrop, summed).
	TCPRcvDrops uint64 `json:"tcp_rcv_drops,omitempty"`
	// IfaceRxDrops are the frames the host's interfaces (all but lo) took
	// in and dropped below IP, such as a full input backlog: /proc/net/dev's
	// receive drop column, which is rx_dropped + rx_missed_errors.
	IfaceRxDrops uint64 `json:"iface_rx_drops"`
}

// UDPDropped is the datagrams that reached the host's UDP layer and no
// socket: receive errors (a full buffer among them) and closed ports.
func (c Counters) UDPDropped() uint64 { return c.UDPInErrors + c.UDPNoPorts }

// Sub returns c - o, counter by counter: what happened between two reads.
func (c Counters) Sub(o Counters) Counters {
	return Counters{
		UDPInDatagrams: c.UDPInDatagrams - o.UDPInDatagrams, UDPNoPorts: c.UDPNoPorts - o.UDPNoPorts,
		UDPInErrors: c.UDPInErrors - o.UDPInErrors, UDPRcvbufErrors: c.UDPRcvbufErrors - o.UDPRcvbufErrors,
		UDPInCsumErrors: c.UDPInCsumErrors - o.UDPInCsumErrors, UDPOutDatagrams: c.UDPOutDatagrams - o.UDPOutDatagrams,
		UDPSndbufErrors: c.UDPSndbufErrors - o.UDPSndbufErrors, TCPOutSegs: c.TCPOutSegs - o.TCPOutSegs,
		TCPRetransSegs: c.TCPRetransSegs - o.TCPRetransSegs, TCPInErrs: c.TCPInErrs - o.TCPInErrs,
		IfaceRxDrops: c.IfaceRxDrops - o.IfaceRxDrops, TCPRcvDrops: c.TCPRcvDrops - o.TCPRcvDrops,
	}
}

// Add returns c + o, counter by counter.
func (c Counters) Add(o Counters) Counters {
	var zero Counters
	return c.Sub(zero.Sub(o))
}

// Parse reads /proc/net/snmp's format: for each protocol a line of names
// and a line of values, both starting "Proto:". /proc/net/netstat, in the
// same format, may follow it in r (its TcpExt line gives TCPRcvDrops).
func Parse(r io.Reader) (Counters, error) {
	var c Counters
	fields := map[string]*uint64{
		"Udp:InDatagrams": &c.UDPInDatagrams, "Udp:NoPorts": &c.UDPNoPorts, "Udp:InErrors": &c.UDPInErrors,
		"Udp:RcvbufErrors": &c.UDPRcvbufErrors, "Udp:InCsumErrors": &c.UDPInCsumErrors, "Udp:OutDatagrams": &c.UDPOutDatagrams,
		"Udp:SndbufErrors": &c.UDPSndbufErrors, "Tcp:OutSegs": &c.TCPOutSegs, "Tcp:RetransSegs": &c.TCPRetransSegs, "Tcp:InErrs": &c.TCPInErrs,
	}
	summed := map[string]*uint64{
		"TcpExt:TCPRcvQDrop": &c.TCPRcvDrops, "TcpExt:TCPBacklogDrop": &c.TCPRcvDrops, "TcpExt:TCPOFODrop": &c.TCPRcvDrops,
	}
	names := map[string][]string{}
	found := 0
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 || !strings.HasSuffix(f[0], ":") {
			continue
		}
		proto := f[0]
		if names[proto] == nil {
			names[proto] = f[1:]
			continue
		}
		for i, v := range f[1:] {
			if i >= len(names[proto]) {
				break
			}
			if p, ok := fields[proto+names[proto][i]]; ok {
				n, err := strconv.ParseInt(v, 10, 64) // counters are unsigned; Tcp's MaxConn may be -1
				if err != nil {
					return c, fmt.Errorf("netstat: %s%s: %w", proto, names[proto][i], err)
				}
				*p = uint64(n)
				found++
			} else if p, ok := summed[proto+names[proto][i]]; ok {
				n, err := strconv.ParseUint(v, 10, 64)
				if err != nil {
					return c, fmt.Errorf("netstat: %s%s: %w", proto, names[proto][i], err)
				}
				*p += n
			}
		}
		delete(names, proto)
	}
	if err := sc.Err(); err != nil {
		return c, err
	}
	if found == 0 {
		return c, fmt.Errorf("netstat: no Udp or Tcp counters found")
	}
	return c, nil
}

// ParseDev reads /proc/net/dev's format and returns the receive drops
// (the fourth receive column, rx_dropped + rx_missed_errors) of every
// interface but the loopback, summed.
func ParseDev(r io.Reader) (uint64, error) {
	var drops uint64
	found := false
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok || strings.Contains(name, "|") {
			continue // the two header lines
		}
		f := strings.Fields(rest)
		if len(f) < 16 {
			return 0, fmt.Errorf("netstat: /proc/net/dev: %d columns for %s, want 16", len(f), strings.TrimSpace(name))
		}
		n, err := strconv.ParseUint(f[3], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("netstat: /proc/net/dev: %s drop: %w", strings.TrimSpace(name), err)
		}
		found = true
		if strings.TrimSpace(name) != "lo" {
			drops += n
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	if !found {
		return 0, fmt.Errorf("netstat: /proc/net/dev: no interfaces")
	}
	return drops, nil
}

// ParseSteal reads /proc/stat's format and returns the machine's steal
// time: how long, summed over its CPUs, a hypervisor ran something else
// while this VM's vCPUs had work (the eighth figure of the "cpu" line, in
// USER_HZ ticks, which Linux fixes at 100 a second). A lab run records it
// per point, since time stolen stalls the emulator and no lab causes it.
func ParseSteal(r io.Reader) (time.Duration, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 || f[0] != "cpu" {
			continue
		}
		if len(f) < 9 {
			return 0, fmt.Errorf("netstat: /proc/stat: %d figures on the cpu line, want at least 8", len(f)-1)
		}
		ticks, err := strconv.ParseUint(f[8], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("netstat: /proc/stat: steal: %w", err)
		}
		if ticks > math.MaxInt64/uint64(10*time.Millisecond) {
			return 0, fmt.Errorf("netstat: /proc/stat: steal %d ticks is out of range", ticks)
		}
		return time.Duration(ticks) * 10 * time.Millisecond, nil
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("netstat: /proc/stat: no cpu line")
}

// ParseBusy reads /proc/stat's format and returns the time the machine's
// CPUs spent running tasks (user, nice and system, summed over its CPUs;
// interrupts, idle and steal aside): beside what a lab's own processes
// used, the rest is the machine's other load.
func ParseBusy(r io.Reader) (time.Duration, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 || f[0] != "cpu" {
			continue
		}
		if len(f) < 4 {
			return 0, fmt.Errorf("netstat: /proc/stat: %d figures on the cpu line, want at least 3", len(f)-1)
		}
		var ticks uint64
		for _, v := range f[1:4] {
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				return 0, fmt.Errorf("netstat: /proc/stat: %w", err)
			}
			ticks += n
		}
		if ticks > math.MaxInt64/uint64(10*time.Millisecond) {
			return 0, fmt.Errorf("netstat: /proc/stat: %d busy ticks is out of range", ticks)
		}
		return time.Duration(ticks) * 10 * time.Millisecond, nil
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("netstat: /proc/stat: no cpu line")
}

// Busy is the machine's busy CPU time now (ParseBusy of /proc/stat).
func Busy() (time.Duration, error) {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return ParseBusy(f)
}

// StealShare is the share of the whole machine (all its CPUs) that steal
// time stolen over elapsed is: 1 when no vCPU ran at all.
func StealShare(stolen, elapsed time.Duration) float64 {
	if elapsed <= 0 {
		return 0
	}
	return float64(stolen) / float64(elapsed) / float64(runtime.NumCPU())
}

// Steal is the machine's steal time now (ParseSteal of /proc/stat).
func Steal() (time.Duration, error) {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return ParseSteal(f)
}
