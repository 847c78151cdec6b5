package labrun

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/atmlab/atmlab/harness/clock"
	"github.com/atmlab/atmlab/harness/perf"
	"github.com/atmlab/atmlab/internal/labtest"
	"github.com/atmlab/atmlab/topologies/labfile"
)

// fakeHostEnv is set in the test binary run as a lab's host command.
const fakeHostEnv = "LABRUN_FAKE_HOST"

// failSize is the message size whose perf client fails in a fake host.
const failSize = 666

// TestFakeHost is not a test: fakeEnv runs the test binary as the
// commands of a lab's hosts. `atmlab perf server` says it listens and
// waits to be killed (or, in host "mute", exits without a word); `atmlab
// perf client` prints a result of size x 1000 bit/s, or fails for
// failSize as a client that found no server does.
func TestFakeHost(t *testing.T) {
	if os.Getenv(fakeHostEnv) != "1" {
		return
	}
	args := os.Args[slices.Index(os.Args, "--")+1:]
	node, argv := args[0], args[1:]
	switch {
	case len(argv) >= 3 && argv[1] == "perf" && argv[2] == "server":
		if node == "mute" {
			os.Exit(1)
		}
		fmt.Fprintf(os.Stderr, "%s0.0.0.0:%d\n", perfReady, perfPort)
		time.Sleep(time.Minute)
	case argv[0] == "ping":
		fmt.Println("64 bytes from 10.0.0.2: icmp_seq=1 ttl=64 time=0.100 ms")
	case len(argv) >= 3 && argv[1] == "perf" && argv[2] == "client":
		size := 0
		if i := slices.Index(argv, "-m"); i > 0 {
			size, _ = strconv.Atoi(argv[i+1])
		}
		if size == failSize {
			fmt.Fprintln(os.Stderr, "perf client: dial tcp 10.0.0.2:12865: connect: connection refused")
			os.Exit(1)
		}
		test := argv[slices.Index(argv, "-t")+1]
		b, _ := json.Marshal(perf.Result{Schema: perf.SchemaVersion, Test: test, Spec: perf.Spec{Test: test, Message: size}, ThroughputBps: float64(size) * 1000})
		os.Stdout.Write(b)
	default:
		fmt.Fprintf(os.Stderr, "fake host %s: no such command %q\n", node, argv)
		os.Exit(2)
	}
	os.Exit(0)
}

// fakeEnv is a lab whose hosts run this test binary (TestFakeHost) and
// whose emulator's CPU grows 1 ms a query; it counts the commands run.
type fakeEnv struct {
	mu       sync.Mutex
	commands []string // node: argv[1:3]
	cpu      time.Duration
}

func (e *fakeEnv) Command(node string, args ...string) *exec.Cmd {
	e.mu.Lock()
	e.commands = append(e.commands, node+": "+strings.Join(args[1:min(3, len(args))], " "))
	e.mu.Unlock()
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^TestFakeHost$", "--", node}, args...)...)
	cmd.Env = append(os.Environ(), fakeHostEnv+"=1")
	return cmd
}

func (e *fakeEnv) Emulator(context.Context) (Health, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.cpu += time.Millisecond
	return Health{CPU: e.cpu}, nil
}

var campaignLab = labtest.Lab("two-hosts", "c", `experiments:
  - {name: s, from: h1, to: h2, tests: [UDP_STREAM], sizes: [100, 200, 666, 700, 800], repetitions: 2, duration: 5s}
  - {name: only-slow, from: h1, to: h2, tests: [TCP_STREAM], sizes: [1000], quick: {variants: [slow]}}
variants:
  - {name: slow, set: [{link: "h1:eth0", rate: 10M}]}
`)

// campaign plans the lab (quick or not) and returns a campaign that
// measures it in real time through env.
func campaign(t *testing.T, quick bool, s Shard, env *fakeEnv) (*Campaign, *strings.Builder) {
	t.Helper()
	lab, err := labfile.Parse("c.yaml", []byte(campaignLab))
	if err != nil {
		t.Fatal(err)
	}
	vs, err := Plan(lab, quick)
	if err != nil {
		t.Fatal(err)
	}
	var jsonl, log strings.Builder
	c := &Campaign{Variants: vs, Clocks: clock.Choice{clock.Real}, Shard: s, Self: "atmlab", JSONL: &jsonl, Log: &log, Out: "out",
		Measure: func(ctx context.Context, _ clock.Clock, r *Runner) (int, error) {
			recs, err := (&HostsEnv{Hosts: env, Lab: r.Lab, Self: "atmlab"}).Run(ctx, r)
			return len(recs), err
		}}
	return c, &jsonl
}

