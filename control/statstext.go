package control

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/atmlab/atmlab/emulator"
)

// WriteText prints the stats as atmlab stats does without -o json: the
// port table, each device's own line, the half-duplex, ATM and router
// counters, the host kernels' and the emulator's.
func (st *Stats) WriteText(out io.Writer) {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "port\trx frames\trx bytes\ttx frames\ttx bytes\tdrops\timpair drops\tqueue high\thost drops\tcpu drops\t")
	for _, p := range st.Ports {
		fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t\n", p.Port, p.RxFrames, p.RxBytes, p.TxFrames, p.TxBytes, p.Drops, p.ImpairDrops, p.QueueHigh, p.HostDrops,
			p.HostOverruns+p.CPUDrops) // a slow host's or a software switch's CPU fell behind
	}
	w.Flush()
	for _, name := range slices.Sorted(maps.Keys(st.Nodes)) { // each device's own line (a hub's medium)
		if l := st.Nodes[name].Line; l != "" {
			fmt.Fprintln(out, l)
		}
	}
	portSection(out, "half duplex:", st.Ports, func(p emulator.PortStats) (string, bool) {
		c := p.HalfDuplex
		if c == nil {
			return "", false
		}
		return fmt.Sprintf("%s: %d collisions (%d single, %d multiple, %d excessive, %d late), %d deferred",
			p.Port, c.Collisions, c.SingleCollision, c.MultipleCollision, c.ExcessiveCollision, c.LateCollisions, c.Deferred), true
	})
	portSection(out, "atm (on atm-switch ports, frames are cells):", st.Ports, func(p emulator.PortStats) (string, bool) {
		if p.ATM == nil {
			return "", false
		}
		return atmLine(p.Port, p.ATM), true
	})
	portSection(out, "routers (packets that arrived on each interface):", st.Ports, func(p emulator.PortStats) (string, bool) {
		if p.Router == nil {
			return "", false
		}
		return routerLine(p.Port, p.Router), true
	})
	if len(st.Hosts) > 0 {
		fmt.Fprintln(out, "host kernels (their own counters: what they lost or resent inside themselves):")
		for _, name := range slices.Sorted(maps.Keys(st.Hosts)) {
			fmt.Fprintln(out, "  "+st.Hosts[name].Line(name))
		}
	}
	if len(st.Changes) > 0 {
		fmt.Fprintln(out, "changes (atmlab set):")
		for _, c := range st.Changes {
			fmt.Fprintf(out, "  %s\n", c)
		}
	}
	if len(st.Cuts) > 0 {
		fmt.Fprintln(out, "cuts (frames to and from the other parts; late: arrived after departure + delay):")
		for _, c := range st.Cuts {
			fmt.Fprintf(out, "  %s to part %s at %s: delay %v, sent %d, received %d, lost %d, late %d (p99 %v, max %v), on time by p50 %v\n",
				c.Link, c.Peer, c.Address, c.Delay, c.Sent, c.Received, c.Lost, c.Late, c.Lateness.P99, c.Lateness.Max, c.Slack.P50)
			fmt.Fprintf(out, "    clock: offset %v, one-way latency %v + jitter %v, round trip min %v median %v max %v over %d exchanges\n",
				c.Offset, c.Latency, c.Jitter, c.RTTMin, c.RTTMedian, c.RTTMax, c.Exchanges)
			if c.Warning != "" {
				fmt.Fprintf(out, "    warning: %s\n", c.Warning)
			}
		}
	}
	l := st.Loop
	fmt.Fprintf(out, "emulator: up %v, CPU %.0f%% (and %v polling idle), release lateness p50 %v p99 %v max %v over %d releases\n",
		l.Uptime.Round(time.Millisecond), 100*l.CPU, l.IdleSpin.Round(time.Millisecond), l.Lateness.P50, l.Lateness.P99, l.Lateness.Max, l.Lateness.Count)
	if len(l.Added) > 0 {
		fmt.Fprintln(out, "emulator's added latency (release minus model time), by how far apart each host's frames came:")
		for _, a := range l.Added {
			fmt.Fprintf(out, "  %s: p50 %v p99 %v over %d releases, median spacing %v\n",
				a.Traffic(), a.Lateness.P50, a.Lateness.P99, a.Lateness.Count, a.Spacing.P50.Round(time.Microsecond))
		}
	}
	if l.LateHeld > 0 {
		fmt.Fprintf(out, "warning: the emulator held back %d frames from the hosts: its model ran too far behind the wall clock, and they entered it later than they came\n", l.LateHeld)
	}
	if l.LateDropped > 0 {
		fmt.Fprintf(out, "warning: the emulator dropped %d frames it would have handed to the hosts later than its bound after their model time: it lost its core for longer\n", l.LateDropped)
	}
	if l.SuperFrames > 0 || l.GSOErrors > 0 {
		fmt.Fprintf(out, "super-frames: %d from the hosts, cut into %d wire frames (%.1f each); %d could not be cut\n",
			l.SuperFrames, l.SuperSegments, float64(l.SuperSegments)/float64(max(l.SuperFrames, 1)), l.GSOErrors)
	}
	fmt.Fprintf(out, "baseline: a ping over a plain veth pair between two namespaces took %v (median, measured at lab start); a ping between the lab's hosts minus this and the model's time is the emulator's added latency\n",
		l.VethRTT.Round(100*time.Nanosecond))
	if n := st.HostDrops(); n > 0 {
		fmt.Fprintf(out, "warning: hosts dropped %d frames at their TAPs: the emulator, not the model, limited this lab (see emulator CPU)\n", n)
	}
}

