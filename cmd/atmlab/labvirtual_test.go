package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/atmlab/atmlab/backend/registry"
	"github.com/atmlab/atmlab/harness/clock"
	"github.com/atmlab/atmlab/harness/labrun"
	"github.com/atmlab/atmlab/internal/labtest"
	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/labfile"
)

var virtualLab = labtest.Set(labtest.Lab("two-hosts-switch", "vlab", `experiments:
  - {name: streams, from: h1, to: h2, tests: [TCP_STREAM, UDP_STREAM, TCP_RR], sizes: [1472], repetitions: 2, duration: 300ms, interval: 100ms}
  - {name: tools, from: h1, to: h2, tool: iperf3, tests: [TCP_STREAM], duration: 300ms}
  - {name: as-atmlab, from: h1, to: h2, tool: iperf3, virtual: atmlab, tests: [UDP_STREAM], sizes: [1472], duration: 300ms}
`), "topology.nodes.h1.sysctls", "{net.ipv4.tcp_congestion_control: cubic}", "topology.nodes.sw1.buffer", "128KiB")

// figures reads results.jsonl without its wall-clock timestamps.
func figures(t *testing.T, dir string) []map[string]any {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "results.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var recs []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		delete(m, "at")
		recs = append(recs, m)
	}
	return recs
}

// TestLabRunVirtual runs a lab's experiments in virtual time (no root),
// twice, under GOMAXPROCS 1 and 2: the same results.jsonl figures.
func TestLabRunVirtual(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	file := filepath.Join(t.TempDir(), "vlab.yaml")
	os.WriteFile(file, []byte(virtualLab), 0o644)
	var runs [][]map[string]any
	for _, procs := range []int{1, 2} {
		runtime.GOMAXPROCS(procs)
		t.Setenv("GOMAXPROCS", strconv.Itoa(procs)) // else a virtual-only run takes 1
		out := filepath.Join(t.TempDir(), "out")
		_, errOut, err := run(t, "lab", "run", file, "--clock", "virtual", "--out", out)
		if err != nil {
			t.Fatalf("lab run --clock virtual: %v\n%s", err, errOut)
		}
		// Not a terminal: the progress bar is plain lines, one per point.
		if strings.Contains(errOut, "\r") || !strings.Contains(errOut, "] 8/8  ETA 0s\n") {
			t.Errorf("lab run's progress in a log:\n%q", errOut)
		}
		for _, f := range []string{"report.md", "report.html", "virtual-base.json", "spec.json"} {
			if _, err := os.Stat(filepath.Join(out, f)); err != nil {
				t.Errorf("no %s: %v", f, err)
			}
		}
		runs = append(runs, figures(t, out))
	}
	recs := runs[0]
	if len(recs) != 8 {
		t.Fatalf("%d records, want 8", len(recs))
	}
	for _, r := range recs {
		res := r["result"].(map[string]any)
		if r["clock"] != "virtual" || !strings.HasPrefix(r["stack"].(string), "gvisor.dev/gvisor ") {
			t.Errorf("record without clock and stack: %v %v", r["clock"], r["stack"])
		}
		switch {
		case r["experiment"] == "as-atmlab":
			if bps, _ := res["throughput_bps"].(float64); r["measured_by"] != "atmlab" || bps < 95e6 || bps > 96e6 {
				t.Errorf("iperf3 as atmlab: measured by %v, %.2f Mbit/s", r["measured_by"], bps/1e6)
			}
		case r["tool"] == "iperf3":
			if e, _ := res["error"].(string); !strings.Contains(e, "skipped: iperf3 runs only in real time") {
				t.Errorf("iperf3 point: error %q, want it skipped with the reason", e)
			}
		case r["test"] == "TCP_RR":
			if tps, _ := res["transactions_per_sec"].(float64); tps < 1000 {
				t.Errorf("TCP_RR: %v transactions/s", tps)
			}
		default:
			if bps, _ := res["throughput_bps"].(float64); bps < 85e6 || bps > 96e6 { // 300 ms: TCP slow start shows
				t.Errorf("%s: %.2f Mbit/s, want 85-96", r["test"], bps/1e6)
			}
		}
	}
	a, _ := json.Marshal(runs[0])
	b, _ := json.Marshal(runs[1])
	if string(a) != string(b) {
		t.Errorf("GOMAXPROCS 1 and 2 gave different results:\n%s\n%s", a, b)
	}
}

