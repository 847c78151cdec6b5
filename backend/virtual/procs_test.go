package virtual

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/atmlab/atmlab/emulator"
	"github.com/atmlab/atmlab/harness/labrun"
	"github.com/atmlab/atmlab/internal/labtest"
	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/labfile"
)

// partFileEnv names the lab file a part's process started by these tests
// (this test binary again, as TestMain serves it) loads.
const partFileEnv = "ATMLAB_TEST_PART_FILE"

func TestMain(m *testing.M) {
	if InPart() {
		lab, err := labfile.Load(os.Getenv(partFileEnv))
		if err == nil {
			err = ServePart(context.Background(), lab)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// procsLab is the two-switch lab with a stream in each half beside a load
// in the other, a UDP stream, a TCP_RR in one half and a stream across the
// cut (which runs whole).
var procsLab = labtest.Lab("split-two-switches", "procs", `experiments:
  - {name: left, from: h1, to: h2, tests: [TCP_STREAM], sizes: [1448], duration: 300ms, interval: 100ms, background: {from: h3, to: h4, test: TCP_STREAM}}
  - {name: right, from: h4, to: h3, tests: [UDP_STREAM], sizes: [1472], duration: 300ms, background: {from: h2, to: h1, test: TCP_STREAM}}
  - {name: rr, from: h2, to: h1, tests: [TCP_RR], sizes: [1], duration: 200ms}
  - {name: across, from: h1, to: h3, tests: [TCP_STREAM], sizes: [1448], duration: 200ms}
`)

// partsFromTest makes the points' parts' processes this test binary,
// loading file, each passed to wrap once started; it returns how many
// started.
func partsFromTest(t *testing.T, file string, wrap func(*exec.Cmd)) *int {
	started := 0
	old := partsOf
	t.Cleanup(func() { partsOf = old })
	partsOf = func(_ string, _ *topologies.Lab, addr string) (*exec.Cmd, error) {
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), PartEnv+"="+addr, partFileEnv+"="+file)
		cmd.Stderr = os.Stderr
		started++
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		if wrap != nil {
			wrap(cmd)
		}
		return cmd, nil
	}
	return &started
}

// procsVariant writes text to a lab file and plans it.
func procsVariant(t *testing.T, text string) (string, labrun.Variant) {
	file := filepath.Join(t.TempDir(), "procs.yaml")
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := labfile.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	vs, err := labrun.Plan(l, false)
	if err != nil {
		t.Fatal(err)
	}
	return file, vs[0]
}

// A split lab's points measured with each part in a process of its own,
// joined over TCP, record the bytes the lab run whole records; a point
// across the cut runs whole, in the run's process.
func TestPointsAsProcessesEqualWhole(t *testing.T) {
	file, v := procsVariant(t, procsLab)
	started := partsFromTest(t, file, nil)
	for _, p := range labrun.Points(v.Lab) {
		p.Variant = v.Name
		ex := experiment(v.Lab, p.Experiment)
		got := map[Mode]string{}
		for _, mode := range []Mode{Whole, Processes} {
			var rec labrun.Record
			Env{lab: v.Lab, mode: mode}.Measure(context.Background(), nil, p, ex, &rec)
			if rec.Error != "" || rec.Result.Error != "" {
				t.Fatalf("%s %s: %s%s", p.Experiment, mode, rec.Error, rec.Result.Error)
			}
			b, _ := json.Marshal(rec)
			got[mode] = string(b)
		}
		if got[Whole] != got[Processes] {
			t.Errorf("%s: as processes\n%s\nwhole\n%s", p.Experiment, got[Processes], got[Whole])
		}
	}
	if *started != 3 { // left, right and rr: a process each for part right
		t.Errorf("%d parts' processes started, want 3", *started)
	}
}

// A run's points split as processes share one part's process, started
// for the first and told each point in turn, with the bytes the lab run
// whole records; the process ends when the run's env closes. One that
// ended while idle is replaced at the next point.
func TestPointsShareTheirPartProcess(t *testing.T) {
	file, v := procsVariant(t, procsLab)
	var cmds []*exec.Cmd
	started := partsFromTest(t, file, func(c *exec.Cmd) { cmds = append(cmds, c) })
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	env := Env{lab: v.Lab, mode: Processes, parts: NewPartProcs(self)}
	points := labrun.Points(v.Lab)
	measure := func(p labrun.Point, e Env) string {
		t.Helper()
		p.Variant = v.Name
		var rec labrun.Record
		e.Measure(context.Background(), nil, p, experiment(v.Lab, p.Experiment), &rec)
		if rec.Error != "" || rec.Result.Error != "" {
			t.Fatalf("%s %s: %s%s", p.Experiment, e.mode, rec.Error, rec.Result.Error)
		}
		b, _ := json.Marshal(rec)
		return string(b)
	}
	for _, p := range points {
		if got, want := measure(p, env), measure(p, Env{lab: v.Lab, mode: Whole}); got != want {
			t.Errorf("%s: as processes\n%s\nwhole\n%s", p.Experiment, got, want)
		}
	}
	if *started != 1 {
		t.Fatalf("%d parts' processes started for %d points, want 1", *started, len(points))
	}
	cmds[0].Process.Kill()
	for !reaped(cmds[0].Process.Pid) { // by the pool, which waits for it
		time.Sleep(time.Millisecond)
	}
	measure(points[0], env)
	if *started != 2 {
		t.Errorf("%d parts' processes started after the first was killed while idle, want 2", *started)
	}
	if err := env.Close(); err != nil {
		t.Errorf("closing the env: %v", err)
	}
	if st := cmds[1].ProcessState; st == nil || st.ExitCode() != 0 {
		t.Errorf("the part's process after the env closed: %v, want it ended with status 0", st)
	}
}

// A part's process that is killed in the middle of a point, stops
// answering, or ends before it connects fails the point with an error
// naming its part, within the timeout, rather than hanging the run.
func TestPartProcessGoneNamesItsPart(t *testing.T) {
	file, v := procsVariant(t, labtest.Lab("split-two-switches", "procs", `experiments:
  - {name: left, from: h1, to: h2, tests: [TCP_STREAM], sizes: [1448], duration: 10s, background: {from: h3, to: h4, test: TCP_STREAM}}
`))
	old := PartTimeout
	PartTimeout = 3 * time.Second
	defer func() { PartTimeout = old }()
	p := labrun.Points(v.Lab)[0]
	p.Variant = v.Name
	for _, tc := range []struct {
		name, want string
		file       string
		wrap       func(*exec.Cmd)
	}{
		{"killed", "part right closed its connection", file, func(c *exec.Cmd) {
			go func() { connected(c); c.Process.Kill() }()
		}},
		{"stopped", "part right sent nothing for 3s", file, func(c *exec.Cmd) {
			go func() { connected(c); c.Process.Signal(syscall.SIGSTOP) }()
		}},
		{"failed at start", "part right's process ended before it connected: exit status 1", file + ".gone", nil},
	} {
		partsFromTest(t, tc.file, tc.wrap)
		t0 := time.Now()
		_, _, err := MeasureSplit(context.Background(), v.Lab, p, v.Lab.Experiments[0], Processes)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error saying %q", tc.name, err, tc.want)
		}
		if d := time.Since(t0); d > 30*time.Second {
			t.Errorf("%s: the point took %v to fail", tc.name, d)
		}
	}
}

