package placement

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/atmlab/atmlab/campaign"
	"github.com/atmlab/atmlab/harness/results"
	"github.com/atmlab/atmlab/internal/labtest"
)

// testSplit is a two-part split lab, left and right sharing a cut.
func testSplit(t *testing.T, engine campaign.Engine) Split {
	return Split{
		File: "/labs/two parts.yaml", Lab: "twoparts", Parts: []string{"left", "right"}, Peers: [][]int{{1}, {0}},
		Engine: engine, Out: filepath.Join(t.TempDir(), "out"), Binary: "/opt/atmlab/atmlab", Image: "registry.example/atmlab:1",
		Port: DefaultPort, Src: []byte("name: twoparts\n"),
	}
}

// TestPartArgsNameOnlyNeighbours: each part is told its own listening
// port and the address of each part it shares a cut with, no other.
func TestPartArgsNameOnlyNeighbours(t *testing.T) {
	s := Split{File: "/l.yaml", Lab: "lab", Parts: []string{"a", "b", "c"}, Peers: [][]int{{1}, {0, 2}, {1}}, Port: 5000}
	host := func(j int) string { return "n" + s.Parts[j] }
	for k, want := range []string{
		"up /l.yaml --part a --cut-listen 0.0.0.0:5000 --cut-peer b=nb:5001",
		"up /l.yaml --part b --cut-listen 0.0.0.0:5001 --cut-peer a=na:5000,c=nc:5002",
		"up /l.yaml --part c --cut-listen 0.0.0.0:5002 --cut-peer b=nb:5001",
	} {
		if got := strings.Join(s.PartArgs(s.File, k, host), " "); got != want {
			t.Errorf("part %d: %s\nwant %s", k, got, want)
		}
	}
	if got := strings.Join(s.DownArgs(1), " "); got != "down lab-b" {
		t.Errorf("down: %s", got)
	}
}

// TestCheckRefusesBadSplits: a split that cannot be placed says why.
func TestCheckRefusesBadSplits(t *testing.T) {
	for _, tc := range []struct {
		change func(*Split)
		want   string
	}{
		{func(s *Split) { s.Parts, s.Peers = s.Parts[:1], s.Peers[:1] }, "at least two parts"},
		{func(s *Split) { s.Port = 65535 }, "cut port 65535"},
		{func(s *Split) { s.Peers[0] = []int{0} }, "not another part"},
		{func(s *Split) { s.Out = "rel" }, "absolute"},
	} {
		s := testSplit(t, campaign.Local)
		tc.change(&s)
		if err := s.Check(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", s, err, tc.want)
		}
	}
	if err := testSplit(t, campaign.Local).Check(); err != nil {
		t.Error(err)
	}
}

// TestNameIsADNSLabel: the engines' objects are named atmlab-<lab>-split,
// lowercase and short enough for a StatefulSet's pods.
func TestNameIsADNSLabel(t *testing.T) {
	for lab, want := range map[string]string{
		"twoparts":                 "atmlab-twoparts-split",
		"a-very-long-lab-name-xyz": "atmlab-a-very-long-lab-name-xyz-split",
	} {
		if got := (Split{Lab: lab}).Name(); got != want {
			t.Errorf("%s: %s, want %s", lab, got, want)
		}
	}
}

// fakeRunner is a runner whose parts say they are ready after a few looks.
type fakeRunner struct {
	mu      sync.Mutex
	looks   int
	readyAt int // looks before the parts are ready; -1: never
	stop_   string
	stops   int
}

func (f *fakeRunner) start(context.Context, *results.Folder) error { return nil }
func (f *fakeRunner) log(k int) []byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.looks++
	if f.readyAt >= 0 && f.looks > f.readyAt {
		return []byte("starting\nlab twoparts ready: 2 hosts\n")
	}
	return []byte("starting\n")
}
func (f *fakeRunner) stopped() string { return f.stop_ }
func (f *fakeRunner) stop(out *results.Folder) error {
	f.stops++
	return out.WriteFile("part-right.stats.json", []byte(`{"ports": {}, "cuts": [{"link": "sw1:p9-sw2:p9", "late": 0}]}`), 0o644)
}

