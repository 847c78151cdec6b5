package labrun

import (
	"strings"
	"testing"

	"github.com/atmlab/atmlab/harness/perf"
)

// Every point above its ceiling is flagged with why, however little above:
// 0.3 % over (a quick run's real-time points read so) as well as 2 %;
// one at its ceiling, or a rounding error above it, is not.
func TestJudgeFlagsEveryPointAboveItsCeiling(t *testing.T) {
	r, p, res, c := judging(t)
	for _, tc := range []struct {
		share float64
		flag  string
	}{
		{1.003, "100.3 % of the ceiling, above it: no link carries more than its ceiling; the 0.30 % excess is the measurement's: "},
		{1.02, "102.0 % of the ceiling, above it"},
		{1, ""},
		{1 + 1e-9, ""},
	} {
		rec := Record{Point: p, Result: res}
		rec.Result.ThroughputBps = tc.share * c
		r.judge(p, &rec)
		if (tc.flag == "") != (rec.Flag == "") || !strings.HasPrefix(rec.Flag, tc.flag) || rec.AboveCeiling != (tc.flag != "") {
			t.Errorf("%v of the ceiling: flag %q, above %v; want %q", tc.share, rec.Flag, rec.AboveCeiling, tc.flag)
		}
	}
	// iperf3's UDP figure is the receiver's reports': the reason says so
	rec := Record{Point: Point{Tool: "iperf3", Test: perf.UDPStream}, Ceiling: 100e6, Result: perf.Result{ThroughputBps: 100.25e6}}
	if why := rec.AboveCeilingReason(); !strings.Contains(why, "receiver's one-second reports") || !strings.Contains(why, "catches up") {
		t.Errorf("iperf3 UDP 0.25 %% over: %q", why)
	}
}
