package labrun

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/atmlab/atmlab/internal/labtest"
	"github.com/atmlab/atmlab/topologies/labfile"
	"github.com/atmlab/atmlab/topologies/study"
)

// A server's ready line is seen when it is complete, however the server's
// writes cut it, and once; everything it wrote is kept.
func TestLineWatch(t *testing.T) {
	matches := 0
	w := newLineWatch(func(line string) bool { matches++; return strings.HasPrefix(line, perfReady) })
	seen := func() bool {
		select {
		case <-w.seen:
			return true
		default:
			return false
		}
	}
	for _, part := range []string{"starting\nperf server list", "ening on 0.0.0.0:12865"} {
		if _, err := w.Write([]byte(part)); err != nil {
			t.Fatal(err)
		}
		if seen() {
			t.Fatalf("ready before the line ended, after %q", part)
		}
	}
	w.Write([]byte("\nperf server listening on again\n"))
	if !seen() || matches != 2 {
		t.Fatalf("seen %v after %d lines matched, want the second line's match only", seen(), matches)
	}
	if got := w.String(); got != "starting\nperf server listening on 0.0.0.0:12865\nperf server listening on again" {
		t.Fatalf("kept %q", got)
	}
}

// Every tool has a name of its own, a real side and a virtual side: a
// test between virtual hosts (atmlab perf's, as it is), or, for a tool
// that runs only in real time (iperf3, iperf 2), the reason it is skipped
// unless the experiment says virtual: atmlab.
func TestEveryToolHasAVirtualSide(t *testing.T) {
	names := ToolNames()
	for _, want := range []string{study.DefaultTool, "iperf", "iperf3"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools %q lack %s (toolbox's methods)", names, want)
		}
	}
	for _, tool := range Tools {
		name := tool.Name()
		if ToolOf(name) != tool {
			t.Errorf("ToolOf(%q) is not the tool of that name: two tools share it", name)
		}
		run, err := tool.Virtual(&study.Experiment{})
		if run != nil && err == nil {
			continue // it runs in virtual time as it is
		}
		if name == study.DefaultTool {
			t.Errorf("atmlab's virtual side: %v", err)
		}
		if run != nil || err == nil || !strings.Contains(err.Error(), "skipped: "+name+" runs only in real time") {
			t.Errorf("%s without virtual: atmlab: %v", name, err)
		}
		if run, err := tool.Virtual(&study.Experiment{Virtual: study.DefaultTool}); run == nil || err != nil {
			t.Errorf("%s with virtual: atmlab: %v", name, err)
		}
	}
}

// A toolbox method of another shape than func() Tool is a mistake the
// registry says, naming the method.
func TestToolboxRefusesAMethodOfAnotherShape(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "badBox.Wrong is not a func() Tool") {
			t.Fatalf("recovered %v", r)
		}
	}()
	toolsOf(badBox{})
}

type badBox struct{}

func (badBox) Wrong() string { return "" }

// The lab file knows only the default tool's name: every other name its
// study gives (an experiment's, a reference's, a claim's) is checked
// against the tools here, at its line, as is virtual: on a tool that runs
// in virtual time as it is.
func TestCheckToolsNamesEveryBadToolAtItsLine(t *testing.T) {
	lab, err := labfile.Parse("bad.yaml", []byte(labtest.Lab("two-hosts", "x", `experiments:
  - {name: a, from: h1, to: h2, tests: [TCP_STREAM], tool: netperf}
  - {name: b, from: h1, to: h2, tests: [TCP_RR], virtual: atmlab}
  - {name: c, from: h1, to: h2, tests: [TCP_STREAM], tool: iperf3, virtual: atmlab}
reference:
  - {test: TCP_STREAM, tool: ttcp, value: 90, unit: Mbit/s, source: a book}
findings:
  - claim: c
    why: w
    measured: {experiment: a, test: TCP_STREAM, tool: no-such-tool}
    against: {experiment: c, test: TCP_STREAM, tool: iperf3}
    change: [0, 10]
`)))
	if err != nil {
		t.Fatal(err)
	}
	err = CheckTools(lab)
	use, realOnly := strings.Join(ToolNames(), ", "), strings.Join(realOnlyTools(), ", ")
	if !strings.Contains(realOnly, "iperf, iperf3") || strings.Contains(realOnly, study.DefaultTool) {
		t.Fatalf("tools that run only in real time: %q", realOnly)
	}
	want := []string{
		`bad.yaml:10: experiments[0].tool: "netperf": use ` + use,
		`bad.yaml:11: experiments[1].virtual: only an experiment whose tool has no virtual side of its own (` + realOnly + `) can run as atmlab's test in virtual time; remove virtual:`,
		`bad.yaml:14: reference[0].tool: "ttcp": use ` + use,
		`bad.yaml:18: findings[0].measured.tool: "no-such-tool": use ` + use,
	}
	if err == nil || err.Error() != strings.Join(want, "\n") {
		t.Errorf("got:\n%v\nwant:\n%s", err, strings.Join(want, "\n"))
	}
}

// A tool that sends only some UDP sizes says which in its own file: each
// size of an experiment's UDP tests outside its tool's is an error at the
// size's line, in a quick run's sizes too; one the lab file already
// refused is not told twice, and another tool's sizes are left alone.
func TestCheckToolsAsksEachToolItsUDPSizes(t *testing.T) {
	lab, err := labfile.Parse("bad.yaml", []byte(labtest.Lab("two-hosts", "x", `experiments:
  - {name: a, from: h1, to: h2, tool: iperf3, tests: [UDP_STREAM], sizes: [65535]}
  - {name: b, from: h1, to: h2, tool: iperf3, tests: [UDP_STREAM, TCP_STREAM], sizes: [8, 16, 65507]}
  - {name: c, from: h1, to: h2, tool: iperf3, tests: [TCP_STREAM], quick: {tests: [UDP_STREAM], sizes: [4]}}
  - {name: d, from: h1, to: h2, tests: [UDP_STREAM], sizes: [8, 65535]}
  - {name: e, from: h1, to: h2, tool: iperf3, tests: [TCP_STREAM], sizes: [8, 65535]}
`)))
	if err != nil {
		t.Fatal(err)
	}
	err = CheckTools(lab)
	want := []string{
		`bad.yaml:10: experiments[0].sizes: 65535 bytes with UDP_STREAM: iperf3 sends UDP blocks of 16 to 65507 bytes and refuses others; larger sizes for TCP tests go in an experiment of their own`,
		`bad.yaml:11: experiments[1].sizes: 8 bytes with UDP_STREAM: iperf3 sends UDP blocks of 16 to 65507 bytes and refuses others`,
		`bad.yaml:12: experiments[2].quick.sizes: 4 bytes with UDP_STREAM: iperf3 sends UDP blocks of 16 to 65507 bytes and refuses others`,
	}
	if err == nil || err.Error() != strings.Join(want, "\n") {
		t.Errorf("got:\n%v\nwant:\n%s", err, strings.Join(want, "\n"))
	}
	_, err = labfile.Parse("big.yaml", []byte(labtest.Lab("two-hosts", "x", `experiments:
  - {name: a, from: h1, to: h2, tool: iperf3, tests: [UDP_STREAM], sizes: [70000]}
`)))
	if want := `big.yaml:10: experiments[0].sizes: 70000 bytes with UDP_STREAM: a UDP message is at most 65535 bytes`; err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "iperf3 sends") {
		t.Errorf("a size no UDP message has: got %v, want only %q", err, want)
	}
}
