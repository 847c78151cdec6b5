package labrun

import (
	"cmp"
	"context"
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/atmlab/atmlab/harness/clock"
	"github.com/atmlab/atmlab/harness/perf"
	"github.com/atmlab/atmlab/netstat"
	"github.com/atmlab/atmlab/topologies/study"
)

// vethEnv is a lab that makes veth pairs whose client prints out.
type vethEnv struct {
	out   string
	pairs int
}

func (e *vethEnv) Command(string, ...string) *exec.Cmd { return exec.Command("true") }

func (e *vethEnv) Emulator(context.Context) (Health, error) { return Health{}, nil }

func (e *vethEnv) VethPair() (func(int, ...string) *exec.Cmd, string, func() error, error) {
	e.pairs++
	run := func(end int, args ...string) *exec.Cmd {
		if end == 1 {
			return exec.Command("sleep", "10") // the server
		}
		return exec.Command("echo", e.out)
	}
	return run, "192.0.2.2", func() error { return nil }, nil
}

// A veth pair's frame rate is measured once a run for each tool, size
// and socket buffer, read from iperf3's report (what arrived: packets less
// the lost) or atmlab perf's, and not at all for other tools.
func TestVethFrameRateMeasuredOncePerToolAndSize(t *testing.T) {
	env := &vethEnv{out: `{"end": {"sum": {"seconds": 2.0, "packets": 150000, "lost_packets": 10000}}}`}
	h := &HostsEnv{Hosts: env, Self: "atmlab"}
	var f FrameRates
	p := Point{Tool: toolIperf3, Test: perf.UDPStream, Size: 100}
	for range 2 {
		if v := f.get(context.Background(), p, h.vethFrameRate); v != 70000 {
			t.Fatalf("iperf3 over a veth pair: %g datagrams/s, want 70000", v)
		}
	}
	if env.pairs != 1 {
		t.Errorf("%d veth pairs made for one tool and size, want 1", env.pairs)
	}
	env.out = `{"throughput_bps": 64000000}`
	p.Tool = study.DefaultTool
	if v := f.get(context.Background(), p, h.vethFrameRate); v != 80000 || env.pairs != 2 {
		t.Errorf("atmlab perf over a veth pair: %g datagrams/s (pairs %d), want 80000 (2)", v, env.pairs)
	}
	p.Tool = "iperf"
	if v := f.get(context.Background(), p, h.vethFrameRate); v != 0 || env.pairs != 2 {
		t.Errorf("iperf 2: %g datagrams/s (pairs %d), want none measured", v, env.pairs)
	}
}

// vethFakeEnv is fakeEnv's lab that also makes veth pairs, whose client
// reports 64 Mbit/s.
type vethFakeEnv struct {
	*fakeEnv
	veth vethEnv
}

func (e *vethFakeEnv) VethPair() (func(int, ...string) *exec.Cmd, string, func() error, error) {
	return e.veth.VethPair()
}

// The veth pair is the machine's, the same beside every variant's lab: a
// campaign measures its frame rate once for each size its short UDP points
// have, not once a variant, and every variant's short points carry it.
func TestVethFrameRateMeasuredOnceAcrossVariants(t *testing.T) {
	env := &vethFakeEnv{fakeEnv: &fakeEnv{}, veth: vethEnv{out: `{"throughput_bps": 64000000}`}}
	c, jsonl := campaign(t, true, Shard{}, env.fakeEnv)
	c.Measure = func(ctx context.Context, _ clock.Clock, r *Runner) (int, error) {
		recs, err := (&HostsEnv{Hosts: env, Lab: r.Lab, Self: "atmlab"}).Run(ctx, r)
		return len(recs), err
	}
	if _, err := c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	withRate := map[string][]float64{}
	for _, line := range strings.Split(strings.TrimSpace(jsonl.String()), "\n") {
		var r Record
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		if r.VethFrameRate > 0 {
			withRate[cmp.Or(r.Variant, "base")] = append(withRate[cmp.Or(r.Variant, "base")], r.VethFrameRate)
		}
	}
	// Sizes 100 and 800 fall short in both variants (666's client fails).
	want := []float64{64e6 / (8 * 100), 64e6 / (8 * 800)}
	if !slices.Equal(withRate["base"], want) || !slices.Equal(withRate["slow"], want) {
		t.Errorf("veth frame rates recorded: %v, want %v in each variant", withRate, want)
	}
	if env.veth.pairs != 2 {
		t.Errorf("%d veth pairs made for two sizes in two variants, want 2", env.veth.pairs)
	}
}

// A UDP point short of a ceiling that asks for more datagrams a second
// than a bare veth pair carried names the hosts' own frame rate first,
// with both rates, beside what else was seen; one whose veth pair carried
// more does not.
func TestShortfallNamesTheHostsOwnFrameRate(t *testing.T) {
	rec := Record{Point: Point{Test: perf.UDPStream, Size: 100}, Ceiling: 94.19e6, VethFrameRate: 69.3e3,
		Result: perf.Result{ThroughputBps: 34.75e6}, HostKernel: &netstat.Counters{UDPRcvbufErrors: 5}}
	by := rec.shortfall()
	if len(by) != 2 || by[0] != ShortHostRate || by[1] != ShortReceiver {
		t.Fatalf("short by %v, want the hosts' frame rate, then the receiver's socket", by)
	}
	rec.ShortBy = by
	w := rec.ShortfallWords()
	for _, s := range []string{"the hosts' own frame rate: the ceiling needs 117.7 k datagrams/s of 100 B", "a bare veth pair on this machine carried 69.3 k/s", "(the lab 43.4 k/s)"} {
		if !strings.Contains(w, s) {
			t.Errorf("words %q lack %q", w, s)
		}
	}
	rec.VethFrameRate = 200e3
	if by := rec.shortfall(); by[0] == ShortHostRate {
		t.Errorf("veth pair faster than the ceiling needs, yet short by %v", by)
	}
}
