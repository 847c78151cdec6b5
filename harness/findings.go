package harness

import (
	"cmp"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/atmlab/atmlab/topologies"
)

// Verdict is a study's claim checked against a lab run's results.
type Verdict struct {
	Finding  *topologies.Finding
	Measured float64 // bits/s or transactions/s; 0 if not measured
	Baseline float64
	Change   float64 // (measured − baseline) / baseline, percent
	Status   string  // "reproduced", "not reproduced" or "not measured"
}

// Judge checks each finding against the records: the mean of the selected
// point's repetitions (the best size when the selector names none), the
// same for the baseline or the hardware figure, and whether the change
// between them lies in the finding's range.
func Judge(findings []*topologies.Finding, recs []Record) []Verdict {
	var out []Verdict
	for _, f := range findings {
		v := Verdict{Finding: f, Status: "not measured"}
		v.Measured = selectMean(f.Measured, recs)
		if f.Against != nil {
			v.Baseline = selectMean(*f.Against, recs)
		} else {
			v.Baseline = f.Hardware.Normalized()
		}
		if v.Measured > 0 && v.Baseline > 0 {
			v.Change = 100 * (v.Measured - v.Baseline) / v.Baseline
			v.Status = "not reproduced"
			if v.Change >= f.Change[0] && v.Change <= f.Change[1] {
				v.Status = "reproduced"
			}
		}
		out = append(out, v)
	}
	return out
}

// selectMean is the mean figure of the records a selector picks; with no
// size, the best mean over the sizes (and socket buffers, if it names none).
func selectMean(s topologies.Selector, recs []Record) float64 {
	type key struct{ size, buf int }
	sums := map[key][2]float64{}
	for _, r := range recs {
		if cmp.Or(r.Variant, "base") != s.Variant || r.Experiment != s.Experiment || r.Test != s.Test || r.Tool != s.Tool ||
			r.Error != "" || r.Result.Error != "" || (s.Size > 0 && r.Size != s.Size) || (s.SockBuf >= 0 && r.SockBuf != s.SockBuf) {
			continue
		}
		k := key{r.Size, r.SockBuf}
		sums[k] = [2]float64{sums[k][0] + r.Result.Figure(), sums[k][1] + 1}
	}
	best := 0.0
	for _, sn := range sums {
		best = max(best, sn[0]/sn[1])
	}
	return best
}

// findingsSection renders the verdicts as the report's claim-by-claim
// table, from the findings of the lab file lab run copied into dir.
func findingsSection(dir string, recs []Record) string {
	lab, err := topologies.Load(filepath.Join(dir, "lab.yaml"))
	if err != nil || len(lab.Findings) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("## The study's findings, claim by claim\n\n" +
		"Each claim is checked by a rule written in the lab file: the change from the baseline to the measured figure must lie in the range given.\n\n" +
		"| # | claim | the study | atmlab | change (range) | verdict | why |\n|---:|---|---|---|---|---|---|\n")
	reproduced := 0
	for i, v := range Judge(lab.Findings, recs) {
		f := v.Finding
		base := "hardware " + f.Hardware.Label()
		if f.Against != nil {
			base = f.Against.String() + ": " + figure(f.Against.Test, v.Baseline)
		}
		change := fmt.Sprintf("(%+g … %+g %%)", f.Change[0], f.Change[1])
		if v.Status != "not measured" {
			change = fmt.Sprintf("%+.1f %% %s", v.Change, change)
		}
		verdict := v.Status
		if v.Status == "reproduced" {
			verdict = "**reproduced**"
			reproduced++
		}
		fmt.Fprintf(&b, "| %d | %s | %s | %s: %s; against %s | %s | %s | %s |\n", i+1, cell(f.Claim), cell(f.Study),
			f.Measured.String(), figure(f.Measured.Test, v.Measured), base, change, verdict, cell(f.Why))
	}
	fmt.Fprintf(&b, "\n%d of %d claims reproduced in this run.\n\n", reproduced, len(lab.Findings))
	return b.String()
}

// figure formats a test's figure: Mbit/s for streams, transactions/s for RR.
func figure(test string, v float64) string {
	switch {
	case v == 0:
		return "not measured"
	case isRR(test):
		return fmt.Sprintf("%.0f/s", v)
	}
	return fmt.Sprintf("%.2f Mbit/s", v/1e6)
}

// cell makes text safe inside a Markdown table cell.
func cell(s string) string { return strings.ReplaceAll(s, "|", "\\|") }