// TestUpWaitsForEveryPartThenStopsOnInterrupt: Up says ready once every
// part has, stays until interrupted, stops the parts once and writes
// split.json, with the cuts of each part's last stats.
func TestUpWaitsForEveryPartThenStopsOnInterrupt(t *testing.T) {
	poll = time.Millisecond
	s := testSplit(t, campaign.Local)
	f := &fakeRunner{readyAt: 5}
	ctx, cancel := context.WithCancel(context.Background())
	var out strings.Builder
	var mu sync.Mutex
	w := writerFunc(func(b []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		if strings.Contains(string(b), "split lab twoparts: ready") {
			cancel()
		}
		return out.Write(b)
	})
	if err := up(ctx, s, f, w); err != nil {
		t.Fatal(err)
	}
	if f.stops != 1 {
		t.Errorf("stopped %d times", f.stops)
	}
	var rep Report
	b, err := os.ReadFile(filepath.Join(s.Out, ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Why != "interrupted" || rep.Ready == nil || len(rep.Parts) != 2 || !rep.Parts[0].Ready || !rep.Parts[1].Ready ||
		rep.Parts[1].Peers[0] != "left=(left):47000" || rep.Parts[0].Last != "lab twoparts ready: 2 hosts" ||
		rep.Parts[0].Cuts != nil || compact(rep.Parts[1].Cuts) != `[{"link":"sw1:p9-sw2:p9","late":0}]` {
		t.Errorf("split.json:\n%s", b)
	}
	for _, want := range []string{"part left: ready", "part right: ready", "split lab twoparts: down (interrupted)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q in\n%s", want, out.String())
		}
	}
}

// TestUpEndsWhenAPartStops: a part that stops before the lab is ready, or
// after, ends the split lab with the reason, every part brought down.
func TestUpEndsWhenAPartStops(t *testing.T) {
	poll = time.Millisecond
	for _, readyAt := range []int{-1, 0} {
		s := testSplit(t, campaign.Local)
		f := &fakeRunner{readyAt: readyAt, stop_: "part right exited: bad cut"}
		err := up(context.Background(), s, f, &strings.Builder{})
		if err == nil || !strings.Contains(err.Error(), "part right exited: bad cut") || f.stops != 1 {
			t.Errorf("ready after %d looks: %v, %d stops", readyAt, err, f.stops)
		}
		b, _ := os.ReadFile(filepath.Join(s.Out, ReportFile))
		if !strings.Contains(string(b), "bad cut") {
			t.Errorf("split.json:\n%s", b)
		}
	}
}

// TestUpRefusesAFolderWithResults: Up never writes over an earlier
// split lab's results.
func TestUpRefusesAFolderWithResults(t *testing.T) {
	s := testSplit(t, campaign.Local)
	os.MkdirAll(s.Out, 0o755)
	os.WriteFile(filepath.Join(s.Out, ReportFile), []byte("{}"), 0o644)
	f := &fakeRunner{}
	if err := up(context.Background(), s, f, &strings.Builder{}); err == nil || !strings.Contains(err.Error(), "split.json") {
		t.Errorf("%v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(s.Out, ReportFile)); string(b) != "{}" {
		t.Errorf("split.json replaced: %s", b)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }

// TestLoadReadsPartsAndTheirCuts: a lab file's parts in file order, each
// with the parts it shares a cut with; a lab without parts: is refused.
func TestLoadReadsPartsAndTheirCuts(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "split.yaml")
	os.WriteFile(file, []byte(labtest.Lab("split-two-switches", "sp1")), 0o644)
	s, err := Load(file, campaign.Slurm, filepath.Join(dir, "out"), "/opt/atmlab")
	if err != nil {
		t.Fatal(err)
	}
	if s.Lab != "sp1" || !slices.Equal(s.Parts, []string{"left", "right"}) || !slices.Equal(s.Peers[0], []int{1}) || !slices.Equal(s.Peers[1], []int{0}) ||
		s.File != file || s.Out != filepath.Join(dir, "out") || s.Binary != "/opt/atmlab" || s.Port != DefaultPort || s.Engine != campaign.Slurm || len(s.Src) == 0 {
		t.Errorf("%+v", s)
	}
	if err := s.Check(); err != nil {
		t.Error(err)
	}
	whole := filepath.Join(dir, "whole.yaml")
	os.WriteFile(whole, []byte(labtest.Lab("two-hosts-switch", "sp2")), 0o644)
	if _, err := Load(whole, campaign.Local, "", ""); err == nil || !strings.Contains(err.Error(), "no parts:") {
		t.Errorf("a lab without parts: %v", err)
	}
	if err := Run(context.Background(), file, "mars", true, io.Discard); err == nil || !strings.Contains(err.Error(), `--on "mars"`) {
		t.Errorf("--on mars: %v", err)
	}
}

func compact(b []byte) string {
	var c bytes.Buffer
	json.Compact(&c, b)
	return c.String()
}
