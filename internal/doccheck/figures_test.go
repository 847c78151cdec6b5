package doccheck

import (
	"slices"
	"testing"
)

// TestFigureTablesNameDateCommandAndLoad checks that every table of
// measured figures in the manual says, in its section, when it was taken,
// by which command and at what load (or that the load was not noted), so
// that a reader can tell `make bench`'s rows from a dated earlier run's.
func TestFigureTablesNameDateCommandAndLoad(t *testing.T) {
	r := root(t)
	for name, p := range pages(t, r) {
		for _, line := range p.UnsourcedFigureTables() {
			t.Errorf("%s:%d: a table of measured figures whose section gives no date, command (in backticks) or load: say when, how and at what load it was measured", name, line)
		}
	}
}

// The rule's known answers: a sourced table passes, each missing part is
// found, a theory table and a command's output in a code block are left
// alone, and a heading starts a new section.
func TestUnsourcedFigureTablesKnownAnswers(t *testing.T) {
	const row = "| measurement | atmlab | side by side | ratio |\n|---|---|---|---|\n| TCP at 1G | 941.48 Mbit/s | theory 941.48 | 1.0000 |\n"
	for name, c := range map[string]struct {
		page string
		want []int
	}{
		"sourced":                       {"# B\n\nOn 2026-12-05, load 1.2 (`make bench`):\n\n" + row, nil},
		"load not noted":                {"# B\n\nOn 2026-12-05 (`go test -run X ./test/`, load not noted):\n\n" + row, nil},
		"no date":                       {"# B\n\nWith `make bench`, load 1.2:\n\n" + row, []int{5}},
		"no command":                    {"# B\n\nOn 2026-12-05 at load 1.2:\n\n" + row, []int{5}},
		"no load":                       {"# B\n\nOn 2026-12-05 (`make bench`):\n\n" + row, []int{5}},
		"a heading between":             {"# B\n\nOn 2026-12-05 (`make bench`), load 1.2.\n\n## C\n\n" + row, []int{7}},
		"theory":                        {"# B\n\n| PHY | R (Mbit/s) | cells/s |\n|---|---|---|\n| OC-3c | 149.76 | 353207.5 |\n", nil},
		"in a code block":               {"# B\n\n```\n" + row + "```\n", nil},
		"the second table of a section": {"# B\n\nOn 2026-12-05 (`make bench`), load 1.2:\n\n" + row + "\nA second run at 07:12 UTC:\n\n" + row, nil},
	} {
		if got := Parse([]byte(c.page)).UnsourcedFigureTables(); !slices.Equal(got, c.want) {
			t.Errorf("%s: got lines %v, want %v", name, got, c.want)
		}
	}
}

// TestReadmeStatesNoDatedFigures checks that README.md states no measured
// figure that only holds on a date and a machine: those live in the manual,
// with their command, date and load.
func TestReadmeStatesNoDatedFigures(t *testing.T) {
	p := pages(t, root(t))["README.md"]
	for _, line := range p.DatedFigures() {
		t.Errorf("README.md:%d: %q: a dated figure; put it in docs/benchmarks.md with its command, date and load, and link there", line, p.Prose[line])
	}
}

// The README rule's known answers: dates, loads, latencies, rates and
// speed-ups are found; link rates, sizes and code blocks are not.
func TestDatedFiguresKnownAnswers(t *testing.T) {
	page := "# R\n\n" +
		"Two hosts on a 100 Mbit/s switch.\n" + // 3: a link's rate, not a measurement
		"Measured on 2026-12-05.\n" + // 4
		"at load average 1.2\n" + // 5
		"a ping adds 17.8 µs\n" + // 6
		"TCP_RR 13,636 transactions/s\n" + // 7
		"two at a time 2.07x as fast\n" + // 8
		"a 53-byte cell, 1500-byte frames, 10 ms delay\n" + // 9
		"\n```\nping: 58.0 µs on 2026-12-05\n```\n"
	if got, want := Parse([]byte(page)).DatedFigures(), []int{4, 5, 6, 7, 8}; !slices.Equal(got, want) {
		t.Errorf("got lines %v, want %v", got, want)
	}
}
