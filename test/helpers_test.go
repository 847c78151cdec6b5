//go:build integration

// Integration tests: real namespaces, real TAPs, real traffic through the
// emulator. They need root and iperf3, run one at a time (-p 1, no
// t.Parallel) because rates are judged on a shared two-core machine, and
// judge steady state from the median of per-second intervals after a
// warm-up, as the issues ask.
//
//	atmlab (built once) ── up LAB ──> namespaces <lab>-<node>, TAPs, emulator
//	test ── atmlab exec ──> iperf3 / ping inside the hosts
//	test ── atmlab stats -o json ──> the emulator's counters
package test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/atmlab/atmlab/control"
	"github.com/atmlab/atmlab/harness/perf"
	"github.com/atmlab/atmlab/kernel"
)

var atmlab string // the binary under test

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "atmlab-it")
	if err != nil {
		panic(err)
	}
	atmlab = filepath.Join(dir, "atmlab")
	if out, err := exec.Command("go", "build", "-o", atmlab, "../cmd/atmlab").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build atmlab: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// requireRoot skips a test that needs root and the traffic tools.
func requireRoot(t *testing.T, tools ...string) {
	t.Helper()
	// Under CI a missing prerequisite is a failure: CI must run these.
	skip := t.Skipf
	if os.Getenv("CI") != "" {
		skip = t.Fatalf
	}
	if os.Geteuid() != 0 {
		skip("needs root (CAP_NET_ADMIN for namespaces and TAPs): run `sudo make test`")
	}
	for _, tool := range append([]string{"tc", "ethtool", "ip"}, tools...) {
		if _, err := exec.LookPath(tool); err != nil {
			skip("needs %s: apt-get install -y %s", tool, tool)
		}
	}
}

var labSeq int

// labName returns a lab name unique to this test process.
func labName() string {
	labSeq++
	return fmt.Sprintf("it%d-%d", os.Getpid()%100000, labSeq)
}

// running is a lab brought up by `atmlab up` in a child process.
type running struct {
	t      *testing.T
	name   string
	file   string
	cmd    *exec.Cmd
	stderr bytes.Buffer
	done   chan error
	veth   bool     // plain namespaces, not a lab: commands run by ip netns exec
	subnet string   // h1 and h2 are its .1 and .2 (10.0.0. unless set)
	lines  []string // what up printed on stdout up to its ready line
	readyc chan bool
	// parts, for a split lab, names each node's part's instance (the
	// lab its commands run in); nil: every node is r.name's.
	parts map[string]string
}

// up writes the lab (with NAME replaced by a fresh lab name), starts
// `atmlab up` and waits for its ready line. Cleanup stops it with SIGINT
// and checks that nothing of it remains.
func up(t *testing.T, lab string, args ...string) *running {
	t.Helper()
	r := &running{t: t, name: labName(), done: make(chan error, 1)}
	r.file = filepath.Join(t.TempDir(), "lab.yaml")
	if err := os.WriteFile(r.file, []byte(strings.ReplaceAll(lab, "NAME", r.name)), 0o644); err != nil {
		t.Fatal(err)
	}
	r.begin(exec.Command(atmlab, append([]string{"up", r.file}, args...)...))
	r.ready()
	return r
}

// begin starts cmd, an `atmlab up`, reading its output for its ready
// line; ready waits for it. Two parts of a split lab are begun before
// either is ready: each waits for the other.
func (r *running) begin(cmd *exec.Cmd) {
	t := r.t
	r.cmd = cmd
	r.cmd.Stderr = &r.stderr
	stdout, _ := r.cmd.StdoutPipe()
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r.readyc = make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		seen := false
		for sc.Scan() {
			if strings.Contains(sc.Text(), "ready") && !seen {
				seen = true
				r.readyc <- true
			} else if !seen {
				r.lines = append(r.lines, sc.Text())
			}
		}
		r.readyc <- false
		r.done <- r.cmd.Wait()
	}()
}

