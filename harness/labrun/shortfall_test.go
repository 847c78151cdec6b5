package labrun

import (
	"context"
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/atmlab/atmlab/emulator/hist"
	"github.com/atmlab/atmlab/harness/perf"
	"github.com/atmlab/atmlab/netstat"
)

// A real-time point more than 1 % short of its ceiling names every cause
// measured during it, in its record and in words; one within 1 %, one in
// virtual time and one with no figure name none.
func TestShortfallNamesEachCause(t *testing.T) {
	r, p, res, c := judging(t)
	for _, tc := range []struct {
		name  string
		share float64
		set   func(*Record)
		by    []string
		words string
	}{
		{"receiver", 0.9, func(r *Record) { r.HostKernel = &netstat.Counters{TCPRcvDrops: 12} }, []string{ShortReceiver}, "dropped 12 TCP segments"},
		{"native receiver", 0.9, func(r *Record) { r.Result.ReceiverDrops = 839 }, []string{ShortReceiver}, "dropped 839 SDUs at its packet socket"},
		{"qdisc", 0.9, func(r *Record) { r.QdiscDrops, r.QdiscRequeues = 3, 4 }, []string{ShortQdisc}, "dropped 3 frames and took back 4"},
		{"taps", 0.9, func(r *Record) { r.HostDrops = 9 }, []string{ShortTAP}, ""},
		{"lateness", 0.9, func(r *Record) { r.Lateness = &hist.Summary{P99: 2 * time.Millisecond, Max: 9 * time.Millisecond} }, []string{ShortLateness}, "release lateness p99 2ms, max 9ms"},
		{"late held", 0.9, func(r *Record) {
			r.Lateness, r.LateHeld = &hist.Summary{P99: 4 * time.Millisecond, Max: 5 * time.Millisecond}, 321
		}, []string{ShortLateness}, "release lateness p99 4ms, max 5ms, 0 % of a core, and held back 321 frames from the hosts"},
		{"late dropped", 0.9, func(r *Record) { r.LateDropped = 77 }, []string{ShortLateness}, "and dropped 77 frames rather than hand them to a host later than its bound"},
		{"stalled", 0.9, func(r *Record) {
			r.Lateness, r.LoopStalls, r.EmulatorGCs = &hist.Summary{P99: 2 * time.Millisecond, Max: 41 * time.Millisecond}, 3, 1
			r.LoopStall = &netstat.Stall{At: 3 * time.Second, Len: 40 * time.Millisecond, Window: 45 * time.Millisecond, Ran: 4 * time.Millisecond, Waited: 41 * time.Millisecond, Switches: 2}
		}, []string{ShortLateness}, "release lateness p99 2ms, max 41ms, 0 % of a core; its loop stalled 3 times over 1ms, the longest 40.0 ms at 3.000 s: another thread held its CPU (of 45.0 ms: ran 4.0 ms, waited for a CPU 41.0 ms, off 0.0 ms; 2 switches, 0 GCs, steal 0.0 ms); its process collected garbage 1 times)"},
		{"steal", 0.9, func(r *Record) { r.Steal = 0.02 }, []string{ShortSteal}, "the hypervisor took 2.0 % of the machine"},
		{"load", 0.9, func(r *Record) { r.OtherLoad = 0.6 }, []string{ShortLoad}, "other work on the machine used 0.60 of a core"},
		{"receiver's default buffer", 0.9, func(r *Record) { r.HostKernel = &netstat.Counters{UDPRcvbufErrors: 7} }, []string{ShortReceiver}, "dropped 7 datagrams: the receiver, which shares the machine's CPUs with the sender and the emulator, did not read in time; a UDP socket's default buffer is the machine's net.core.rmem_default, which a host's namespace cannot set: ask the tool for a buffer (-w, -s) or raise it on the machine (10477568 B holds 10 ms of the link's smallest frames)"},
		{"receiver's own buffer", 0.9, func(r *Record) { r.SockBuf, r.HostKernel = 4<<20, &netstat.Counters{UDPRcvbufErrors: 7} }, []string{ShortReceiver}, "dropped 7 datagrams: the receiver, which shares the machine's CPUs with the sender and the emulator, did not read in time"},
		{"receiver waiting for a CPU", 0.9, func(r *Record) {
			r.HostKernel, r.Result.CPU = &netstat.Counters{UDPRcvbufErrors: 7}, perf.CPU{Remote: 0.48, RemoteWaited: 0.52}
		}, []string{ShortReceiver}, "did not read in time (it ran 0.48 of a core and waited runnable for a CPU 52 % of the time: a host with a core of its own would not have waited)"},
		{"two", 0.9, func(r *Record) { r.OtherLoad, r.HostKernel = 0.6, &netstat.Counters{UDPRcvbufErrors: 5} }, []string{ShortReceiver, ShortLoad}, "dropped 5 datagrams"},
		{"none", 0.9, func(r *Record) { r.Lateness = &hist.Summary{P99: 100 * time.Microsecond} }, []string{ShortNone}, "none of the causes atmlab measures"},
		{"userspace SCTP's CPU", 0.9, func(r *Record) {
			r.Result.Implementation, r.Result.CPU = perf.PionImplementation, perf.CPU{Local: 0.62, Remote: 0.51, LocalServiceDemand: 6.1, RemoteServiceDemand: 5.2}
			r.Lateness = &hist.Summary{P99: 2 * time.Millisecond, Max: 3 * time.Millisecond}
		}, []string{ShortStackCPU, ShortLateness}, "used 0.62 of a core at the client and 0.51 at the server (6.1 and 5.2 µs of CPU a KB)"},
		{"pion at the client only", 0.9, func(r *Record) {
			r.Result.Implementation, r.Result.CPU = perf.PionImplementation+" (client), kernel (server)", perf.CPU{Local: 0.55, Remote: 0.05}
		}, []string{ShortStackCPU}, "(pion/sctp"},
		{"userspace SCTP, little CPU", 0.9, func(r *Record) {
			r.Result.Implementation, r.Result.CPU = perf.PionImplementation, perf.CPU{Local: 0.2, Remote: 0.2}
		}, []string{ShortNone}, "a userspace stack's CPU"},
		{"kernel SCTP's CPU", 0.9, func(r *Record) {
			r.Result.Implementation, r.Result.CPU = "kernel", perf.CPU{Local: 0.7, Remote: 0.7}
		}, []string{ShortNone}, ""},
		{"within 1 %", 0.995, func(r *Record) { r.OtherLoad = 0.9 }, nil, ""},
		{"virtual time", 0.9, func(r *Record) { r.Clock, r.OtherLoad = "virtual", 0.9 }, nil, ""},
		{"no figure", 0, func(r *Record) { r.OtherLoad = 0.9 }, nil, ""},
	} {
		rec := Record{Point: p, Result: res}
		rec.Result.ThroughputBps = tc.share * c
		tc.set(&rec)
		r.judge(p, &rec)
		if !slices.Equal(rec.ShortBy, tc.by) {
			t.Errorf("%s: short by %q, want %q", tc.name, rec.ShortBy, tc.by)
		}
		if w := rec.ShortfallWords(); !strings.Contains(w, tc.words) || (tc.by == nil) != (w == "") {
			t.Errorf("%s: words %q, want them to hold %q", tc.name, w, tc.words)
		}
		if w := rec.ShortfallWords(); tc.name == "receiver's own buffer" && strings.Contains(w, "rmem_default") {
			t.Errorf("%s: words %q name the default buffer the point did not use", tc.name, w)
		}
		if tc.by != nil && tc.name != "taps" && !strings.HasPrefix(rec.Flag, "90.0 % of the ceiling, 10.0 % short: ") {
			t.Errorf("%s: flag %q, want the shortfall's words", tc.name, rec.Flag)
		}
		if held := rec.HeldBack(); held != (tc.by != nil && tc.by[0] != ShortNone) {
			t.Errorf("%s: held back %v", tc.name, held)
		}
	}
}

