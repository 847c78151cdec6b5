package labrun

import (
	"context"
	"errors"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/atmlab/atmlab/emulator/hist"
	"github.com/atmlab/atmlab/harness/perf"
	"github.com/atmlab/atmlab/netstat"
	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/labfile"
)

// queryEnv is a lab whose emulator answers from a list, one per query;
// its hosts run true. Each query finds the loop's lateness record grown
// by late, one release of each.
type queryEnv struct {
	answers  []error
	cpu      time.Duration
	drops    uint64
	lateness hist.Histogram
	late     [][]time.Duration
	spacing  hist.Histogram
	space    [][]time.Duration // as late, for the releases' spacing
	loops    []Health          // the loop's record at each query (Uptime and on), if any
}

func (e *queryEnv) Command(string, ...string) *exec.Cmd { return exec.Command("true") }

func (e *queryEnv) Emulator(context.Context) (Health, error) {
	err := e.answers[0]
	e.answers = e.answers[1:]
	e.cpu += 5 * time.Second // since the lab started: far more than a point takes
	e.drops += 7
	if len(e.late) > 0 {
		for _, d := range e.late[0] {
			e.lateness.Record(d)
		}
		e.late = e.late[1:]
	}
	if len(e.space) > 0 {
		for _, d := range e.space[0] {
			e.spacing.Record(d)
		}
		e.space = e.space[1:]
	}
	l, sp := e.lateness, e.spacing
	h := Health{CPU: e.cpu, HostDrops: e.drops, Lateness: &l, Spacing: &sp}
	if len(e.loops) > 0 {
		l := e.loops[0]
		h.Uptime, h.Stalls, h.StallCount, h.GCCycles, h.Allocated = l.Uptime, l.Stalls, l.StallCount, l.GCCycles, l.Allocated
		e.loops = e.loops[1:]
	}
	return h, err
}

// streamLab is two hosts on one link with one 100 ms TCP_STREAM point.
func streamLab(t *testing.T) *topologies.Lab {
	t.Helper()
	lab, err := labfile.Parse("m.yaml", []byte("name: m\ntopology:\n  nodes:\n    h1: {kind: host, ipv4: 10.0.0.1/24}\n    h2: {kind: host, ipv4: 10.0.0.2/24}\n  links:\n    - endpoints: [\"h1:eth0\", \"h2:eth0\"]\nexperiments:\n  - {name: e, from: h1, to: h2, tests: [TCP_STREAM], duration: 100ms}\n"))
	if err != nil {
		t.Fatal(err)
	}
	return lab
}

// A point's emulator figures are what changed while it ran: when either
// query fails the point has none (before, a failed first query made them
// count since the lab started) and its flag says why.
func TestMeasureEmulatorQueries(t *testing.T) {
	lab := streamLab(t)
	p := Points(lab)[0]
	down := errors.New("lab m did not answer")
	for _, tc := range []struct {
		answers []error
		drops   uint64
		flag    string
	}{
		{[]error{nil, nil}, 7, ""},
		{[]error{down, nil}, 0, "the emulator's counters could not be read (lab m did not answer)"},
		{[]error{nil, down}, 0, "the emulator's counters could not be read (lab m did not answer)"},
	} {
		env := &queryEnv{answers: tc.answers}
		r := &Runner{Lab: lab, Env: (&HostsEnv{Hosts: env, Lab: lab, Self: "atmlab"}).Env()}
		rec := r.measure(context.Background(), p)
		if rec.HostDrops != tc.drops || (tc.flag == "") != (rec.HostKernel != nil) || (tc.flag == "") != (rec.EmulatorCPU > 0) || !strings.HasPrefix(rec.Flag, tc.flag) || len(env.answers) != 0 {
			t.Errorf("queries %v: drops %d, cpu %g, host counters %v, flag %q; want drops %d, flag %q", tc.answers, rec.HostDrops, rec.EmulatorCPU, rec.HostKernel, rec.Flag, tc.drops, tc.flag)
		}
	}
}

// A point's release lateness is the loop's during the point: a stall
// before it (the lab's start, an earlier point) is not in its figures,
// and the record and its CSV line carry them.
func TestMeasureLateness(t *testing.T) {
	lab := streamLab(t)
	us := time.Microsecond
	before := []time.Duration{400 * time.Millisecond, 3 * us, 3 * us}
	var during []time.Duration
	for i := range 100 {
		during = append(during, 4*us)
		if i >= 98 {
			during[i] = 900 * us
		}
	}
	env := &queryEnv{answers: []error{nil, nil}, late: [][]time.Duration{before, during}}
	r := &Runner{Lab: lab, Env: (&HostsEnv{Hosts: env, Lab: lab, Self: "atmlab"}).Env()}
	rec := r.measure(context.Background(), Points(lab)[0])
	l := rec.Lateness
	if l == nil || l.Count != 100 || l.P50 < 3900*time.Nanosecond || l.P50 > 4*us || l.P99 < 870*us || l.P99 > 900*us || l.Max < 870*us || l.Max > 930*us {
		t.Fatalf("lateness %+v; want 100 releases, p50 4 µs, p99 and max about 900 µs (not the 400 ms before the point)", l)
	}
	row := CSVRow(rec)
	i := slices.Index(CSVHeader, "lateness_p50_us")
	if len(row) != len(CSVHeader) || i < 0 || (row[i] != "4.0" && row[i] != "3.9") || !strings.HasPrefix(row[i+1], "8") || !strings.HasPrefix(row[i+2], "9") {
		t.Errorf("CSV %v under %v: want lateness 4.0, 8xx, 9xx µs", row, CSVHeader)
	}
}