// A virtual record of an experiment with a background load carries the
// load as a real-time record does (who, which test, what its sender put
// on its links), and no emulator CPU, which model time cannot be limited
// by and which would make two runs' records differ; two runs give the
// same records.
func TestVirtualRecordCarriesBackground(t *testing.T) {
	file := filepath.Join(t.TempDir(), "bg.yaml")
	lab := virtualLab[:strings.Index(virtualLab, "experiments:")] + "experiments:\n" +
		"  - {name: loaded, from: h1, to: h2, tests: [TCP_RR], duration: 300ms, background: {from: h2, to: h1, test: UDP_STREAM}}\n"
	os.WriteFile(file, []byte(lab), 0o644)
	var runs [][]map[string]any
	for range 2 {
		out := filepath.Join(t.TempDir(), "out")
		if _, errOut, err := run(t, "lab", "run", file, "--clock", "virtual", "--out", out); err != nil {
			t.Fatalf("lab run --clock virtual: %v\n%s", err, errOut)
		}
		runs = append(runs, figures(t, out))
	}
	recs := runs[0]
	if len(recs) != 1 {
		t.Fatalf("%d records, want 1", len(recs))
	}
	bg, _ := recs[0]["background"].(map[string]any)
	if bg["from"] != "h2" || bg["to"] != "h1" || bg["test"] != "UDP_STREAM" {
		t.Errorf("the virtual record's background is %v, want h2 to h1 UDP_STREAM", recs[0]["background"])
	}
	// The load's 1472-octet datagrams fill h2's 100M link: a NIC counts
	// 1514 octets a frame of the 1538 on the wire (98.44 Mbit/s; 98.42
	// measured, beside the point's small responses).
	if sent, want := bg["sent_bps"].(float64), 100e6*1514/1538; sent < want*0.99 || sent > want*1.001 {
		t.Errorf("background sent %.2f Mbit/s, want h2's full 100M link, %.2f", sent/1e6, want/1e6)
	}
	if cpu, ok := recs[0]["emulator_cpu"]; ok {
		t.Errorf("the virtual record has emulator_cpu %v, want none", cpu)
	}
	a, _ := json.Marshal(runs[0])
	b, _ := json.Marshal(runs[1])
	if string(a) != string(b) {
		t.Errorf("two runs gave different records:\n%s\n%s", a, b)
	}
}

// runVirtual measures a variant in virtual time as lab run does, its
// setup recorded in out.
func runVirtual(ctx context.Context, lab *topologies.Lab, r *labrun.Runner, out string) (int, error) {
	return registry.Measure(out, "", nil)(ctx, clock.Virtual, r)
}

// TestVirtualPointsSideBySideSameBytes: a virtual run of a small lab's
// points three at a time, each on its own netstack lab, writes the same
// results.jsonl and results.csv, timestamps aside, as one at a time.
func TestVirtualPointsSideBySideSameBytes(t *testing.T) {
	skipInStubRun(t)
	lab, err := labfile.Parse("side.yaml", []byte(`name: side
seed: 7
topology:
  nodes:
    h1: {kind: host, ipv4: 10.0.0.1/24}
    h2: {kind: host, ipv4: 10.0.0.2/24}
    sw: {kind: switch}
  links:
    - {endpoints: ["h1:eth0", "sw:p1"], ethernet: {rate: 100M}}
    - {endpoints: ["h2:eth0", "sw:p2"], ethernet: {rate: 100M}}
experiments:
  - {name: s, from: h1, to: h2, tests: [TCP_STREAM, UDP_STREAM, TCP_RR], sizes: [64, 1460], duration: 200ms}
`))
	if err != nil {
		t.Fatal(err)
	}
	at := regexp.MustCompile(`"at":"[^"]*"`)
	var files [2]string
	for i, jobs := range []int{1, 3} {
		var jsonl, csvb bytes.Buffer
		csvw := csv.NewWriter(&csvb)
		r := &labrun.Runner{Variant: "base", Lab: lab, JSONL: &jsonl, CSV: csvw, Jobs: jobs}
		n, err := runVirtual(context.Background(), lab, r, t.TempDir())
		if err != nil || n != 6 {
			t.Fatalf("%d at a time: %d points, %v; want 6", jobs, n, err)
		}
		files[i] = at.ReplaceAllString(jsonl.String(), `"at":""`) + csvb.String()
	}
	if files[0] != files[1] {
		t.Errorf("three at a time wrote\n%s\none at a time\n%s", files[1], files[0])
	}
}

