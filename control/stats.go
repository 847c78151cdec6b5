package control

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/atmlab/atmlab/devices"
	"github.com/atmlab/atmlab/emulator"
	"github.com/atmlab/atmlab/emulator/hist"
	"github.com/atmlab/atmlab/emulator/units"
	"github.com/atmlab/atmlab/netstat"
	"github.com/atmlab/atmlab/topologies/settings"
)

// Stats is a running lab's counters: `atmlab stats -o json` prints it.
type Stats struct {
	Lab   string               `json:"lab"`
	Loop  LoopStats            `json:"emulator"`
	Ports []emulator.PortStats `json:"ports"`
	// Nodes are what each device reports beyond its ports' rows, by node
	// name (devices.Report): a hub's utilisation, a switch's filtered
	// frames.
	Nodes map[string]devices.Report `json:"nodes,omitempty"`
	// Sections are the top-level sections the nodes' reports also fill,
	// kept for the clients that read them since before Nodes (hubs,
	// switch_filtered): section, node name, the node's entry. In JSON
	// each is a key of its own beside lab and ports.
	Sections map[string]map[string]any `json:"-"`
	// Hosts are each host kernel's own UDP and TCP counters: what it lost
	// or resent inside itself, beyond any emulator counter.
	Hosts map[string]netstat.Counters `json:"hosts,omitempty"`
	// Changes are atmlab set's changes, oldest first.
	Changes []Changed `json:"changes,omitempty"`
	// Cuts are a split lab's part's cut links, in the lab file's order:
	// what crossed to and from the peer instances, how late, and the
	// clock exchanges' figures (backend/cut).
	Cuts []CutStats `json:"cuts,omitempty"`
}

// CutStats is one cut link of a part run in real time, seen from this
// instance. Late frames arrived from the peer after the model time they
// were due at (departure + Delay); Slack is how early the others came.
type CutStats struct {
	Link     string        `json:"link"`     // "s1:eth1-s2:eth1"
	Peer     string        `json:"peer"`     // the part at the far end
	Address  string        `json:"address"`  // its instance's UDP address
	Delay    time.Duration `json:"delay_ns"` // what a frame arriving here travels after its departure
	Sent     uint64        `json:"sent"`
	Received uint64        `json:"received"`
	Lost     uint64        `json:"lost"` // frames missing from the peer's sequence
	Late     uint64        `json:"late"`
	Lateness hist.Summary  `json:"lateness"` // of the late frames
	Slack    hist.Summary  `json:"slack"`    // of the frames on time
	// SendLate is how long after its departure (model time) each frame
	// went out to the peer: the sending loop's part of any lateness.
	SendLate   hist.Summary `json:"send_late"`
	LimitDrops uint64       `json:"limit_drops,omitempty"`
	SendErrors uint64       `json:"send_errors,omitempty"`
	// The clock exchanges with the peer (the latest cut.Window).
	Exchanges int           `json:"exchanges"`
	Offset    time.Duration `json:"offset_ns"`  // the peer's model clock minus this one's
	Latency   time.Duration `json:"latency_ns"` // one way: half the median round trip
	Jitter    time.Duration `json:"jitter_ns"`
	RTTMin    time.Duration `json:"rtt_min_ns"`
	RTTMedian time.Duration `json:"rtt_median_ns"`
	RTTMax    time.Duration `json:"rtt_max_ns"`
	// Warning says the latency measured now would refuse the cut.
	Warning string `json:"warning,omitempty"`
}

