package lesson

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Each bad lesson file is refused with its problem at FILE:LINE: KEY.
func TestBadLessonErrorsAtLine(t *testing.T) {
	lab, err := filepath.Abs("testdata/lab.yaml")
	if err != nil {
		t.Fatal(err)
	}
	head := "lesson: t\nlab: " + lab + "\nquestions:\n"
	q := func(body string) string { return head + "  - id: q1\n" + body }
	for _, c := range []struct{ name, data, want string }{
		{"yaml", "lesson: [t\n", ":1: yaml:"},
		{"not a mapping", "- a\n", ":1: yaml:"},
		{"unknown key", "lesson: t\nlab: x.yaml\nquestions: [{id: q1, kind: explanation, keywords: [[a]]}]\ncolour: red\n", ":4: colour: unknown key"},
		{"missing questions", "lesson: t\nlab: x.yaml\n", ":1: questions: missing"},
		{"bad name", "lesson: T T\nlab: x.yaml\nquestions: [{id: q1, kind: explanation, keywords: [[a]]}]\n", ":1: lesson:"},
		{"lab missing", "lesson: t\nlab: nowhere.yaml\nquestions: [{id: q1, kind: explanation, keywords: [[a]]}]\n", ":2: lab: "},
		{"kind", q("    kind: guess\n"), ":5: questions.q1.kind: \"guess\""},
		{"quantity", q("    kind: prediction\n    quantity: speed\n    unit: Mbit/s\n    point: {from: h1, to: h2, test: UDP_STREAM, size: 485}\n"), ":6: questions.q1.quantity: \"speed\""},
		{"prediction of a share", q("    kind: prediction\n    quantity: ceiling_share\n    unit: \"%\"\n    point: {from: h1, to: h2, test: UDP_STREAM, size: 1}\n"), ":6: questions.q1.quantity: ceiling_share has no prediction"},
		{"unit", q("    kind: prediction\n    quantity: goodput\n    unit: cells\n    point: {from: h1, to: h2, test: UDP_STREAM, size: 485}\n"), ":7: questions.q1.unit: goodput is bit rate"},
		{"tolerance", q("    kind: prediction\n    quantity: goodput\n    unit: Mbit/s\n    tolerance: 2 cells\n    point: {from: h1, to: h2, test: UDP_STREAM, size: 485}\n"), ":8: questions.q1.tolerance:"},
		{"no host", q("    kind: prediction\n    quantity: goodput\n    unit: Mbit/s\n    point: {from: h1, to: h9, test: UDP_STREAM, size: 485}\n"), ":4: questions.q1.point: h9 is not a host"},
		{"switch", q("    kind: prediction\n    quantity: goodput\n    unit: Mbit/s\n    point: {from: h1, to: atm1, test: UDP_STREAM, size: 485}\n"), "atm1 is not a host"},
		{"test", q("    kind: prediction\n    quantity: goodput\n    unit: Mbit/s\n    point: {from: h1, to: h2, test: UDP_FLOOD, size: 485}\n"), ":8: questions.q1.point.test:"},
		{"variant", q("    kind: prediction\n    quantity: goodput\n    unit: Mbit/s\n    variant: nope\n    point: {from: h1, to: h2, test: UDP_STREAM, size: 485}\n"), ":4: questions.q1.variant: \"nope\""},
		{"unmeasured", q("    kind: measurement\n    quantity: goodput\n    unit: Mbit/s\n    point: {from: h1, to: h2, test: UDP_STREAM, size: 999}\n"), ":4: questions.q1.point: no experiment"},
		{"cells on ethernet", q("    kind: prediction\n    quantity: cells_per_pdu\n    unit: cells\n    point: {from: h3, to: h4, test: UDP_STREAM, size: 100}\n"), ":4: questions.q1.point: cells_per_pdu: no ATM link"},
		{"number without answer", q("    kind: number\n    quantity: number\n    unit: ms\n"), "questions.q1.answer: missing"},
		{"explanation keywords", q("    kind: explanation\n    keywords: trailer\n"), ":6: questions.q1.keywords:"},
		{"duplicate id", head + "  - {id: q1, kind: explanation, keywords: [[a]]}\n  - {id: q1, kind: explanation, keywords: [[a]]}\n", ":5: questions.q1: id q1 again, first on line 4"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("l.yaml", []byte(c.data))
			if err == nil || !strings.Contains(err.Error(), "l.yaml") || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want l.yaml%s", err, c.want)
			}
		})
	}
}

