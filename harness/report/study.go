package report

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/atmlab/atmlab/harness/clock"
	"github.com/atmlab/atmlab/harness/labrun"
	"github.com/atmlab/atmlab/topologies/study"
)

// Verdict is a study's claim checked against a lab run's results.
type Verdict struct {
	Finding  *study.Finding
	Measured float64 // bits/s or transactions/s; 0 if not measured
	Baseline float64
	Change   float64 // (measured − baseline) / baseline, percent
	Status   string  // "reproduced", "not reproduced", "not judged" or "not measured"
	Limited  bool    // a point it rests on was held back by the emulator or the machine (labrun.Record.HeldBack)
	// Why says, for a claim not judged, what was measured instead of the
	// path: a point it rests on was held by a userspace SCTP stack's CPU
	// (labrun.ShortStackCPU), a figure of this machine, not of the study's.
	Why string
}

// Judge checks each finding against the records: the mean of the selected
// point's repetitions (the best size when the selector names none), the
// same for the baseline or the hardware figure, and whether the change
// between them lies in the finding's range. A claim with a point held by a
// userspace SCTP stack's CPU is not judged: that point measured the stack
// on this machine's shared cores, not the path (sandia-wan's SCTP claims
// over pion spread 19 points between quiet rounds, both points of each
// flagged every round), and the verdict says what the stack used.
func Judge(findings []*study.Finding, recs []labrun.Record) []Verdict {
	var out []Verdict
	for _, f := range findings {
		v := Verdict{Finding: f, Status: "not measured"}
		m, b := selectMean(f.Measured, recs), picked{}
		if f.Against != nil {
			b = selectMean(*f.Against, recs)
		} else {
			b.mean = f.Hardware.Normalized()
		}
		v.Measured, v.Baseline = m.mean, b.mean
		v.Limited = m.limited || b.limited
		if v.Measured > 0 && v.Baseline > 0 {
			v.Change = 100 * (v.Measured - v.Baseline) / v.Baseline
			v.Status = "not reproduced"
			if v.Change >= f.Change[0] && v.Change <= f.Change[1] {
				v.Status = "reproduced"
			}
			if cpu := max(m.stackCPU, b.stackCPU); cpu > 0 {
				v.Status = "not judged"
				v.Why = fmt.Sprintf("a point it rests on was held by the userspace SCTP stack's CPU (%s: its two ends used %.2f of a core together), not by the path", labrun.ShortStackCPU, cpu)
			}
		}
		out = append(out, v)
	}
	return out
}

// picked is what selectMean found for a selector.
type picked struct {
	mean     float64
	limited  bool    // the emulator or the machine may have held back a record averaged (labrun.Record.HeldBack)
	stackCPU float64 // the most CPU, in cores, of a record averaged that was held by a userspace SCTP stack's (labrun.ShortStackCPU); 0: none was
}

// selectMean is the mean figure of the records a selector picks; with no
// size, the best mean over the sizes (and socket buffers, if it names none).
// The emulator or the machine under it may have held back one of the
// records averaged (labrun.Record.HeldBack), or a userspace SCTP stack's CPU
// one (picked).
func selectMean(s study.Selector, recs []labrun.Record) picked {
	type key struct{ size, buf int }
	sums := map[key][2]float64{}
	flagged := map[key]bool{}
	stack := map[key]float64{}
	for _, r := range recs {
		if !matches(s, r) || r.Error != "" || r.Result.Error != "" {
			continue
		}
		k := key{r.Size, r.SockBuf}
		sums[k] = [2]float64{sums[k][0] + r.Result.Figure(), sums[k][1] + 1}
		flagged[k] = flagged[k] || r.HeldBack()
		if slices.Contains(r.ShortBy, labrun.ShortStackCPU) {
			stack[k] = max(stack[k], r.Result.CPU.Local+r.Result.CPU.Remote)
		}
	}
	var p picked
	for k, sn := range sums {
		if m := sn[0] / sn[1]; m > p.mean {
			p = picked{mean: m, limited: flagged[k], stackCPU: stack[k]}
		}
	}
	return p
}