// LoopStats is the real-time loop's own health, reported beside every
// result (docs/design.md, modelling rule 7).
type LoopStats struct {
	Uptime   time.Duration `json:"uptime_ns"`
	CPU      float64       `json:"cpu"`          // the atmlab process's CPU time / wall time (1.0 = one core)
	CPUTime  time.Duration `json:"cpu_time_ns"`  // the process's CPU time since the loop started, idle spinning excluded
	IdleSpin time.Duration `json:"idle_spin_ns"` // CPU time spent polling idle (yielding the core) with nothing to do
	// Lateness is how late the loop's writes to TAPs ended against the
	// model times they were made at.
	Lateness hist.Summary `json:"lateness"`
	// Added is Lateness split by the spacing of the frames each host was
	// sent: the emulator's own added latency (release minus model time)
	// over the traffic it served, busiest first.
	Added []AddedLatency `json:"added_latency,omitempty"`
	// Wake is how late the passes that released frames began after the
	// releases' model times: the loop's own part of Lateness, without the
	// TAP write (in which the receiving host's kernel runs).
	Wake        hist.Summary  `json:"wake_lateness"`
	VethRTT     time.Duration `json:"veth_rtt_ns"` // a ping over a plain veth pair, measured at lab start
	WriteErrors uint64        `json:"tap_write_errors"`
	GSOErrors   uint64        `json:"gso_errors,omitempty"` // super-frames from a host that could not be cut
	// LateHeld are the frames from hosts the loop let into the model
	// later than they came, because the model ran more than its bound
	// behind the wall clock (kernel.Loop.LateBound): they waited as if in
	// the TAP, and the model's link stood idle meanwhile.
	LateHeld uint64 `json:"late_held,omitempty"`
	// LateDropped are the wire frames the loop dropped instead of handing
	// them to a host later than its bound after their model time
	// (kernel.Loop.ReleaseBound): it had lost its core for longer.
	LateDropped uint64 `json:"late_dropped,omitempty"`
	// SuperFrames are the GSO super-frames hosts handed over, cut into
	// SuperSegments wire frames.
	SuperFrames   uint64 `json:"super_frames,omitempty"`
	SuperSegments uint64 `json:"super_segments,omitempty"`
	// PriorityRaised is how many times the loop, short of CPU, raised its
	// thread's priority (kernel.Loop.ShortNice) to take CPU from the
	// hosts.
	PriorityRaised uint64 `json:"priority_raised,omitempty"`
	// Stalls are the loop's latest stalls (kernel.StallKeep at most,
	// oldest first); StallCount counts every one since it started.
	Stalls     []netstat.Stall `json:"stalls,omitempty"`
	StallCount uint64          `json:"stall_count,omitempty"`
	// GCCycles are the garbage collections the emulator's process has
	// finished since it started, and Allocated the bytes it allocated on
	// the heap meanwhile (what the collections have to collect).
	GCCycles  uint64 `json:"gc_cycles"`
	Allocated uint64 `json:"allocated_bytes"`
}

// During says what the loop did between a and b, two of its stats
// (a first): the garbage collections its process finished and its stalls,
// the longest three with their figures.
func (b LoopStats) During(a LoopStats) string {
	in := netstat.StallsIn(b.Stalls, a.Uptime, b.Uptime)
	n := b.StallCount - a.StallCount
	var sb strings.Builder
	fmt.Fprintf(&sb, "%d GCs, %d KiB allocated, ", b.GCCycles-a.GCCycles, (b.Allocated-a.Allocated+512)/1024)
	switch {
	case n == 0:
		fmt.Fprintf(&sb, "no stall over %v", netstat.StallMin)
		return sb.String()
	case n == 1:
		fmt.Fprintf(&sb, "1 stall over %v", netstat.StallMin)
	default:
		fmt.Fprintf(&sb, "%d stalls over %v", n, netstat.StallMin)
	}
	if uint64(len(in)) < n {
		fmt.Fprintf(&sb, " (%d kept)", len(in))
	}
	for i, s := range in[:min(3, len(in))] {
		if i == 0 {
			sb.WriteString(", longest ")
		} else {
			sb.WriteString("; ")
		}
		sb.WriteString(s.String())
	}
	return sb.String()
}

// AddedLatency is the release lateness of the frames sent to a host From
// to To apart in model time (To 0: no bound), and their spacing.
type AddedLatency struct {
	From     time.Duration `json:"spacing_from_ns"`
	To       time.Duration `json:"spacing_to_ns,omitempty"`
	Spacing  hist.Summary  `json:"spacing"`
	Lateness hist.Summary  `json:"lateness"`
}

// Traffic names a spacing class by the traffic it is.
func (a AddedLatency) Traffic() string {
	switch {
	case a.From == 0:
		return fmt.Sprintf("under %v apart (streams, fast request/response)", a.To)
	case a.To == 0:
		return fmt.Sprintf("%v or more apart (the emulator slept between them)", a.From)
	default:
		return fmt.Sprintf("%v to %v apart (the emulator polled between them)", a.From, a.To)
	}
}

// Snapshot gathers the emulated network's counters at model time now
// (elapsed since the lab started); call it where the network's model runs.
// The hosts' own counters (Hosts, PortStats.HostDrops) are the runtime's
// to add.
func Snapshot(lab string, loop LoopStats, net *devices.Network, now time.Duration, changes []Changed) Stats {
	st := Stats{Lab: lab, Loop: loop, Ports: net.Stats(), Changes: slices.Clone(changes)}
	for _, d := range net.Devices {
		r, ok := d.Report(now)
		if !ok {
			continue
		}
		if st.Nodes == nil {
			st.Nodes = map[string]devices.Report{}
		}
		st.Nodes[d.Name()] = r
		if r.Section == "" {
			continue
		}
		if st.Sections == nil {
			st.Sections = map[string]map[string]any{}
		}
		if st.Sections[r.Section] == nil {
			st.Sections[r.Section] = map[string]any{}
		}
		st.Sections[r.Section][d.Name()] = r.Entry
	}
	return st
}

