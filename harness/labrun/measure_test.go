package labrun

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/atmlab/atmlab/netstat"
	"github.com/atmlab/atmlab/topologies"
)

// queryEnv is a lab whose emulator answers from a list, one per query;
// its hosts run true.
type queryEnv struct {
	answers []error
	cpu     time.Duration
	drops   uint64
}

func (e *queryEnv) Command(string, ...string) *exec.Cmd { return exec.Command("true") }

func (e *queryEnv) Emulator(context.Context) (time.Duration, uint64, netstat.Counters, error) {
	err := e.answers[0]
	e.answers = e.answers[1:]
	e.cpu += 5 * time.Second // since the lab started: far more than a point takes
	e.drops += 7
	return e.cpu, e.drops, netstat.Counters{}, err
}

// A point's emulator figures are what changed while it ran: when either
// query fails the point has none (before, a failed first query made them
// count since the lab started) and its flag says why.
func TestMeasureEmulatorQueries(t *testing.T) {
	lab, err := topologies.Parse("m.yaml", []byte("name: m\ntopology:\n  nodes:\n    h1: {kind: host, ipv4: 10.0.0.1/24}\n    h2: {kind: host, ipv4: 10.0.0.2/24}\n  links:\n    - endpoints: [\"h1:eth0\", \"h2:eth0\"]\nexperiments:\n  - {name: e, from: h1, to: h2, tests: [TCP_STREAM], duration: 100ms}\n"))
	if err != nil {
		t.Fatal(err)
	}
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
		r := &Runner{Lab: lab, Env: env, Self: "atmlab"}
		rec := r.measure(context.Background(), p)
		if rec.HostDrops != tc.drops || (tc.flag == "") != (rec.HostKernel != nil) || (tc.flag == "") != (rec.EmulatorCPU > 0) || !strings.HasPrefix(rec.Flag, tc.flag) || len(env.answers) != 0 {
			t.Errorf("queries %v: drops %d, cpu %g, host counters %v, flag %q; want drops %d, flag %q", tc.answers, rec.HostDrops, rec.EmulatorCPU, rec.HostKernel, rec.Flag, tc.drops, tc.flag)
		}
	}
}