// matches reports whether a selector picks a record's point.
func matches(s study.Selector, r labrun.Record) bool {
	return cmp.Or(r.Variant, "base") == s.Variant && r.Experiment == s.Experiment && r.Test == s.Test && r.Tool == s.Tool &&
		(s.Size <= 0 || r.Size == s.Size) && (s.SockBuf < 0 || r.SockBuf == s.SockBuf)
}

// notesSection is the lab file's notes.
func notesSection(p *page) (string, error) {
	if p.lab == nil || p.lab.Notes == "" {
		return "", nil
	}
	return "## Notes\n\n" + strings.TrimSpace(p.lab.Notes) + "\n\n", nil
}

// studySection renders what the lab file asks of the results beyond
// tables and plots: its grades and findings.
func studySection(p *page) (string, error) {
	if p.lab == nil {
		return "", nil
	}
	grades := byClock(p.recs, func(recs []labrun.Record) string { return gradesSection(p.lab.Grades, recs) })
	return grades + findingsSection(p.lab.Findings, p.recs), nil
}

// Stack names the transport implementation that measured a record: an
// SCTP test's own (its result's implementation), else the hosts' TCP/IP,
// the kernel's in real time and gVisor's netstack in virtual time.
func Stack(r labrun.Record) string {
	switch {
	case r.Result.Implementation != "":
		return r.Result.Implementation
	case ClockOf(r) == clock.Virtual:
		return "netstack (gVisor)"
	}
	return "kernel"
}

// gradesSection grades every stream experiment's tool, per variant, on the
// study's scale: the mean throughput of its points and the mean CPU its
// client (the sender) used, in percent of one core, each row naming the
// stack that measured it (Stack), since the tool and the stack decide a
// figure as much as the path does.
func gradesSection(g *study.Grades, recs []labrun.Record) string {
	if g == nil {
		return ""
	}
	type key struct{ variant, exp, tool, test, stack string }
	type sums struct{ bps, cpu, n float64 }
	var keys []key
	all := map[key]*sums{}
	for _, r := range recs {
		if isRR(r.Test) || r.Error != "" || r.Result.Error != "" {
			continue
		}
		k := key{cmp.Or(r.Variant, "base"), r.Experiment, r.Tool, r.Test, Stack(r)}
		if all[k] == nil {
			all[k] = &sums{}
			keys = append(keys, k)
		}
		s := all[k]
		s.bps += r.Result.ThroughputBps
		s.cpu += 100 * r.Result.CPU.Local
		s.n++
	}
	var b strings.Builder
	fmt.Fprintf(&b, "## Grades\n\nThe study's scale: bandwidth A ≥ %g, B ≥ %g, C ≥ %g, D ≥ %g Mbit/s, else F; CPU A ≤ %g, B ≤ %g, C ≤ %g, D ≤ %g %%, else F. "+
		"CPU is the sending tool's process (user + system) in percent of one core.\n\n"+
		"| variant | experiment | tool | test | stack | runs | mean Mbit/s | grade | mean CPU | grade |\n|---|---|---|---|---|---:|---:|:-:|---:|:-:|\n",
		g.Bandwidth[0], g.Bandwidth[1], g.Bandwidth[2], g.Bandwidth[3], g.CPU[0], g.CPU[1], g.CPU[2], g.CPU[3])
	for _, r := range g.Study {
		fmt.Fprintf(&b, "| the study | | %s | | | | %.1f | %s | %.0f %% | %s |\n", cell(r.Name),
			r.Bandwidth, study.Letter(r.Bandwidth, g.Bandwidth, true), r.CPU, study.Letter(r.CPU, g.CPU, false))
	}
	for _, k := range keys {
		s := all[k]
		mbps, cpu := s.bps/s.n/1e6, s.cpu/s.n
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %.0f | %.1f | %s | %.0f %% | %s |\n", k.variant, k.exp, k.tool, k.test, cell(k.stack), s.n,
			mbps, study.Letter(mbps, g.Bandwidth, true), cpu, study.Letter(cpu, g.CPU, false))
	}
	b.WriteString("\n")
	return b.String()
}