// portSection prints a titled list of the ports' lines, one for each port that
// has one; nothing when none has.
func portSection(w io.Writer, title string, ports []emulator.PortStats, line func(emulator.PortStats) (string, bool)) {
	var lines []string
	for _, p := range ports {
		if l, ok := line(p); ok {
			lines = append(lines, l)
		}
	}
	if len(lines) > 0 {
		fmt.Fprintln(w, title+"\n  "+strings.Join(lines, "\n  "))
	}
}

// atmLine is an ATM port's cell counters, the non-zero ones beyond the
// cells sent and received.
func atmLine(port string, c *emulator.ATMStats) string {
	line := fmt.Sprintf("%s: %d cells sent, %d received", port, c.TxCells, c.RxCells)
	for _, f := range []struct {
		n    uint64
		what string
	}{
		{c.QueueDrops, "queue drops"}, {c.EPDDrops, "EPD drops"}, {c.PPDDrops, "PPD drops"}, {c.LostCells, "lost on the link"}, {c.LimitDrops, "dropped at the delay line's limit"},
		{c.HECCorrected, "HEC corrected"}, {c.HECDrops, "HEC drops"}, {c.UnknownVC, "on no VC"},
		{c.CRCErrors, "CRC errors"}, {c.LengthErrors, "length errors"}, {c.EncapErrors, "encapsulation errors"}, {c.SeqErrors, "sequence errors"},
		{c.Timeouts, "reassembly timeouts"}, {c.TooLong, "too long"}, {c.NoVC, "frames with no VC"}, {c.NotIP, "frames not IP"}, {c.ARPReplies, "ATMARP replies"},
	} {
		if f.n > 0 {
			line += fmt.Sprintf(", %d %s", f.n, f.what)
		}
	}
	return line
}

// routerLine is a router interface's forwarding counters, the non-zero ones.
func routerLine(port string, c *emulator.RouterStats) string {
	line := fmt.Sprintf("%s: %d forwarded", port, c.Forwarded)
	for _, f := range []struct {
		n    uint64
		what string
	}{
		{c.Pushed, "labels pushed"}, {c.Swapped, "swapped"}, {c.Popped, "popped"}, {c.TTLExpired, "TTL expired"},
		{c.NoRoute, "no route"}, {c.NoLabel, "unknown label"}, {c.TooBig, "too big"}, {c.ICMPSent, "ICMP sent"},
		{c.Local, "for the router"}, {c.Malformed, "malformed"}, {c.CPUDrops, "CPU queue drops"},
	} {
		if f.n > 0 {
			line += fmt.Sprintf(", %d %s", f.n, f.what)
		}
	}
	return line
}
