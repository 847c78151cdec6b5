package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/atmlab/atmlab/harness/clock"
	"github.com/atmlab/atmlab/harness/labrun"
	"github.com/atmlab/atmlab/topologies/study"
)

// A lab run with --clock both measures every point in real time (the
// kernel's hosts in namespaces) and in virtual time (netstack hosts in
// model time). The report then shows the two side by side: every point's
// figures and their difference, and every claim's verdict in each mode.

// ClockOf is the clock a record was measured by (results.jsonl leaves
// real time out).
func ClockOf(r labrun.Record) clock.Clock {
	c, _ := clock.Parse(r.Clock) // the results folder's reader checked it
	return c
}

// clocksIn are the clocks of the records, real first.
func clocksIn(recs []labrun.Record) []clock.Clock {
	var out []clock.Clock
	for _, c := range clock.All {
		if slices.ContainsFunc(recs, func(r labrun.Record) bool { return ClockOf(r) == c }) {
			out = append(out, c)
		}
	}
	return out
}

// onClock are the records measured by clock.
func onClock(recs []labrun.Record, c clock.Clock) []labrun.Record {
	var out []labrun.Record
	for _, r := range recs {
		if ClockOf(r) == c {
			out = append(out, r)
		}
	}
	return out
}

// realTimeOnly is the phrase a virtual-time point's error carries when it
// could not run there: an iperf tool, a host's loopback.
const realTimeOnly = "run with --clock real"

// RealHostReason says why a claim's virtual-time verdict cannot stand for
// the real one, or "" if it can: the finding's real_host: in the lab file,
// else the error of a virtual-time point it rests on that could run in
// real time only (an iperf3 or iperf experiment, a host's loopback).
func RealHostReason(f *study.Finding, recs []labrun.Record) string {
	if f.RealHost != "" {
		return f.RealHost
	}
	sels := []study.Selector{f.Measured}
	if f.Against != nil {
		sels = append(sels, *f.Against)
	}
	for _, s := range sels {
		for _, r := range recs {
			if e := firstNonEmpty(r.Error, r.Result.Error); ClockOf(r) == clock.Virtual && matches(s, r) && strings.Contains(e, realTimeOnly) {
				return e
			}
		}
	}
	return ""
}

// byClock renders section once per clock of the records, each heading
// naming its clock, when there are two; as it is when there is one.
func byClock(recs []labrun.Record, section func([]labrun.Record) string) string {
	clocks := clocksIn(recs)
	if len(clocks) < 2 {
		return section(recs)
	}
	var b strings.Builder
	for _, c := range clocks {
		s := section(onClock(recs, c))
		if head, rest, ok := strings.Cut(s, "\n"); ok && strings.HasPrefix(head, "## ") {
			s = head + " (" + c.String() + " time)\n" + rest
		}
		b.WriteString(s)
	}
	return b.String()
}

// clocksSection is every point measured both ways: the mean figure of its
// repetitions in real and in virtual time and the difference, (virtual −
// real) / real; empty unless the records hold both clocks.
func clocksSection(p *page) (string, error) { return clocksTable(p.recs), nil }

// clocksTable is clocksSection of records.
func clocksTable(recs []labrun.Record) string {
	if len(clocksIn(recs)) < 2 {
		return ""
	}
	type key struct {
		variant, exp, test, tool string
		size, buf                int
	}
	type side struct {
		sum  float64
		n    int
		errs []string
		by   string // the tool that stood in (virtual: atmlab)
	}
	var keys []key
	all := map[key]*[2]side{}
	for _, r := range recs {
		k := key{cmp.Or(r.Variant, "base"), r.Experiment, r.Test, r.Tool, r.Size, r.SockBuf}
		if all[k] == nil {
			all[k] = &[2]side{}
			keys = append(keys, k)
		}
		s := &all[k][0]
		if ClockOf(r) == clock.Virtual {
			s = &all[k][1]
		}
		if e := firstNonEmpty(r.Error, r.Result.Error); e != "" {
			s.errs = append(s.errs, e)
			continue
		}
		s.sum += r.Result.Figure()
		s.n++
		s.by = cmp.Or(s.by, r.MeasuredBy)
	}
	var b strings.Builder
	b.WriteString("## Real and virtual time, point by point\n\n" +
		"Each point measured both ways (`--clock both`): the mean of its repetitions with the kernel's hosts in namespaces (real) and with netstack hosts in model time (virtual), and the difference (virtual − real) / real. " +
		"The two share every link, switch, ATM and router model and every `cpu:` limit; they differ in the hosts' TCP/IP stack (netstack's TCP is not Linux's: initial window, delayed ACK, buffer auto-tuning, CUBIC's details) and in what a host costs (in virtual time only its `cpu:` model, in real time this machine's CPU as well). " +
		"An iperf3 or iperf experiment runs in virtual time only as atmlab's own test, when it says `virtual: atmlab` (marked *by atmlab*).\n\n" +
		"| variant | experiment | test | tool | size (B) | sockbuf | real | virtual | difference |\n|---|---|---|---|---:|---:|---:|---:|---:|\n")
	for _, k := range keys {
		sides := all[k]
		scale, unit := 1e6, " Mbit/s"
		if isRR(k.test) {
			scale, unit = 1, "/s"
		}
		var fig [2]string
		for i, s := range sides {
			switch {
			case s.n > 0:
				fig[i] = fmt.Sprintf("%.2f%s", s.sum/float64(s.n)/scale, unit)
				if s.by != "" {
					fig[i] += " (by " + s.by + ")"
				}
			case len(s.errs) > 0:
				fig[i] = cell(strings.Join(uniq(s.errs), "; "))
			}
		}
		diff := ""
		if r, v := sides[0], sides[1]; r.n > 0 && v.n > 0 {
			rm, vm := r.sum/float64(r.n), v.sum/float64(v.n)
			if rm > 0 {
				diff = fmt.Sprintf("%+.1f %%", 100*(vm-rm)/rm)
			} else if vm != rm {
				diff = fmt.Sprintf("%+.2f%s", (vm-rm)/scale, unit)
			}
			if math.IsNaN(vm - rm) {
				diff = ""
			}
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %d | %d | %s | %s | %s |\n", k.variant, k.exp, k.test, k.tool, k.size, k.buf, fig[0], fig[1], diff)
	}
	b.WriteString("\n")
	return b.String()
}
