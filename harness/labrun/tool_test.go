package labrun

import (
	"strings"
	"testing"

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

// Every tool of the lab file has a real and a virtual side: atmlab perf
// runs in virtual time as it is, iperf3 and iperf 2 only when the
// experiment says virtual: atmlab, else they say why they are skipped.
func TestEveryToolHasAVirtualSide(t *testing.T) {
	for _, name := range study.Tools {
		tool, ok := tools[name]
		if !ok {
			t.Fatalf("tool %s has no Tool", name)
		}
		run, err := tool.Virtual(&study.Experiment{})
		if name == study.ToolAtmlab {
			if run == nil || err != nil {
				t.Errorf("atmlab's virtual side: %v", err)
			}
			continue
		}
		if run != nil || err == nil || !strings.Contains(err.Error(), "skipped: "+name+" runs only in real time") {
			t.Errorf("%s without virtual: atmlab: %v", name, err)
		}
		if run, err := tool.Virtual(&study.Experiment{Virtual: study.ToolAtmlab}); run == nil || err != nil {
			t.Errorf("%s with virtual: atmlab: %v", name, err)
		}
	}
}