// ready waits for the ready line of what begin started; cleanup stops it
// with SIGINT and checks that nothing of it remains.
func (r *running) ready() {
	t := r.t
	t.Helper()
	select {
	case ok := <-r.readyc:
		if !ok {
			<-r.done
			t.Fatalf("atmlab up exited before ready: %s", r.stderr.String())
		}
	case <-time.After(30 * time.Second):
		r.cmd.Process.Kill()
		t.Fatalf("atmlab up not ready after 30s: %s", r.stderr.String())
	}
	t.Cleanup(func() { r.stop() })
}

// stop sends SIGINT and checks that the lab's namespaces are gone.
func (r *running) stop() {
	t := r.t
	if r.cmd == nil || r.cmd.ProcessState != nil {
		return
	}
	r.cmd.Process.Signal(syscall.SIGINT)
	select {
	case err := <-r.done:
		if err != nil {
			t.Errorf("atmlab up exited with %v after SIGINT: %s", err, r.stderr.String())
		}
	case <-time.After(15 * time.Second):
		r.cmd.Process.Kill()
		t.Errorf("atmlab up did not stop within 15s of SIGINT")
	}
	if left := namespaces(r.name); len(left) > 0 {
		t.Errorf("after SIGINT, namespaces remain: %v", left)
	}
}

// namespaces lists the named namespaces of a lab.
func namespaces(lab string) []string {
	entries, _ := os.ReadDir(kernel.NetnsDir)
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), lab+"-") {
			out = append(out, e.Name())
		}
	}
	return out
}

// exec runs a command in a host and returns its output; it fails the test
// on error.
func (r *running) exec(node string, args ...string) []byte {
	r.t.Helper()
	out, err := r.try(node, args...)
	if err != nil {
		r.t.Fatalf("%s: %s: %v\n%s", node, strings.Join(args, " "), err, out)
	}
	return out
}

// try runs a command in a host; its output is stdout, or stdout and stderr
// when it fails.
func (r *running) try(node string, args ...string) ([]byte, error) {
	cmd := r.command(node, args...)
	var out, errOut bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &errOut
	if err := cmd.Run(); err != nil {
		return append(out.Bytes(), errOut.Bytes()...), err
	}
	return out.Bytes(), nil
}

// start runs a command in a host in the background; cleanup kills it.
func (r *running) start(node string, args ...string) *exec.Cmd {
	r.t.Helper()
	cmd := r.command(node, args...)
	if err := cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd
}

// addr is the address of h1 or h2.
func (r *running) addr(host string) string {
	if r.subnet == "" {
		return "10.0.0." + host[1:]
	}
	return r.subnet + host[1:]
}

// command runs args inside node.
func (r *running) command(node string, args ...string) *exec.Cmd {
	if r.veth {
		return exec.Command("ip", append([]string{"netns", "exec", r.name + "-" + node}, args...)...)
	}
	name := r.name
	if p, ok := r.parts[node]; ok {
		name = p
	}
	return exec.Command(atmlab, append([]string{"exec", name, node, "--"}, args...)...)
}

// stats reads the lab's counters through `atmlab stats -o json`.
func (r *running) stats() control.Stats {
	r.t.Helper()
	out, err := exec.Command(atmlab, "stats", r.name, "-o", "json").Output()
	if err != nil {
		r.t.Fatalf("atmlab stats: %v", err)
	}
	var st control.Stats
	if err := json.Unmarshal(out, &st); err != nil {
		r.t.Fatalf("atmlab stats -o json: %v\n%s", err, out)
	}
	return st
}

// port returns one port's row from stats.
func port(t *testing.T, st control.Stats, name string) (row struct{ Rx, Tx, Drops uint64 }) {
	t.Helper()
	for _, p := range st.Ports {
		if p.Port == name {
			row.Rx, row.Tx, row.Drops = p.RxFrames, p.TxFrames, p.Drops
			return row
		}
	}
	t.Fatalf("no port %s in stats", name)
	return row
}

// iperf is what an iperf3 run reported.
type iperf struct {
	Received   []float64 // receiver's per-second bits/s
	PPS        []float64 // receiver's per-second datagrams (UDP)
	Packets    int       // UDP datagrams the receiver expected
	Lost       int       // UDP datagrams lost
	Retransmit int       // TCP retransmissions
	Stolen     int       // seconds left out (NaN above): the hypervisor took the CPU (dropStolen)
	err        error
}

