package labrun

import (
	"context"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/atmlab/atmlab/harness/perf"

	"github.com/atmlab/atmlab/topologies/labfile"
)

// bgEnv is a lab whose measured client prints a result after 1.5 s and
// whose background client runs bg; each emulator query finds a2 has sent
// 10 MB more. With dir set, the measured client creates dir/started as it
// starts, which bg may wait for: a load timed from the point's own start
// ends where the test says whatever the machine's load delays.
type bgEnv struct {
	bg, dir string
	sent    uint64
}

func (e *bgEnv) Command(node string, args ...string) *exec.Cmd {
	if slices.Contains(args, "json") {
		started := ""
		if e.dir != "" {
			started = "touch " + e.dir + "/started; "
		}
		return exec.Command("sh", "-c", started+`sleep 1.5; echo '{"test":"TCP_STREAM","throughput_bps":5e7}'`)
	}
	return exec.Command("sh", "-c", strings.ReplaceAll(e.bg, "DIR", e.dir))
}

func (e *bgEnv) Emulator(context.Context) (Health, error) {
	e.sent += 10e6
	return Health{Sent: map[string]uint64{"a2": e.sent}}, nil
}

// threeOnSwitch is Task III's shape: a3 measured to a4 while a2 loads a4.
const threeOnSwitch = `topology:
  nodes:
    a2: {kind: host, ipv4: 10.0.0.2/24}
    a3: {kind: host, ipv4: 10.0.0.3/24}
    a4: {kind: host, ipv4: 10.0.0.4/24}
    sw1: {kind: switch}
  links:
    - {endpoints: ["a2:eth0", "sw1:p1"]}
    - {endpoints: ["a3:eth0", "sw1:p2"]}
    - {endpoints: ["a4:eth0", "sw1:p3"]}
`

// A point with a background load records what the load sent during it,
// and one whose load was not running throughout is an error that says so
// (it measured the path alone: Task III read as Task II). A load that
// ends after the duration, while the point's client finishes, is no error.
func TestMeasureBackground(t *testing.T) {
	lab, err := labfile.Parse("m.yaml", []byte(`name: m
`+threeOnSwitch+`experiments:
  - {name: t3, from: a3, to: a4, tests: [TCP_STREAM], duration: 1s, background: {from: a2, to: a4, test: TCP_STREAM}}
`))
	if err != nil {
		t.Fatal(err)
	}
	p := Points(lab)[0]
	// The loads end timed from the measured client's start, which comes
	// at least the load's warm-up after the load's own: timed from their
	// own start, a loaded machine's delays moved them across the duration.
	const started = "while [ ! -e DIR/started ]; do sleep 0.01; done; "
	for _, tc := range []struct {
		bg, err string
	}{
		{"exec sleep 10", ""},
		{started + "sleep 1.2", ""}, // it ends after the duration (1 s), before the point's client (1.5 s)
		{started + "exit 0", "the background load was not running throughout the point's duration (background load in a2 ended (exit status 0): it said nothing): it measured the path without it"},
	} {
		r := &Runner{Lab: lab, Env: (&HostsEnv{Hosts: &bgEnv{bg: tc.bg, dir: t.TempDir()}, Lab: lab, Self: "atmlab"}).Env()}
		rec := r.measure(context.Background(), p)
		b := rec.Background
		// 10 MB in a point of at least 1.5 s: at most 53 Mbit/s, and at
		// least 20 on a machine that stretches the point to 4 s.
		if b == nil || b.From != "a2" || b.To != "a4" || b.Test != perf.TCPStream || b.SentBps < 20e6 || b.SentBps > 54e6 || !strings.HasPrefix(rec.Error, tc.err) {
			t.Errorf("background %q: %+v, error %q; want a2 -> a4 sending 20-53 Mbit/s, error %q", tc.bg, b, rec.Error, tc.err)
		}
	}
}

// bgArgsEnv is bgEnv that keeps the background client's command line.
type bgArgsEnv struct {
	bgEnv
	args []string
}

func (e *bgArgsEnv) Command(node string, args ...string) *exec.Cmd {
	if !slices.Contains(args, "json") {
		e.args = args
	}
	return e.bgEnv.Command(node, args...)
}

// A background's sockbuf: reaches its client as -s and -S, as a point's
// sockbuf does the measured client's, and its record says so; without
// one the client asks for no buffers (the kernel's auto-tuned ones).
func TestBackgroundLoadSockBuf(t *testing.T) {
	for _, tc := range []struct {
		key  string
		want int
	}{{", sockbuf: 65535", 65535}, {"", 0}} {
		lab, err := labfile.Parse("m.yaml", []byte(`name: m
`+threeOnSwitch+`experiments:
  - {name: t3, from: a3, to: a4, tests: [TCP_STREAM], sockbufs: [65535], duration: 1s, background: {from: a2, to: a4, test: TCP_STREAM`+tc.key+`}}
`))
		if err != nil {
			t.Fatal(err)
		}
		env := &bgArgsEnv{bgEnv: bgEnv{bg: "exec sleep 10"}}
		r := &Runner{Lab: lab, Env: (&HostsEnv{Hosts: env, Lab: lab, Self: "atmlab"}).Env()}
		rec := r.measure(context.Background(), Points(lab)[0])
		cmd := strings.Join(env.args, " ")
		if !strings.Contains(cmd, "perf client -H 10.0.0.4") {
			t.Fatalf("background command %q is not an atmlab perf client to a4", cmd)
		}
		hasBuf := strings.Contains(cmd, " -s 65535 -S 65535")
		if hasBuf != (tc.want > 0) || (tc.want == 0 && (slices.Contains(env.args, "-s") || slices.Contains(env.args, "-S"))) {
			t.Errorf("background%s: command %q; want -s/-S %d", tc.key, cmd, tc.want)
		}
		if rec.Background == nil || rec.Background.SockBuf != tc.want {
			t.Errorf("background%s: record %+v; want sockbuf %d", tc.key, rec.Background, tc.want)
		}
	}
}