// stats is Stats without its methods, for (un)marshalling its fields.
type stats Stats

// MarshalJSON writes the fields and, after them, each of Sections as a key
// of its own, in name order.
func (st Stats) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(stats(st))
	if err != nil || len(st.Sections) == 0 {
		return b, err
	}
	b = b[:len(b)-1] // the closing brace
	for _, name := range slices.Sorted(maps.Keys(st.Sections)) {
		if _, clash := statsKeys[name]; clash {
			return nil, fmt.Errorf("stats section %q has a field's name", name)
		}
		v, err := json.Marshal(st.Sections[name])
		if err != nil {
			return nil, err
		}
		k, _ := json.Marshal(name)
		b = append(append(append(append(b, ','), k...), ':'), v...)
	}
	return append(b, '}'), nil
}

// UnmarshalJSON reads the fields and keeps every other key whose value is
// an object in Sections, each entry as its raw JSON.
func (st *Stats) UnmarshalJSON(b []byte) error {
	if err := json.Unmarshal(b, (*stats)(st)); err != nil {
		return err
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(b, &all); err != nil {
		return err
	}
	for k, v := range all {
		if _, field := statsKeys[k]; field {
			continue
		}
		var entries map[string]json.RawMessage
		if json.Unmarshal(v, &entries) != nil {
			continue // not a section: a key from a newer atmlab
		}
		if st.Sections == nil {
			st.Sections = map[string]map[string]any{}
		}
		st.Sections[k] = map[string]any{}
		for name, e := range entries {
			st.Sections[k][name] = e
		}
	}
	return nil
}

// statsKeys are the JSON keys of Stats' fields.
var statsKeys = func() map[string]bool {
	keys := map[string]bool{}
	t := reflect.TypeFor[stats]()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		keys[name] = true
	}
	return keys
}()

// HostKernel sums the hosts' own counters.
func (st *Stats) HostKernel() netstat.Counters {
	var c netstat.Counters
	for _, h := range st.Hosts {
		c = c.Add(h)
	}
	return c
}

// QdiscDrops sums the frames the hosts' qdiscs dropped and requeued.
func (st *Stats) QdiscDrops() (drops, requeues uint64) {
	for _, p := range st.Ports {
		drops += p.QdiscDrops
		requeues += p.QdiscRequeues
	}
	return drops, requeues
}

// HostDrops sums the frames hosts dropped at their TAPs.
func (st *Stats) HostDrops() uint64 {
	var n uint64
	for _, p := range st.Ports {
		n += p.HostDrops
	}
	return n
}

// Changed is one run-time change as the lab applied it: when (model time
// since up), to what, and each direction's settings after it.
type Changed struct {
	At         time.Duration `json:"at_ns"`
	Endpoint   string        `json:"endpoint"`
	Direction  string        `json:"direction,omitempty"` // sending endpoint; empty is both
	Change     string        `json:"change"`              // as atmlab set's words
	Directions []string      `json:"directions"`          // "h1:eth0->sw1:p1 rate=... delay=..." after the change
}

func (c Changed) String() string {
	return fmt.Sprintf("at %v: set %s %s: %s", c.At.Round(time.Millisecond), c.Endpoint, c.Change, strings.Join(c.Directions, "; "))
}

// Apply makes a change to a link of net at model time now and records it;
// call it where the network's model runs.
func Apply(net *devices.Network, now time.Duration, endpoint, direction string, c settings.Change) ([]devices.Applied, Changed, error) {
	applied, err := net.Set(endpoint, direction, c)
	if err != nil {
		return nil, Changed{}, err
	}
	rec := Changed{At: now, Endpoint: endpoint, Direction: direction, Change: c.String()}
	for _, a := range applied {
		cfg := a.After
		d := fmt.Sprintf("%s->%s rate=%v delay=%v jitter=%v loss=%g%% limit=%d", a.From, a.To, cfg.Rate, cfg.Impair.Delay, cfg.Impair.Jitter, cfg.Impair.Loss*100, cfg.Impair.Limit)
		if a.ATM {
			// The PHY's rate; loss is each cell's.
			d = fmt.Sprintf("%s->%s ATM at %v: delay=%v jitter=%v loss=%g%% of cells", a.From, a.To, cfg.Rate, cfg.Impair.Delay, cfg.Impair.Jitter, cfg.Impair.Loss*100)
		}
		if cfg.QueueBytes > 0 {
			d += " buffer=" + units.Size(cfg.QueueBytes).String()
		}
		rec.Directions = append(rec.Directions, d)
	}
	return applied, rec, nil
}