// connected returns 500 ms after c's process has a socket open (its
// connection to the run: on a loaded machine it may take seconds to
// start), or after 2 s where /proc does not say.
func connected(c *exec.Cmd) {
	fds := fmt.Sprintf("/proc/%d/fd", c.Process.Pid)
	for t0 := time.Now(); time.Since(t0) < 2*time.Second || hasFDs(fds); time.Sleep(10 * time.Millisecond) {
		if hasSocket(fds) {
			break
		}
	}
	time.Sleep(500 * time.Millisecond)
}

// reaped says whether process pid has ended and been waited for: a
// zombie's other threads may still hold its files.
func reaped(pid int) bool {
	_, err := os.Stat(fmt.Sprintf("/proc/%d", pid))
	return err != nil
}

// hasFDs says whether dir (a process's fd folder) can be read.
func hasFDs(dir string) bool {
	_, err := os.ReadDir(dir)
	return err == nil
}

// hasSocket says whether a process's fd folder holds a socket.
func hasSocket(dir string) bool {
	es, _ := os.ReadDir(dir)
	for _, e := range es {
		if l, err := os.Readlink(filepath.Join(dir, e.Name())); err == nil && strings.HasPrefix(l, "socket:") {
			return true
		}
	}
	return false
}

// A frame crossing to another process travels as its ID, its birth and
// its octets, and comes back the same; a short one and a super-frame are
// refused.
func TestFrameAcrossProcessesKnownAnswer(t *testing.T) {
	f := &emulator.Frame{ID: 0x0102030405060708, Born: 1500 * time.Microsecond, Data: []byte{0xde, 0xad}}
	b, err := AppendFrame(nil, f)
	if err != nil {
		t.Fatal(err)
	}
	if want := "0102030405060708" + "000000000016e360" + "dead"; hex.EncodeToString(b) != want {
		t.Fatalf("encoded %x, want %s", b, want)
	}
	g, err := DecodeFrame(b)
	if err != nil || g.ID != f.ID || g.Born != f.Born || !bytes.Equal(g.Data, f.Data) {
		t.Errorf("decoded %+v, %v; want %+v", g, err, f)
	}
	if _, err := DecodeFrame(b[:15]); err == nil {
		t.Error("a frame of 15 octets decoded")
	}
	if _, err := AppendFrame(nil, &emulator.Frame{GSO: emulator.Super{Segs: 2}}); err == nil {
		t.Error("a super-frame was encoded")
	}
}
