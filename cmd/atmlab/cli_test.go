package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/atmlab/atmlab/backend/linux"
	"github.com/atmlab/atmlab/harness/labrun"
	"github.com/atmlab/atmlab/internal/complete"
	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/labfile"
)

// fakeLabs makes ls, inspect and completion see the labs in views as
// running (the lab sw100 of topologies/sw100.yaml, unless given), with no
// kernel.
func fakeLabs(t *testing.T, views ...topologies.View) {
	t.Helper()
	if len(views) == 0 {
		lab, err := labfile.Load("../../topologies/sw100.yaml")
		if err != nil {
			t.Fatal(err)
		}
		views = append(views, lab.View())
	}
	oldRunning, oldTopology, oldNow := runningLabs, labTopology, now
	t.Cleanup(func() { runningLabs, labTopology, now = oldRunning, oldTopology, oldNow })
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	now = func() time.Time { return start.Add(90 * time.Second) }
	runningLabs = func() ([]linux.RunningLab, error) {
		var out []linux.RunningLab
		for _, v := range views {
			out = append(out, linux.RunningLab{Name: v.Lab, Owner: "ana", Since: start, Web: "http://127.0.0.1:8080/"})
		}
		return out, nil
	}
	labTopology = func(_ context.Context, lab string) (*topologies.View, error) {
		for _, v := range views {
			if v.Lab == lab {
				return &v, nil
			}
		}
		return nil, errors.New("lab " + lab + " is not running")
	}
}

// completions runs cobra's hidden __complete verb in-process, as a shell's
// completion script does, and returns the completions it offers.
func completions(t *testing.T, words ...string) []string {
	t.Helper()
	out, _, err := run(t, append([]string{cobra.ShellCompRequestCmd}, words...)...)
	if err != nil {
		t.Fatalf("__complete %q: %v", words, err)
	}
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if l != "" && !strings.HasPrefix(l, ":") {
			got = append(got, strings.SplitN(l, "\t", 2)[0])
		}
	}
	return got
}

func TestVersionFlagPrintsVersionCommitAndGo(t *testing.T) {
	old, oldCommit := version, commit
	t.Cleanup(func() { version, commit = old, oldCommit })
	version, commit = "v1.2.3", "0123456789ab"
	for _, a := range [][]string{{"--version"}, {"version"}} {
		out, _, err := run(t, a...)
		if err != nil || !strings.Contains(out, "atmlab v1.2.3 (commit 0123456789ab, go1.") {
			t.Errorf("%v: %v %q", a, err, out)
		}
	}
	out, _, err := run(t, "version", "-o", "json")
	var b labrun.Build
	if err != nil || json.Unmarshal([]byte(out), &b) != nil || b.Version != "v1.2.3" || b.Commit != "0123456789ab" || !strings.HasPrefix(b.Go, "go1.") {
		t.Errorf("version -o json: %v %q", err, out)
	}
}

// Without the linker's values, the build stamp or "(devel)"/"unknown"
// stand in: never an empty field.
func TestVersionWithoutLinkerValuesIsNeverEmpty(t *testing.T) {
	old, oldCommit := version, commit
	t.Cleanup(func() { version, commit = old, oldCommit })
	version, commit = "", ""
	b := labrun.ReadBuild(version, commit)
	if b.Version == "" || b.Commit == "" || b.Go == "" {
		t.Errorf("build info %+v has an empty field", b)
	}
}

// The Makefile's build sets the very variables --version reads.
func TestMakefileStampsVersionAndCommit(t *testing.T) {
	mk, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"-X main.version=$(VERSION)", "-X main.commit=$(COMMIT)", "git describe"} {
		if !bytes.Contains(mk, []byte(want)) {
			t.Errorf("Makefile lacks %q", want)
		}
	}
}

func TestCompletionOffersRunningLabsHostsAndLinkEnds(t *testing.T) {
	other := topologies.View{Lab: "atm1", Nodes: []topologies.ViewNode{{Name: "a", Kind: topologies.KindHost}}}
	fakeLabs(t)
	lab, _ := labfile.Load("../../topologies/sw100.yaml")
	fakeLabs(t, lab.View(), other)
	for _, c := range []struct {
		words []string
		want  []string
	}{
		{[]string{"exec", ""}, []string{"atm1", "sw100"}},
		{[]string{"exec", "s"}, []string{"sw100"}},
		{[]string{"exec", "sw100", ""}, []string{"h1", "h2"}}, // hosts only: exec enters no switch
		{[]string{"stats", ""}, []string{"atm1", "sw100"}},
		{[]string{"web", "a"}, []string{"atm1"}},
		{[]string{"inspect", "sw"}, []string{"sw100"}},
		{[]string{"capture", "sw100", ""}, []string{"h1:eth0", "h2:eth0", "sw1:p1", "sw1:p2"}},
		{[]string{"set", "sw100", "sw1"}, []string{"sw1:p1", "sw1:p2"}},
		{[]string{"set", "sw100", "h1:eth0", ""}, complete.SetKeys},
		{[]string{"set", "sw100", "h1:eth0", "delay=20ms", "l"}, []string{"loss=", "limit="}},
		{[]string{"set", "sw100", "h1:eth0", "--direction", ""}, []string{"h1:eth0", "sw1:p1"}},
		{[]string{"exec", "nosuch", ""}, nil},
	} {
		if got := completions(t, c.words...); !slices.Equal(got, c.want) {
			t.Errorf("complete %q: %q, want %q", c.words, got, c.want)
		}
	}
}