func TestClockFlags(t *testing.T) {
	if _, _, err := run(t, "up", "../../topologies/sw100.yaml", "--clock", "virtual"); err == nil || !strings.Contains(err.Error(), "no real hosts to attach to") {
		t.Errorf("up --clock virtual: %v", err)
	}
	if _, _, err := run(t, "lab", "run", "../../topologies/sw100.yaml", "--clock", "sundial"); err == nil || !strings.Contains(err.Error(), "use --clock real, virtual or both") {
		t.Errorf("lab run --clock sundial: %v", err)
	}
}

// TestLabRunVirtualUnprivileged runs TestLabRunVirtual again as uid 65534
// (nobody), the test binary copied where that user may run it: a virtual
// lab run needs no root. Run as a normal user, TestLabRunVirtual itself
// shows it.
func TestLabRunVirtualUnprivileged(t *testing.T) {
	if os.Getenv("ATMLAB_UNPRIVILEGED_CHILD") != "" || os.Geteuid() != 0 {
		if os.Getenv("ATMLAB_UNPRIVILEGED_CHILD") != "" && os.Geteuid() != 65534 {
			t.Fatalf("the child runs as uid %d, want 65534", os.Geteuid())
		}
		return // TestLabRunVirtual runs unprivileged here
	}
	dir, err := os.MkdirTemp("", "atmlab-unprivileged") // t.TempDir's parent is 0700
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o777)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "atmlab.test")
	data, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run", "^(TestLabRunVirtual|TestLabRunVirtualUnprivileged)$", "-test.count=1")
	cmd.Env = append(os.Environ(), "ATMLAB_UNPRIVILEGED_CHILD=1", "TMPDIR="+dir, "HOME="+dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "PASS") {
		t.Fatalf("lab run --clock virtual as uid 65534: %v\n%s", err, out)
	}
}

