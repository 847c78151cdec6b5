package report

import (
	"fmt"
	"strings"
)

// pointsSection is the report's table of each series, point by point, with
// its columns in plain words and a short glossary after them, so that a
// student can read them without the manual.
func pointsSection(p *page) (string, error) { return pointTables(p.all), nil }

// pointTables is pointsSection of series.
func pointTables(all []*series) string {
	var md strings.Builder
	for _, s := range all {
		unit := "Mbit/s"
		if isRR(s.Test) {
			unit = "transactions/s"
		}
		fmt.Fprintf(&md, "## %s\n\n", s.Key)
		if s.Path != "" {
			fmt.Fprintf(&md, "%s test by %s, %s.\n\n", s.Test, s.Tool, s.Path)
		}
		fmt.Fprintf(&md, "| %s |\n|---:|---:|---:|---:|---:|---:|---:|---:|---|\n", strings.Join(columns(unit), " | "))
		for _, a := range s.Points {
			late := ""
			if a.Late.Count > 0 {
				late = fmt.Sprintf("%.1f / %.1f / %.0f", float64(a.Late.P50)/1e3, float64(a.Late.P99)/1e3, float64(a.Late.Max)/1e3)
			}
			if a.N == 0 {
				fmt.Fprintf(&md, "| %d | 0 | | | | | | %s | %s |\n", a.Size, late, strings.Join(uniq(a.Errors), "; "))
				continue
			}
			of := ""
			ceil := ""
			if a.Ceiling > 0 {
				of, ceil = fmt.Sprintf("%.1f %%", 100*a.Mean/a.Ceiling), fmt.Sprintf("%.2f", a.Ceiling)
			}
			fmt.Fprintf(&md, "| %d | %d | %.2f | %.2f | %.2f | %s | %s | %s | %s |\n", a.Size, a.N, a.Mean, a.Min, a.Max, ceil, of, late,
				strings.Join(append(a.Confidence, uniq(append(a.Errors, a.Flags...))...), "; "))
		}
		md.WriteString("\n")
	}
	if len(all) > 0 {
		md.WriteString(glossary)
	}
	return md.String()
}

// columns are the point tables' column names.
func columns(unit string) []string {
	return []string{"message size (bytes)", "runs", "mean " + unit, "lowest", "highest", "theoretical ceiling Mbit/s",
		"share of the ceiling", "emulator late by, µs: typical / 1 frame in 100 / worst", "notes"}
}

// glossary explains the point tables' columns once, after them.
const glossary = `## Reading the tables

- message size: the bytes of payload the test hands its socket at a time: a UDP datagram's payload, or each write to a TCP connection.
- runs: how many times the point was measured; mean, lowest and highest are over those runs (the plots' points and error bars).
- theoretical ceiling: the most the path can carry at this size, worked out from its links' framing (Ethernet's headers and gaps, ATM's 53-octet cells); ` + "`atmlab calc`" + ` prints the same figure. No measurement can truly exceed it.
- share of the ceiling: the mean divided by the ceiling. 100 % means the link was the limit; less means something else held the point back, and the notes say what when the run could tell. A point above 100 % is always flagged in the notes with why it read high.
- emulator late by: how long after its due time the emulator let frames go during the point: typically (half the frames were later than this, half earlier), the 1 frame in 100 that was latest (the 99th percentile), and the worst. Large values mean the machine was too busy for the emulator to keep time.
- notes: flags (why a point may not show the link alone), errors and, when the experiment asked for one, the confidence reached.

`