func TestCompletionOffersLabFilesWhereAVerbTakesOne(t *testing.T) {
	fakeLabs(t)
	for _, verb := range [][]string{{"up"}, {"validate"}, {"lab", "run"}, {"inspect"}} {
		out, _, err := run(t, append(append([]string{cobra.ShellCompRequestCmd}, verb...), "topologies/")...)
		// 8 is cobra.ShellCompDirectiveFilterFileExt: the shell offers *.yaml and *.yml
		if err != nil || !strings.Contains(out, "yaml\nyml\n:8\n") {
			t.Errorf("complete %v: %v %q", verb, err, out)
		}
	}
}

func TestLsListsRunningLabs(t *testing.T) {
	fakeLabs(t)
	out, _, err := run(t, "ls")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "NAME") || !strings.Contains(lines[0], "LIVE VIEW") {
		t.Fatalf("ls:\n%s", out)
	}
	for _, want := range []string{"sw100", "ana", "h1,h2,sw1", "1m30s", "http://127.0.0.1:8080/"} {
		if !strings.Contains(lines[1], want) {
			t.Errorf("ls row lacks %q: %q", want, lines[1])
		}
	}
	out, _, err = run(t, "ls", "-o", "json")
	var rows []linux.Listed
	if err != nil || json.Unmarshal([]byte(out), &rows) != nil || len(rows) != 1 || rows[0].Name != "sw100" ||
		len(rows[0].Nodes) != 3 || rows[0].Uptime != "1m30s" || rows[0].Owner != "ana" {
		t.Errorf("ls -o json: %v %q", err, out)
	}
}

func TestLsWithNoLabSaysSo(t *testing.T) {
	fakeLabs(t, []topologies.View{}...)
	runningLabs = func() ([]linux.RunningLab, error) { return nil, nil }
	out, _, err := run(t, "ls")
	if err != nil || !strings.Contains(out, "no lab is running") {
		t.Errorf("ls: %v %q", err, out)
	}
	out, _, err = run(t, "ls", "-o", "json")
	if err != nil || strings.TrimSpace(out) != "[]" {
		t.Errorf("ls -o json: %v %q", err, out)
	}
}

func TestInspectShowsARunningLab(t *testing.T) {
	fakeLabs(t)
	out, _, err := run(t, "inspect", "sw100")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"lab sw100: 3 nodes, 2 links", "h1    host    eth0 10.0.0.1/24", "sw1   switch", "h1:eth0 — sw1:p1  100M"} {
		if !strings.Contains(out, want) {
			t.Errorf("inspect lacks %q:\n%s", want, out)
		}
	}
	if _, _, err := run(t, "inspect", "nosuch"); err == nil || !strings.Contains(err.Error(), "not running") {
		t.Errorf("inspect of no running lab: %v", err)
	}
}

// A lab file is inspected without building anything: an ATM link shows
// its PHY, AAL and encapsulation, and -o json is the live view's topology.
func TestInspectReadsALabFileWithoutRunningIt(t *testing.T) {
	file := filepath.Join(t.TempDir(), "atm.yaml")
	os.WriteFile(file, []byte("name: atmx\ntopology:\n  nodes:\n    h1: {kind: host, ipv4: 10.0.0.1/24}\n    h2: {kind: host, ipv4: 10.0.0.2/24}\n"+
		"  links:\n    - endpoints: [\"h1:eth0\", \"h2:eth0\"]\n      atm: {phy: oc3}\n      impair: {delay: 5ms}\n"), 0o644)
	out, _, err := run(t, "inspect", file)
	if err != nil || !strings.Contains(out, "lab atmx: 2 nodes, 1 links") || !strings.Contains(out, "oc3 aal5 llc") || !strings.Contains(out, "delay 5ms") ||
		!strings.Contains(out, "h1    eth0 0/") {
		t.Fatalf("inspect %s: %v\n%s", file, err, out)
	}
	out, _, err = run(t, "inspect", "-o", "json", file)
	var v topologies.View
	if err != nil || json.Unmarshal([]byte(out), &v) != nil || v.Lab != "atmx" || len(v.Links) != 1 || v.Links[0].PHY != "oc3" {
		t.Errorf("inspect -o json: %v %q", err, out)
	}
	if _, _, err := run(t, "inspect", filepath.Join(t.TempDir(), "missing.yaml")); err == nil || !strings.Contains(err.Error(), "missing.yaml") {
		t.Errorf("inspect of a missing file: %v", err)
	}
}