// runIperf runs an iperf3 server on srv (port) and a client on cli for
// secs seconds with extra client args, and returns the receiver's view,
// once the machine is quiet and again while the hypervisor stole any of
// its seconds (quietRun).
func (r *running) runIperf(cli, srv, addr string, port, secs int, args ...string) iperf {
	r.t.Helper()
	var it iperf
	quietRun(r.t, fmt.Sprintf("iperf3 %s -> %s %v", cli, srv, args), func() (int, int) {
		it = r.runIperfNoFatal(cli, srv, addr, port, secs, args...)
		if it.err != nil {
			r.t.Fatal(it.err)
		}
		return it.Stolen, len(it.Received)
	})
	return it
}

// bothWays runs iperf3 streams h1 -> h2 (on port) and h2 -> h1 (on
// port+1) at once for secs seconds, with extra client args (none: TCP),
// as runIperf runs one; each reports its failure in err.
func (r *running) bothWays(port, secs int, args ...string) (ab, ba iperf) {
	r.t.Helper()
	quietRun(r.t, fmt.Sprintf("iperf3 both ways %v", args), func() (int, int) {
		var wg sync.WaitGroup
		wg.Add(2)
		go func() { defer wg.Done(); ab = r.runIperfNoFatal("h1", "h2", r.addr("h2"), port, secs, args...) }()
		go func() { defer wg.Done(); ba = r.runIperfNoFatal("h2", "h1", r.addr("h1"), port+1, secs, args...) }()
		wg.Wait()
		if ab.err != nil || ba.err != nil {
			return 0, 0 // the caller fails on it
		}
		return ab.Stolen + ba.Stolen, len(ab.Received) + len(ba.Received)
	})
	return ab, ba
}

