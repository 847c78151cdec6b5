package labrun

import (
	"fmt"
	"strings"
	"testing"

	"github.com/atmlab/atmlab/topologies"
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

// Every tool has a name, a real side and a virtual side: atmlab perf
// runs in virtual time as it is, iperf3 and iperf 2 only when the
// experiment says virtual: atmlab, else they say why they are skipped.
func TestEveryToolHasAVirtualSide(t *testing.T) {
	if got := strings.Join(ToolNames(), " "); got != "atmlab iperf iperf3" {
		t.Fatalf("tools %q, want atmlab, iperf and iperf3 (toolbox's methods)", got)
	}
	for _, tool := range Tools {
		name := tool.Name()
		if ToolOf(name) != tool {
			t.Errorf("ToolOf(%q) is not the tool of that name", name)
		}
		run, err := tool.Virtual(&study.Experiment{})
		if name == study.DefaultTool {
			if run == nil || err != nil {
				t.Errorf("atmlab's virtual side: %v", err)
			}
			continue
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
	lab, err := topologies.Parse("bad.yaml", []byte(`name: x
topology:
  nodes:
    h1: {kind: host, ipv4: 10.0.0.1/24}
    h2: {kind: host, ipv4: 10.0.0.2/24}
  links:
    - endpoints: ["h1:eth0", "h2:eth0"]
experiments:
  - {name: a, from: h1, to: h2, tests: [TCP_STREAM], tool: netperf}
  - {name: b, from: h1, to: h2, tests: [TCP_RR], virtual: atmlab}
  - {name: c, from: h1, to: h2, tests: [TCP_STREAM], tool: iperf3, virtual: atmlab}
reference:
  - {test: TCP_STREAM, tool: ttcp, value: 90, unit: Mbit/s, source: a book}
findings:
  - claim: c
    why: w
    measured: {experiment: a, test: TCP_STREAM, tool: nuttcp}
    against: {experiment: c, test: TCP_STREAM, tool: iperf3}
    change: [0, 10]
`))
	if err != nil {
		t.Fatal(err)
	}
	err = CheckTools(lab)
	want := []string{
		`bad.yaml:9: experiments[0].tool: "netperf": use atmlab, iperf, iperf3`,
		`bad.yaml:10: experiments[1].virtual: only an experiment whose tool has no virtual side of its own (iperf, iperf3) can run as atmlab's test in virtual time; remove virtual:`,
		`bad.yaml:13: reference[0].tool: "ttcp": use atmlab, iperf, iperf3`,
		`bad.yaml:17: findings[0].measured.tool: "nuttcp": use atmlab, iperf, iperf3`,
	}
	if err == nil || err.Error() != strings.Join(want, "\n") {
		t.Errorf("got:\n%v\nwant:\n%s", err, strings.Join(want, "\n"))
	}
}