// records reads a campaign's results.jsonl as "variant experiment size
// rep: Mbit/s" lines, or the error.
func records(t *testing.T, jsonl string) []string {
	t.Helper()
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(jsonl), "\n") {
		var r Record
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		s := fmt.Sprintf("%s %s %d #%d: ", r.Variant, r.Experiment, r.Size, r.Rep)
		if r.Error != "" {
			s += "error " + r.Error
		} else {
			s += fmt.Sprintf("%g Mbit/s", r.Result.ThroughputBps/1e6)
		}
		out = append(out, s)
	}
	return out
}

// The variant loop with --quick: each variant in turn, each with its own
// perf server in h2, the quick rules applied (first, middle and last size,
// one repetition; an experiment whose quick: names other variants left
// out), and a failing point recorded with its client's words while the
// run goes on.
func TestCampaignQuick(t *testing.T) {
	env := &fakeEnv{}
	c, jsonl := campaign(t, true, Shard{}, env)
	if n := c.Points(); n != 7 {
		t.Fatalf("quick plan has %d points, want 3 (base) + 4 (slow)", n)
	}
	n, err := c.Run(context.Background())
	if err != nil || n != 7 {
		t.Fatalf("Run() = %d, %v", n, err)
	}
	refused := "error perf client: exit status 1: perf client: dial tcp 10.0.0.2:12865: connect: connection refused"
	want := []string{"base s 100 #1: 0.1 Mbit/s", "base s 666 #1: " + refused, "base s 800 #1: 0.8 Mbit/s",
		"slow s 100 #1: 0.1 Mbit/s", "slow s 666 #1: " + refused, "slow s 800 #1: 0.8 Mbit/s", "slow only-slow 1000 #1: 1 Mbit/s"}
	if got := records(t, jsonl.String()); !slices.Equal(got, want) {
		t.Fatalf("records:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	servers := 0
	for _, c := range env.commands {
		if c == "h2: perf server" {
			servers++
		}
	}
	if servers != 2 || len(env.commands) != 2+2+7 {
		t.Errorf("commands run: %q; want a perf server in h2 and a ping from h1 per variant and a client per point", env.commands)
	}
	if log := c.Log.(*strings.Builder).String(); log != "base (real time): 3 points; results in out\nslow (real time): 4 points; results in out\n" {
		t.Errorf("log %q", log)
	}
}

// Without --quick every size and repetition runs; shards split the
// campaign's points between them, each point in exactly one, the same
// points as the whole.
func TestCampaignShards(t *testing.T) {
	whole, jsonl := campaign(t, false, Shard{}, &fakeEnv{})
	if n := whole.Points(); n != 2*(5*2)+2*1 {
		t.Fatalf("whole plan has %d points, want 22", n)
	}
	if _, err := whole.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	all := records(t, jsonl.String())
	var union []string
	for k := 1; k <= 3; k++ {
		c, jsonl := campaign(t, false, Shard{k, 3}, &fakeEnv{})
		n, err := c.Run(context.Background())
		if err != nil || n != c.Points() {
			t.Fatalf("shard %d/3: Run() = %d, %v; planned %d", k, n, err, c.Points())
		}
		if n == 0 {
			continue
		}
		for _, line := range strings.Split(strings.TrimSpace(jsonl.String()), "\n") {
			var r Record
			if err := json.Unmarshal([]byte(line), &r); err != nil || !(Shard{k, 3}).Has(r.Point) {
				t.Fatalf("shard %d/3 measured %s (%v)", k, line, err)
			}
		}
		union = append(union, records(t, jsonl.String())...)
	}
	slices.Sort(union)
	if sorted := slices.Sorted(slices.Values(all)); len(all) != 22 || !slices.Equal(union, sorted) {
		t.Fatalf("shards measured\n%s\nthe whole\n%s", strings.Join(union, "\n"), strings.Join(sorted, "\n"))
	}
}

// A perf server that exits before it says it listens fails the run at
// once, naming the host; no point is measured.
func TestCampaignServerNotReady(t *testing.T) {
	lab, err := labfile.Parse("m.yaml", []byte(strings.ReplaceAll(strings.ReplaceAll(campaignLab, "h2", "mute"), "10.0.0.2", "10.0.0.3")))
	if err != nil {
		t.Fatal(err)
	}
	var jsonl strings.Builder
	r := &Runner{Lab: lab, JSONL: &jsonl}
	recs, err := (&HostsEnv{Hosts: &fakeEnv{}, Lab: lab, Self: "atmlab"}).Run(context.Background(), r)
	if err == nil || len(recs) != 0 || jsonl.Len() != 0 || !strings.Contains(err.Error(), "perf server in mute exited before it was ready") {
		t.Fatalf("Run() = %d records, %v", len(recs), err)
	}
}