// A point's loop stall is the longest that began during it, and its
// stalls and collections are those between its two queries: a longer
// stall before it is not its.
func TestMeasureLoopStalls(t *testing.T) {
	lab := streamLab(t)
	ms := time.Millisecond
	early := netstat.Stall{At: 1 * time.Second, Len: 300 * ms}
	short, long := netstat.Stall{At: 5200 * ms, Len: 2 * ms}, netstat.Stall{At: 5500 * ms, Len: 40 * ms, Waited: 39 * ms}
	env := &queryEnv{answers: []error{nil, nil}, loops: []Health{
		{Uptime: 5 * time.Second, StallCount: 10, GCCycles: 2, Allocated: 7 << 20, Stalls: []netstat.Stall{early}},
		{Uptime: 6 * time.Second, StallCount: 12, GCCycles: 3, Allocated: 9 << 20, Stalls: []netstat.Stall{early, short, long}},
	}}
	r := &Runner{Lab: lab, Env: (&HostsEnv{Hosts: env, Lab: lab, Self: "atmlab"}).Env()}
	rec := r.measure(context.Background(), Points(lab)[0])
	if rec.LoopStall == nil || *rec.LoopStall != long || rec.LoopStalls != 2 || rec.EmulatorGCs != 1 || rec.EmulatorAllocated != 2<<20 {
		t.Fatalf("loop stall %+v, %d stalls, %d GCs, %d octets allocated; want %+v, 2, 1, %d", rec.LoopStall, rec.LoopStalls, rec.EmulatorGCs, rec.EmulatorAllocated, long, 2<<20)
	}
}

// A point records how far apart the emulator released frames to each
// host while it ran, the traffic its lateness was measured over: pings a
// second apart before it are not in it, and a point with no releases has
// none.
func TestMeasureReleaseSpacing(t *testing.T) {
	lab := streamLab(t)
	during := make([]time.Duration, 50)
	for i := range during {
		during[i] = 120 * time.Microsecond
	}
	env := &queryEnv{answers: []error{nil, nil}, space: [][]time.Duration{{time.Second, time.Second}, during}}
	r := &Runner{Lab: lab, Env: (&HostsEnv{Hosts: env, Lab: lab, Self: "atmlab"}).Env()}
	rec := r.measure(context.Background(), Points(lab)[0])
	if s := rec.ReleaseSpacing; s == nil || s.Count != 50 || s.P50 != 120*time.Microsecond || s.Max > 124*time.Microsecond {
		t.Errorf("release spacing %+v; want 50 releases 120 µs apart (not the second before the point)", s)
	}
	env = &queryEnv{answers: []error{nil, nil}, space: [][]time.Duration{{time.Second}}}
	r = &Runner{Lab: lab, Env: (&HostsEnv{Hosts: env, Lab: lab, Self: "atmlab"}).Env()}
	if rec := r.measure(context.Background(), Points(lab)[0]); rec.ReleaseSpacing != nil {
		t.Errorf("no releases during the point, but release spacing %+v", rec.ReleaseSpacing)
	}
}

// A point during which the hypervisor took more than MaxSteal of the
// machine is flagged for that first: it is the cause of the rest.
func TestJudgeSteal(t *testing.T) {
	lab := streamLab(t)
	r := &Runner{Lab: lab}
	p := Points(lab)[0]
	for _, tc := range []struct {
		steal float64
		flag  string
	}{
		{0.3, "the machine's hypervisor took 30% of its CPU during this point"},
		{MaxSteal, "hosts dropped 5 frames"},
		{0, "hosts dropped 5 frames"},
	} {
		rec := Record{Point: p, Steal: tc.steal, HostDrops: 5}
		r.judge(p, &rec)
		if !strings.HasPrefix(rec.Flag, tc.flag) {
			t.Errorf("steal %v: flag %q, want it to begin %q", tc.steal, rec.Flag, tc.flag)
		}
	}
}

// judging is what the tests of judge start from: a runner over the stream
// lab, its first point, a 1000-byte result and that point's ceiling.
func judging(t *testing.T) (*Runner, Point, perf.Result, float64) {
	t.Helper()
	lab := streamLab(t)
	r := &Runner{Lab: lab}
	p := Points(lab)[0]
	var res perf.Result
	res.Spec.Message = 1000
	c, ok := r.ceiling(p, res)
	if !ok {
		t.Fatal("the stream lab's point has no ceiling")
	}
	return r, p, res, c
}