// findingsSection renders the verdicts as the report's claim-by-claim
// table: one verdict per clock the records were measured by, side by side
// after --clock both. A claim whose figure rests on real-host behaviour
// (RealHostReason) has its virtual-time verdict marked so, with the reason.
func findingsSection(findings []*study.Finding, recs []labrun.Record) string {
	if len(findings) == 0 {
		return ""
	}
	clocks := clocksIn(recs)
	if len(clocks) == 0 {
		clocks = []clock.Clock{clock.Real}
	}
	verdicts := map[clock.Clock][]Verdict{}
	for _, c := range clocks {
		verdicts[c] = Judge(findings, onClock(recs, c))
	}
	var b strings.Builder
	b.WriteString("## The study's findings, claim by claim\n\n" +
		"Each claim is checked by a rule written in the lab file: the change from the baseline to the measured figure must lie in the range given.")
	head, rule := "| # | claim | the study |", "|---:|---|---|"
	for _, c := range clocks {
		if len(clocks) > 1 || c == clock.Virtual {
			head += fmt.Sprintf(" atmlab, %s time | change (range) | verdict |", c)
		} else {
			head += " atmlab | change (range) | verdict |"
		}
		rule += "---|---|---|"
	}
	if slices.Contains(clocks, clock.Virtual) {
		b.WriteString(" In virtual time a claim whose figure rests on what only a real host does (Linux's TCP, a kernel's loopback, a real binary such as iperf3) is marked *real hosts only*, with the reason: its virtual-time verdict does not stand for the real one.")
	}
	b.WriteString("\n\n" + head + " why |\n" + rule + "---|\n")
	reproduced, notJudged := map[clock.Clock]int{}, map[clock.Clock]int{}
	realOnly := 0
	for i, f := range findings {
		reason := ""
		if slices.Contains(clocks, clock.Virtual) {
			if reason = RealHostReason(f, recs); reason != "" {
				realOnly++
			}
		}
		fmt.Fprintf(&b, "| %d | %s | %s |", i+1, cell(f.Claim), cell(f.Study))
		for _, c := range clocks {
			v := verdicts[c][i]
			var base string
			if f.Against != nil {
				base = f.Against.String() + ": " + figure(f.Against.Test, v.Baseline)
			} else {
				base = "hardware " + f.Hardware.Label()
			}
			change := fmt.Sprintf("(%+g … %+g %%)", f.Change[0], f.Change[1])
			if v.Status != "not measured" {
				change = fmt.Sprintf("%+.1f %% %s", v.Change, change)
			}
			verdict := v.Status
			switch v.Status {
			case "reproduced":
				verdict = "**reproduced**"
			case "not judged":
				verdict += ": " + v.Why
			}
			if v.Limited {
				verdict += " (a point was flagged: the emulator or this machine fell behind, see its table)"
			}
			if c == clock.Virtual && reason != "" {
				verdict += "; *real hosts only*: " + reason
			} else if v.Status == "reproduced" {
				reproduced[c]++
			}
			if v.Status == "not judged" {
				notJudged[c]++
			}
			fmt.Fprintf(&b, " %s: %s; against %s | %s | %s |", f.Measured.String(), figure(f.Measured.Test, v.Measured), base, change, cell(verdict))
		}
		fmt.Fprintf(&b, " %s |\n", cell(f.Why))
	}
	b.WriteString("\n")
	for _, c := range clocks {
		switch {
		case len(clocks) == 1 && c == clock.Real:
			fmt.Fprintf(&b, "%d of %d claims reproduced in this run.\n", reproduced[c], len(findings))
		case c == clock.Real:
			fmt.Fprintf(&b, "%d of %d claims reproduced in real time.\n", reproduced[c], len(findings))
		default:
			fmt.Fprintf(&b, "%d of %d claims reproduced in virtual time; %d rest on real hosts only.\n", reproduced[c], len(findings)-realOnly, realOnly)
		}
		if n := notJudged[c]; n > 0 {
			fmt.Fprintf(&b, "%d not judged in %s time: a point they rest on measured a userspace SCTP stack's CPU, not the path.\n", n, c)
		}
	}
	b.WriteString("\n")
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