// A lab whose reference names a result file by a relative path renders its
// whole report from its results folder, the lab's own folder gone; a
// results folder whose spec.json does not read, or (written before lab run
// wrote spec.json) whose lab.yaml does not load, makes report fail, not
// shrink.
func TestReportFromResultsFolder(t *testing.T) {
	dir := t.TempDir()
	labDir := filepath.Join(dir, "lab")
	os.MkdirAll(filepath.Join(labDir, "refs"), 0o755)
	os.WriteFile(filepath.Join(labDir, "refs", "hw.json"), []byte(`{"end":{"sum_received":{"bits_per_second":91234000}}}`), 0o644)
	file := filepath.Join(labDir, "r.yaml")
	lab := virtualLab[:strings.Index(virtualLab, "experiments:")] + "experiments:\n  - {name: streams, from: h1, to: h2, tests: [TCP_STREAM], duration: 200ms}\n" +
		"reference:\n  - {experiment: streams, test: TCP_STREAM, file: refs/hw.json, format: iperf3, source: the rig}\n"
	os.WriteFile(file, []byte(lab), 0o644)
	out := filepath.Join(dir, "results")
	if _, errOut, err := run(t, "lab", "run", "--clock", "virtual", "--out", out, file); err != nil {
		t.Fatalf("lab run: %v\n%s", err, errOut)
	}
	// The same lab as two shards, merged: the merged folder carries the
	// reference file too.
	for _, k := range []string{"1", "2"} {
		if _, errOut, err := run(t, "lab", "run", "--clock", "virtual", "--shard", k+"/2", "--out", filepath.Join(dir, "shard-"+k), file); err != nil {
			t.Fatalf("lab run --shard %s/2: %v\n%s", k, err, errOut)
		}
	}
	merged := filepath.Join(dir, "merged")
	if _, errOut, err := run(t, "report", filepath.Join(dir, "shard-1"), filepath.Join(dir, "shard-2"), "--out", merged); err != nil {
		t.Fatalf("report of two shards: %v\n%s", err, errOut)
	}
	os.RemoveAll(labDir)
	os.Remove(filepath.Join(out, "report.md"))
	os.Remove(filepath.Join(merged, "report.md"))
	if _, _, err := run(t, "report", merged); err != nil {
		t.Fatalf("report from the merged folder alone: %v", err)
	}
	if md, err := os.ReadFile(filepath.Join(merged, "report.md")); err != nil || !strings.Contains(string(md), "91.23") {
		t.Fatalf("the merged report lacks the hardware figure: %v\n%s", err, md)
	}
	if _, _, err := run(t, "report", out); err != nil {
		t.Fatalf("report from the folder alone: %v", err)
	}
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil || !strings.Contains(string(md), "## Compared with hardware") || !strings.Contains(string(md), "91.23") || !strings.Contains(string(md), "the rig") {
		t.Fatalf("report.md lacks the hardware figure: %v\n%s", err, md)
	}
	if strings.Contains(string(md), "has no `spec.json`") {
		t.Errorf("report.md of a folder with spec.json says it has none:\n%s", md)
	}
	if b, err := os.ReadFile(filepath.Join(merged, "spec.json")); err != nil || !strings.Contains(string(b), `"variant": "base"`) {
		t.Fatalf("the merged folder lacks the shards' spec.json: %v", err)
	}
	if m, _ := filepath.Glob(filepath.Join(merged, "flent", "*.flent.gz")); len(m) != 1 {
		t.Errorf("the merged folder has flent files %v, want its one point's", m)
	}
	// Broken inputs: a spec.json that does not read; in a folder written
	// before lab run wrote spec.json, a lab.yaml that does not load.
	os.WriteFile(filepath.Join(out, "spec.json"), []byte("{\"variants\": [\n"), 0o644)
	if _, _, err := run(t, "report", out); err == nil || !strings.Contains(err.Error(), "spec.json does not read") {
		t.Fatalf("report of a broken spec.json: %v", err)
	}
	os.Remove(filepath.Join(out, "spec.json"))
	os.WriteFile(filepath.Join(out, "lab.yaml"), []byte("name: x\ntopology: {nodes: {h1: {kind: hots}}}\n"), 0o644)
	if _, _, err := run(t, "report", out); err == nil || !strings.Contains(err.Error(), "lab.yaml does not load") || !strings.Contains(err.Error(), "lab.yaml:2") {
		t.Fatalf("report of a broken lab.yaml: %v", err)
	}
}

// A lab with parts: run in virtual time, each part on a core of its own
// or in a process of its own (--split procs), a stream in each half and a
// stream across the cut, writes the figures the lab run whole on one
// scheduler (--split whole) writes.
func TestLabRunSplitEqualsWhole(t *testing.T) {
	file := labtest.File(t, labtest.Lab("split-two-switches", "split", `experiments:
  - {name: halves, from: h1, to: h2, tests: [TCP_STREAM], sizes: [1448], duration: 200ms, background: {from: h3, to: h4, test: TCP_STREAM}}
  - {name: across, from: h2, to: h4, tests: [TCP_STREAM], sizes: [1448], duration: 200ms}
`))
	t.Setenv("ATMLAB_TEST_MAIN", "1") // --split procs starts this binary again: as atmlab (TestMain)
	var runs [][]map[string]any
	for _, split := range []string{"whole", "", "procs"} {
		out := filepath.Join(t.TempDir(), "out")
		if _, errOut, err := run(t, "lab", "run", file, "--clock", "virtual", "--out", out, "--split", split); err != nil {
			t.Fatalf("lab run --split %q: %v\n%s", split, err, errOut)
		}
		runs = append(runs, figures(t, out))
	}
	a, _ := json.Marshal(runs[0])
	for i, how := range []string{"a part a core", "a part a process"} {
		b, _ := json.Marshal(runs[i+1])
		if len(runs[0]) != 2 || string(a) != string(b) {
			t.Errorf("split run (%s) wrote\n%s\nwhole\n%s", how, b, a)
		}
	}
	if _, _, err := run(t, "lab", "run", file, "--clock", "virtual", "--out", filepath.Join(t.TempDir(), "o"), "--split", "halves"); err == nil || !strings.Contains(err.Error(), `--split "halves"`) {
		t.Errorf("--split halves: %v", err)
	}
}