// A lab file's MPLS routers show the label bindings the built network has.
func TestInspectShowsMPLSLabels(t *testing.T) {
	out, _, err := run(t, "inspect", "../../topologies/gns3-mpls.yaml")
	if err != nil || !strings.Contains(out, "MPLS LABELS") || !strings.Contains(out, "r1    push ") || !strings.Contains(out, ": pop via ") {
		t.Errorf("inspect gns3-mpls.yaml: %v\n%s", err, out)
	}
}

// `atmlab lab FILE` (run forgotten) is an error that says what was meant,
// not the group's help and exit 0.
func TestLabWithoutVerbRefusesAFile(t *testing.T) {
	_, _, err := run(t, "lab", "topologies/sw100.yaml")
	var u usageError
	if err == nil || !errors.As(err, &u) || !strings.Contains(err.Error(), `unknown command "topologies/sw100.yaml" for "atmlab lab"`) ||
		!strings.Contains(err.Error(), "atmlab lab run topologies/sw100.yaml") {
		t.Errorf("lab FILE: %v", err)
	}
	if out, _, err := run(t, "lab"); err != nil || !strings.Contains(out, "run") {
		t.Errorf("lab alone: %v %q", err, out)
	}
}

// An argument mistake names the whole command: `lab run`, not `run`.
func TestArgumentErrorNamesTheWholeCommand(t *testing.T) {
	_, _, err := run(t, "lab", "run")
	if err == nil || !strings.Contains(err.Error(), "see atmlab lab run --help") {
		t.Errorf("lab run without a file: %v", err)
	}
}

// Every verb honours -o or refuses the formats it lacks.
func TestOutputFormatAVerbLacksIsRefused(t *testing.T) {
	for _, a := range [][]string{{"stats", "x", "-o", "csv"}, {"up", "x.yaml", "-o", "json"}, {"ls", "-o", "csv"}, {"exec", "x", "h1", "-o", "json"}} {
		_, _, err := run(t, a...)
		var u usageError
		if err == nil || !errors.As(err, &u) || !strings.Contains(err.Error(), "not supported") {
			t.Errorf("%v: %v, want a usage error saying the format is not supported", a, err)
		}
	}
	root := newRoot()
	for path := range outputs {
		if c, _, err := root.Find(strings.Fields(path)[1:]); err != nil || c.CommandPath() != path {
			t.Errorf("outputs names %q, which is no command", path)
		}
	}
}

// web's address flags are named as up's, lab run's and calc's; the old
// names still work.
func TestWebFlagsHaveOneNameAndTheOldStillWork(t *testing.T) {
	for _, flags := range [][]string{{"--web", "127.0.0.1:0", "--web-public"}, {"--listen", "127.0.0.1:0", "--public"}} {
		_, _, err := run(t, append([]string{"web", "nosuch"}, flags...)...)
		var u usageError
		if err == nil || errors.As(err, &u) || strings.Contains(err.Error(), "flag") {
			t.Errorf("web %v: %v, want the missing lab's error, not a flag error", flags, err)
		}
	}
	for _, verb := range [][]string{{"up"}, {"lab", "run"}, {"calc"}, {"web"}} {
		c, _, _ := newRoot().Find(verb)
		if c.Flags().Lookup("web") == nil || c.Flags().Lookup("web-public") == nil {
			t.Errorf("%v lacks --web or --web-public", verb)
		}
	}
}

func TestHelpPointsToDocsThatExist(t *testing.T) {
	out, _, _ := run(t, "--help")
	if strings.Contains(out, "DESIGN.md") || !strings.Contains(out, "docs/") {
		t.Errorf("atmlab --help:\n%s", out)
	}
	if _, err := os.Stat("../../docs/cli/atmlab.md"); err != nil {
		t.Error(err)
	}
}

// exec with no command is not an argument error (it opens a shell).
func TestExecTakesNoCommand(t *testing.T) {
	c, _, _ := newRoot().Find([]string{"exec"})
	if err := c.Args(c, []string{"sw100", "h1"}); err != nil {
		t.Errorf("exec LAB NODE: %v", err)
	}
	if err := c.Args(c, []string{"sw100"}); err == nil {
		t.Error("exec LAB: no error")
	}
}