// Each bad worksheet is refused with its problem at FILE:LINE: KEY.
func TestBadWorksheetErrorsAtLine(t *testing.T) {
	for _, c := range []struct{ name, data, want string }{
		{"yaml", "lesson: t\nanswers: {q1: [\n", "w.yaml:2: yaml:"},
		{"unit", "lesson: t\nanswers:\n  q1: 12 cellz\n", "w.yaml:3: answers.q1: \"12 cellz\": unknown unit"},
		{"number", "lesson: t\nanswers:\n  q1: 1.2.3 Mbit/s\n", "w.yaml:3: answers.q1:"},
		{"list", "lesson: t\nanswers:\n  q1: [1, 2]\n", "w.yaml:3: answers.q1: want a single value"},
		{"twice", "lesson: t\nanswers:\n  q1: 1\n  q1: 2\n", "w.yaml:4: answers.q1: given twice"},
		{"id", "lesson: t\nanswers:\n  Q 1: 1\n", "w.yaml:3: answers.Q 1:"},
		{"no lesson", "answers: {q1: 1}\n", "w.yaml:1: lesson: missing"},
		{"unknown", "lesson: t\nanswers: {q1: 1}\nname: x\n", "w.yaml:3: name: unknown key"},
		{"two documents", "lesson: t\nanswers: {q1: 1}\n---\nlesson: u\n", "w.yaml:4: yaml: a second YAML document"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseWorksheet("w.yaml", []byte(c.data))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want %s", err, c.want)
			}
		})
	}
}

func TestWorksheetFigures(t *testing.T) {
	w, err := ParseWorksheet("w.yaml", []byte("lesson: t\nresults: r\nanswers:\n  a: 135.6 Mbit/s\n  b: 16,2 MiB/s\n  c: 11\n  d: 485 octets need a cell more\n  e:\n  f: 4e3 kbit/s\n"))
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]float64{"a": 135.6e6, "b": 16.2 * 8 * (1 << 20), "f": 4e6} {
		if got, _ := w.Answers[id].Figure.base(""); got != want {
			t.Errorf("%s: %v, want %v", id, got, want)
		}
	}
	if w.Answers["c"].Figure == nil || w.Answers["d"].Figure != nil || w.Answers["e"].Text != "" {
		t.Errorf("c %+v, d %+v, e %+v", w.Answers["c"], w.Answers["d"], w.Answers["e"])
	}
	if w.Results != filepath.Join(".", "r") {
		t.Errorf("results %q", w.Results)
	}
}

// The worksheet decoder takes any bytes without panicking, and what it
// accepts has a figure for every numeric answer.
func FuzzParseWorksheet(f *testing.F) {
	for _, s := range []string{
		"lesson: aal5-sawtooth\nstudent: Ada\nresults: results/\nanswers:\n  q1: 135.6 Mbit/s\n  q2: 11 cells\n  q5: \"the trailer\"\n",
		"lesson: t\nanswers: {q1: -1e9 GiB/s, q2: .5%, q3: 3 us, q4: 12 B/s}\n",
		"lesson: t\nanswers:\n  q1: &a 1\n  q2: *a\n",
		"{}", "", "- 1",
	} {
		f.Add([]byte(s))
	}
	if data, err := os.ReadFile("testdata/lesson.yaml"); err == nil {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		w, err := ParseWorksheet("w.yaml", data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "w.yaml:") {
				t.Fatalf("error without FILE:LINE: %v", err)
			}
			return
		}
		for id, a := range w.Answers {
			if looksNumeric(a.Text) && a.Figure == nil {
				t.Fatalf("%s: %q is a figure but has none", id, a.Text)
			}
		}
	})
}
