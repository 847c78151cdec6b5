package report

import (
	"strings"
	"testing"

	"github.com/atmlab/atmlab/harness/labrun"
	"github.com/atmlab/atmlab/harness/perf"
)

// The report sets each path's ping, once per variant, beside the veth
// pair's; a run with no path pinged has no such section.
func TestPingSection(t *testing.T) {
	recs := []labrun.Record{
		{Point: labrun.Point{From: "a2", To: "a4", Experiment: "s", Test: perf.TCPStream}, PathRTT: 131, VethRTT: 22.5},
		{Point: labrun.Point{From: "a2", To: "a4", Experiment: "s", Test: perf.UDPStream}, PathRTT: 131, VethRTT: 22.5},
		{Point: labrun.Point{From: "a2", To: "a2", Experiment: "loop", Test: perf.TCPStream}, VethRTT: 22.5},
	}
	sec := pingNote(recs)
	if !strings.Contains(sec, "| base | a2 -> a4 | 131.0 µs | 22.5 µs | +108.5 µs |\n\n") || strings.Count(sec, "| base |") != 1 {
		t.Errorf("report section:\n%s\nwant one row: base a2 -> a4 131.0 against 22.5 µs, +108.5", sec)
	}
	if pingNote(recs[2:]) != "" {
		t.Error("a report with no path pinged has a latency section")
	}
}