// A record written before the causes were recorded reads as one with
// none, and a new one writes them under short_by.
func TestShortByIsOptionalInResults(t *testing.T) {
	var old Record
	if err := json.Unmarshal([]byte(`{"variant":"base","result":{},"host_drops":3,"flag":"x","at":"2026-01-01T00:00:00Z"}`), &old); err != nil || old.ShortBy != nil || old.HostDrops != 3 {
		t.Fatalf("old record: %+v, %v", old, err)
	}
	b, _ := json.Marshal(Record{ShortBy: []string{ShortLoad}, OtherLoad: 0.5, QdiscDrops: 2})
	for _, key := range []string{`"short_by":["other_load"]`, `"other_load":0.5`, `"qdisc_drops":2`} {
		if !strings.Contains(string(b), key) {
			t.Errorf("%s lacks %s", b, key)
		}
	}
}

// loadEnv is a lab whose machine did 300 ms of work beside the lab's
// 100 ms (or none, when idle) between two reads of its health.
type loadEnv struct {
	busy, lab time.Duration
	idle      bool
}

func (e *loadEnv) Command(string, ...string) *exec.Cmd { return exec.Command("true") }

func (e *loadEnv) Emulator(context.Context) (Health, error) {
	e.lab += 100 * time.Millisecond
	if !e.idle {
		e.busy += 400 * time.Millisecond
	} else {
		e.busy += 50 * time.Millisecond // less than the lab: counted once, never below 0
	}
	return Health{LabCPU: e.lab, Busy: e.busy}, nil
}