// runIperfNoFatal is runIperf for other goroutines: it reports failure in err.
func (r *running) runIperfNoFatal(cli, srv, addr string, port, secs int, args ...string) iperf {
	p := fmt.Sprint(port)
	r.start(srv, "iperf3", "-s", "-1", "-J", "-p", p)
	clientArgs := append([]string{"iperf3", "-c", addr, "-p", p, "-J", "--get-server-output", "-t", fmt.Sprint(secs)}, args...)
	var out []byte
	var err error
	steal := machine()
	var began time.Duration
	for try := 0; try < 20; try++ { // until the server listens
		time.Sleep(100 * time.Millisecond)
		began = steal.now()
		if out, err = r.try(cli, clientArgs...); err == nil || !bytes.Contains(out, []byte("unable to connect")) {
			break
		}
	}
	steal.now() // a sample after the last second
	if err != nil {
		return iperf{err: fmt.Errorf("iperf3 client: %v\n%s", err, out)}
	}
	var res struct {
		End struct {
			SumSent struct {
				Bps        float64 `json:"bits_per_second"`
				Retransmit int     `json:"retransmits"`
			} `json:"sum_sent"`
			Sum struct {
				Bps     float64 `json:"bits_per_second"`
				Packets int     `json:"packets"`
				Lost    int     `json:"lost_packets"`
			} `json:"sum"`
		} `json:"end"`
		Server struct {
			Intervals []struct {
				Sum struct {
					Seconds float64 `json:"seconds"`
					Bps     float64 `json:"bits_per_second"`
					Packets float64 `json:"packets"`
					Lost    float64 `json:"lost_packets"`
				} `json:"sum"`
			} `json:"intervals"`
		} `json:"server_output_json"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		return iperf{err: fmt.Errorf("iperf3 -J: %v\n%s", err, out)}
	}
	it := iperf{Packets: res.End.Sum.Packets, Lost: res.End.Sum.Lost, Retransmit: res.End.SumSent.Retransmit}
	var lengths []float64
	for _, iv := range res.Server.Intervals {
		if iv.Sum.Seconds > 0.9 {
			it.Received = append(it.Received, iv.Sum.Bps)
			it.PPS = append(it.PPS, (iv.Sum.Packets-iv.Sum.Lost)/iv.Sum.Seconds)
			lengths = append(lengths, iv.Sum.Seconds)
		}
	}
	it.Stolen = dropStolen(steal, began, lengths, it.Received, it.PPS)
	return it
}

// steady returns the median of per-second intervals after warm-up seconds,
// leaving out those the hypervisor stole (NaN, dropStolen); when fewer
// than half of them are left, the test is not judged (notJudged).
func steady(t *testing.T, intervals []float64, warmup int) float64 {
	t.Helper()
	if len(intervals) <= warmup {
		t.Fatalf("only %d intervals, want more than the %d-second warm-up", len(intervals), warmup)
	}
	v := slices.DeleteFunc(slices.Clone(intervals[warmup:]), math.IsNaN)
	if n := len(intervals) - warmup; 2*len(v) < n {
		notJudged(t, "the hypervisor took more than %.0f %% of the machine's CPU (/proc/stat steal) in %d of the %d seconds after the warm-up", 100*quietSteal, n-len(v), n)
	}
	sort.Float64s(v)
	return v[len(v)/2]
}

// within reports whether got is within tol (a fraction) of want.
func within(got, want, tol float64) bool { return got >= want*(1-tol) && got <= want*(1+tol) }

// ceiling is the payload rate of an Ethernet link carrying payload bytes
// behind hdr bytes of IP and transport headers in each 1500-byte-MTU frame:
// 14 header + 4 FCS + 8 preamble + 12 gap = 38 bytes of framing.
func ceiling(rate float64, payload, hdr int) float64 {
	return rate * float64(payload) / float64(payload+hdr+38)
}

// readyWithin bounds the waits for a server or a capture to be ready: far
// more than either takes on a loaded machine, so reaching it is a failure.
const readyWithin = 10 * time.Second

// waitListening waits until node has a socket listening on port (proto
// "tcp" or "udp"), asking ss in the node, and fails the test if none does
// within readyWithin. It replaces a fixed sleep after starting a server:
// on a loaded machine no sleep is long enough, on an idle one it is wasted.
func (r *running) waitListening(node, proto string, port int) {
	r.t.Helper()
	flags := map[string]string{"tcp": "-Hlnt", "udp": "-Hlnu"}[proto]
	var out []byte
	for end := time.Now().Add(readyWithin); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		var err error
		if out, err = r.try(node, "ss", flags, "sport", "=", fmt.Sprintf(":%d", port)); err == nil && len(bytes.TrimSpace(out)) > 0 {
			return
		}
	}
	r.t.Fatalf("%s: nothing listening on %s port %d within %v (ss: %s)", node, proto, port, readyWithin, out)
}

// perfServer starts atmlab perf server in node and returns once it listens
// on perf's control port.
func (r *running) perfServer(node string) *exec.Cmd {
	r.t.Helper()
	cmd := r.start(node, atmlab, "perf", "server")
	r.waitListening(node, "tcp", perf.DefaultPort)
	return cmd
}

// captureAttached waits until `atmlab capture -w file` is attached to its
// link: the lab sends the capture's file header once its tap is on, and
// capture writes it at once to the temporary file beside file that becomes
// file at the end. It fails the test if that does not happen within
// readyWithin.
func captureAttached(t *testing.T, file string) {
	t.Helper()
	pattern := filepath.Join(filepath.Dir(file), "."+filepath.Base(file)+".*.tmp")
	for end := time.Now().Add(readyWithin); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		tmps, _ := filepath.Glob(pattern)
		for _, tmp := range tmps {
			if st, err := os.Stat(tmp); err == nil && st.Size() > 0 {
				return
			}
		}
		if st, err := os.Stat(file); err == nil && st.Size() > 0 {
			return // it already finished
		}
	}
	t.Fatalf("atmlab capture -w %s: not attached within %v (no file header)", file, readyWithin)
}

// longTests is set (ATMLAB_LONG=1, `sudo make test-long`) to run the long
// integration tests too: what they prove CI proves more cheaply elsewhere
// (docs/validation.md, "Long tests"), and they would take CI past its
// 20 minutes.
var longTests = os.Getenv("ATMLAB_LONG") != ""

// longOnly skips a long test unless ATMLAB_LONG is set, saying where CI
// proves the same.
func longOnly(t *testing.T, coveredBy string) {
	t.Helper()
	if !longTests {
		t.Skipf("a long test: `sudo make test-long` (ATMLAB_LONG=1) runs it; in CI %s", coveredBy)
	}
}
