// Package report renders a results folder as report.md and a
// self-contained report.html: tables, plots (gonum plot, the only package
// of atmlab that imports it), the lab's findings and grades, the sweep grid
// and the comparison by clock.
package report

import (
	"fmt"
	"html"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/plot/plotter"

	"github.com/atmlab/atmlab/emulator/hist"
	"github.com/atmlab/atmlab/harness/labrun"
	"github.com/atmlab/atmlab/harness/perf"
	"github.com/atmlab/atmlab/harness/results"
)

// series is one line of a plot: a test of an experiment with one tool and
// socket buffer, over message sizes.
type series struct {
	Key        string // experiment · test · tool · sockbuf
	Experiment string
	Test       string
	Tool       string
	Points     []agg // by size, ascending
	Ceiling    bool  // whether points carry a ceiling
	// The first record's path, for the theory line.
	Variant, From, To string
	Path              string      // the hosts and links between them (theory.PathName), if known
	Theory            plotter.XYs // the ceiling at every byte between the points (ceilingLine), if known
}

// agg is the repetitions of one point.
type agg struct {
	Size           int
	N              int
	Mean, Min, Max float64 // the main figure: Mbit/s or transactions/s
	Ceiling        float64 // Mbit/s
	Errors         []string
	Flags          []string
	Confidence     []string // each record's confidence reached, when its experiment asked for one
	// Late is the emulator's release lateness, the worst of the
	// repetitions' at each quantile; Count 0 if none was recorded.
	Late hist.Summary
}

func group(recs []labrun.Record) []*series {
	byKey := map[string]*series{}
	var order []string
	for _, r := range recs {
		key := fmt.Sprintf("%s · %s · %s", r.Experiment, r.Test, r.Tool)
		if r.Variant != "" && r.Variant != "base" {
			key = r.Variant + " · " + key
		}
		if r.SockBuf > 0 {
			key += fmt.Sprintf(" · sockbuf %d", r.SockBuf)
		}
		if r.Clock != "" { // a virtual-time series beside its real-time one
			key += " · " + r.Clock + " time"
		}
		s := byKey[key]
		if s == nil {
			s = &series{Key: key, Experiment: r.Experiment, Test: r.Test, Tool: r.Tool, Variant: r.Variant, From: r.From, To: r.To}
			byKey[key] = s
			order = append(order, key)
		}
		size := r.Size
		if size == 0 {
			size = max(r.Result.Spec.Message, r.Result.Spec.Request)
		}
		i := slices.IndexFunc(s.Points, func(a agg) bool { return a.Size == size })
		if i < 0 {
			s.Points = append(s.Points, agg{Size: size, Min: math.Inf(1), Max: math.Inf(-1)})
			i = len(s.Points) - 1
		}
		a := &s.Points[i]
		if l := r.Lateness; l != nil && l.Count > 0 {
			a.Late = hist.Summary{Count: a.Late.Count + l.Count, P50: max(a.Late.P50, l.P50), P99: max(a.Late.P99, l.P99), Max: max(a.Late.Max, l.Max)}
		}
		if e := firstNonEmpty(r.Error, r.Result.Error); e != "" {
			a.Errors = append(a.Errors, e)
			continue
		}
		v := r.Result.Figure()
		if !isRR(r.Test) {
			v /= 1e6
		}
		a.Mean = (a.Mean*float64(a.N) + v) / float64(a.N+1)
		a.N++
		a.Min, a.Max = math.Min(a.Min, v), math.Max(a.Max, v)
		if r.Ceiling > 0 {
			a.Ceiling = r.Ceiling / 1e6
			s.Ceiling = true
		}
		if r.Flag != "" {
			a.Flags = append(a.Flags, r.Flag)
		}
		if why := aboveCeiling(r); why != "" {
			a.Flags = append(a.Flags, why)
		}
		if c := r.Result.Confidence; c != nil {
			a.Confidence = append(a.Confidence, confidenceNote(c, isRR(r.Test)))
		}
	}
	var out []*series
	for _, k := range order {
		s := byKey[k]
		slices.SortFunc(s.Points, func(a, b agg) int { return a.Size - b.Size })
		out = append(out, s)
	}
	return out
}

// confidenceNote says what a point's confidence: reached, for the notes
// column: met or not, after how many runs, the width and the interval.
func confidenceNote(c *perf.ConfidenceResult, rr bool) string {
	met := "met"
	if !c.Met {
		met = "**not met**"
	}
	interval := ""
	if c.Interval != nil {
		lo, hi := c.Interval[0], c.Interval[1]
		if !rr { // bit/s: Mbit/s as the table
			lo, hi = lo/1e6, hi/1e6
		}
		interval = fmt.Sprintf(", interval %.2f–%.2f", lo, hi)
	}
	return fmt.Sprintf("%d %% confidence within ±%.2g %%: %s after %d runs (±%.2f %%%s)", c.Level, 50*c.Width, met, c.Iterations, 50*c.Achieved, interval)
}

func isRR(test string) bool { return strings.HasSuffix(test, "_RR") || test == perf.TCPCRR }

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

func uniq(s []string) []string {
	slices.Sort(s)
	return slices.Compact(s)
}

// writeHTML renders the Markdown tables as HTML with the SVG figures inlined,
// so the page is one self-contained file.
func writeHTML(dir *results.Folder, title, md string, figs []string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "<!doctype html><html><head><meta charset=\"utf-8\"><title>atmlab report: %s</title>\n<style>body{font-family:sans-serif;max-width:60em;margin:2em auto}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.2em .5em;text-align:right}td:last-child{text-align:left}</style></head><body>\n", html.EscapeString(title))
	inTable := false
	for _, line := range strings.Split(md, "\n") {
		switch {
		case strings.HasPrefix(line, "# "):
			fmt.Fprintf(&b, "<h1>%s</h1>\n", html.EscapeString(line[2:]))
		case strings.HasPrefix(line, "## "):
			fmt.Fprintf(&b, "<h2>%s</h2>\n", html.EscapeString(line[3:]))
		case strings.HasPrefix(line, "!["):
			name := line[2:strings.Index(line, "]")]
			svg, err := dir.ReadFile(name+".svg", 0)
			if err != nil {
				return err
			}
			s := string(svg)
			if i := strings.Index(s, "<svg"); i >= 0 {
				s = s[i:]
			}
			b.WriteString("<figure>" + s + "</figure>\n")
		case strings.HasPrefix(line, "|"):
			cells := strings.Split(strings.Trim(line, "|"), "|")
			if strings.HasPrefix(strings.TrimSpace(cells[0]), "---") || strings.HasPrefix(strings.TrimSpace(cells[0]), "--:") {
				continue
			}
			tag := "td"
			if !inTable {
				b.WriteString("<table>\n")
				inTable, tag = true, "th"
			}
			b.WriteString("<tr>")
			for _, c := range cells {
				fmt.Fprintf(&b, "<%s>%s</%s>", tag, html.EscapeString(strings.TrimSpace(c)), tag)
			}
			b.WriteString("</tr>\n")
		default:
			if inTable {
				b.WriteString("</table>\n")
				inTable = false
			}
			if line != "" {
				fmt.Fprintf(&b, "<p>%s</p>\n", html.EscapeString(line))
			}
		}
	}
	b.WriteString("</body></html>\n")
	return dir.WriteFile("report.html", []byte(b.String()), 0o644)
}