// A point is blamed on the emulator's CPU only when it fell short of its
// ceiling or has none, and on the receiving host when the hosts' sockets
// overflowed while it fell short (a busy loop is not the cause then);
// HeldBack (a study's flagged claims) agrees with the flag.
func TestJudgeShortPoints(t *testing.T) {
	r, p, res, c := judging(t)
	for _, tc := range []struct {
		share   float64 // of the ceiling
		cpu     float64
		overrun uint64 // datagrams dropped with a full receive buffer
		flag    string
		held    bool
	}{
		{1.0, 0.95, 0, "", false},
		{0.995, 0.95, 40, "", false},
		{0.977, 0.95, 1304, "97.7 % of the ceiling, 2.3 % short: the receiving host's socket buffer was full and dropped 1304 datagrams: the receiver, which shares the machine's CPUs with the sender and the emulator, did not read in time; a UDP socket's default buffer is the machine's net.core.rmem_default, which a host's namespace cannot set: ask the tool for a buffer (-w, -s) or raise it on the machine (10477568 B holds 10 ms of the link's smallest frames); the emulator fell behind its model (release lateness unknown, 95 % of a core)", true},
		{0.977, 0.95, 0, "97.7 % of the ceiling, 2.3 % short: the emulator fell behind its model", true},
		{0.977, 0.5, 1304, "97.7 % of the ceiling, 2.3 % short: the receiving host's socket buffer was full and dropped 1304 datagrams", true},
		{0.95, 0.5, 0, "95.0 % of the ceiling, 5.0 % short: none of the causes atmlab measures", false},
	} {
		rec := Record{Point: p, Result: res, EmulatorCPU: tc.cpu, HostKernel: &netstat.Counters{UDPRcvbufErrors: tc.overrun}}
		rec.Result.ThroughputBps = tc.share * c
		r.judge(p, &rec)
		if (tc.flag == "") != (rec.Flag == "") || !strings.HasPrefix(rec.Flag, tc.flag) || rec.HeldBack() != tc.held {
			t.Errorf("%.3f of the ceiling, CPU %.2f, %d overruns: flag %q, held back %v; want %q, %v", tc.share, tc.cpu, tc.overrun, rec.Flag, rec.HeldBack(), tc.flag, tc.held)
		}
	}
	rec := Record{Point: p, Result: res, EmulatorCPU: 0.95}
	r.judge(p, &rec) // no figure at all: short
	if !strings.HasPrefix(rec.Flag, "emulator CPU 95%") || !rec.HeldBack() {
		t.Errorf("a point with no figure: flag %q, want the emulator's CPU", rec.Flag)
	}
}

// A point the hypervisor stole from is measured again, at most
// StealRetakes times, and its record says how often; one it did not
// steal from is measured once.
func TestMeasureRetakesStolen(t *testing.T) {
	lab := streamLab(t)
	p := Points(lab)[0]
	for _, tc := range []struct {
		stolen   int // measurements the hypervisor steals from, from the first
		retakes  int
		measured int
	}{{0, 0, 1}, {1, 1, 2}, {2, 2, 3}, {5, StealRetakes, StealRetakes + 1}} {
		var steal time.Duration
		reads := 0
		env := &queryEnv{answers: make([]error, 2*(StealRetakes+1))}
		waits := 0
		r := &Runner{Lab: lab, Env: (&HostsEnv{Hosts: env, Lab: lab, Self: "atmlab"}).Env(), awaitUnstolen: func(context.Context) { waits++ }, Steal: func() (time.Duration, error) {
			// Two reads a measurement, before and after: a stolen one
			// loses a whole second of each CPU, far above MaxSteal.
			if reads%2 == 1 && reads/2 < tc.stolen {
				steal += 100 * time.Second
			}
			reads++
			return steal, nil
		}}
		rec := r.measureUnstolen(context.Background(), p)
		if rec.StealRetakes != tc.retakes || reads != 2*tc.measured || waits != tc.retakes || (rec.Steal > MaxSteal) != (tc.stolen > StealRetakes) {
			t.Errorf("%d stolen: %d retakes, %d measurements, %d waits, steal %.2f; want %d retakes, %d measurements", tc.stolen, rec.StealRetakes, reads/2, waits, rec.Steal, tc.retakes, tc.measured)
		}
	}
}

// AwaitUnstolen returns once a window passes with no more than MaxSteal
// taken, and gives up at its limit while the steal goes on.
func TestAwaitUnstolen(t *testing.T) {
	var steal time.Duration
	stolen := 3 // windows the hypervisor takes half the machine in
	reads := 0
	clock := func() (time.Duration, error) {
		if reads%2 == 1 && stolen > 0 {
			steal += 10 * time.Millisecond * time.Duration(runtime.NumCPU()) // half of a 20 ms window
			stolen--
		}
		reads++
		return steal, nil
	}
	if !AwaitUnstolen(context.Background(), clock, 20*time.Millisecond, time.Second) || reads != 8 {
		t.Errorf("after three stolen windows: %d reads, want 8 (four windows)", reads)
	}
	stolen, reads = 1000, 0
	start := time.Now()
	if AwaitUnstolen(context.Background(), clock, 20*time.Millisecond, 100*time.Millisecond) || time.Since(start) > time.Second {
		t.Errorf("steal that goes on: waited %v and said quiet", time.Since(start))
	}
}