// A point's other load is the machine's busy time less the lab's during
// it, per second of the point.
func TestMeasureRecordsOtherLoad(t *testing.T) {
	lab := streamLab(t)
	p := Points(lab)[0]
	for _, idle := range []bool{false, true} {
		env := &loadEnv{idle: idle}
		r := &Runner{Lab: lab, Env: (&HostsEnv{Hosts: env, Lab: lab, Self: "atmlab"}).Env()}
		start := time.Now()
		rec := r.measure(context.Background(), p)
		elapsed := time.Since(start)
		if idle && rec.OtherLoad != 0 {
			t.Errorf("idle: other load %v, want 0", rec.OtherLoad)
		}
		if !idle && rec.OtherLoad < (300*time.Millisecond).Seconds()/elapsed.Seconds() {
			t.Errorf("busy: other load %v, want at least 300 ms over %v", rec.OtherLoad, elapsed)
		}
	}
}

// shellHosts runs each host command as a shell script (its one argument).
type shellHosts struct{}

func (shellHosts) Command(_ string, args ...string) *exec.Cmd {
	return exec.Command("sh", "-c", args[0])
}
func (shellHosts) Emulator(context.Context) (Health, error) { return Health{}, nil }

// TestServerCPUIsReadWhileItRuns: a server that spins for its whole life
// ran or waited runnable for a CPU all of it (on a busy machine, mostly
// waiting), by its scheduler figures read while it ran; one that sleeps
// neither ran nor waited.
func TestServerCPUIsReadWhileItRuns(t *testing.T) {
	h := &HostsEnv{Hosts: shellHosts{}}
	for _, tc := range []struct {
		script   string
		min, max float64
	}{{"while :; do :; done", 0.8, 1.2}, {"exec sleep 10", 0, 0.5}} {
		srv, err := h.startServer("server", "h2", nil, tc.script)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * schedEvery)
		run, waited := srv.cpu()
		srv.stop()
		if run+waited < tc.min || run+waited > tc.max || tc.min > 0 && run <= 0 {
			t.Errorf("%q: ran %.2f of a core and waited %.2f, want the two together within %.1f-%.1f", tc.script, run, waited, tc.min, tc.max)
		}
	}
}
