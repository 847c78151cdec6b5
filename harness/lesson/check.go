package lesson

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/atmlab/atmlab/harness/labrun"
	"github.com/atmlab/atmlab/topologies"
)

// Verdict is one question's check.
type Verdict struct {
	ID       string   `json:"id"`
	Kind     string   `json:"kind"`
	Right    bool     `json:"right"`
	Answer   string   `json:"answer"`             // as written; "" when not answered
	Value    *float64 `json:"value,omitempty"`    // the answer in the question's unit
	Expected *float64 `json:"expected,omitempty"` // what it was checked against, in the question's unit
	Unit     string   `json:"unit,omitempty"`
	Against  string   `json:"against,omitempty"` // theory, your results, answer (the lesson's)
	Within   string   `json:"tolerance,omitempty"`
	Reason   string   `json:"reason,omitempty"` // why a wrong answer is wrong (or a note on a right one)
}

// String is the verdict's line: "q1  right  135.6 Mbit/s (theory 135.63, within 1%)".
func (v Verdict) String() string {
	word := "wrong"
	if v.Right {
		word = "right"
	}
	ans := v.Answer
	if ans == "" {
		ans = "(no answer)"
	} else if v.Kind == Explanation && len(ans) > 40 {
		ans = fmt.Sprintf("%q", ans[:37]+"...")
	} else if v.Kind == Explanation {
		ans = fmt.Sprintf("%q", ans)
	}
	s := fmt.Sprintf("%-6s %s  %s", v.ID, word, ans)
	if v.Expected != nil {
		s += fmt.Sprintf(" (%s %s %s, within %s)", v.Against, format(*v.Expected, ""), v.Unit, v.Within)
	}
	if v.Reason != "" {
		s += ": " + v.Reason
	}
	return s
}

// Report is a worksheet's check.
type Report struct {
	Lesson    string    `json:"lesson"`
	Student   string    `json:"student"`
	Worksheet string    `json:"worksheet"`
	Results   string    `json:"results,omitempty"`
	Right     int       `json:"right"`
	Total     int       `json:"total"`
	Verdicts  []Verdict `json:"verdicts"`
}

// Options say where the lesson and the results are when the worksheet's
// own say-so is not to be used.
type Options struct {
	Lesson  string // lesson.yaml; "": found by the worksheet's lesson name (FindLesson)
	Results string // the results folder; "": the worksheet's results:
}

// CheckFile checks a worksheet file: it finds and loads the lesson, reads
// the student's records and checks every question. A bad worksheet,
// lesson or results file is an error (FILE:LINE where there is a line);
// a missing results folder only makes the measurements wrong.
func CheckFile(worksheet string, opt Options) (*Report, error) {
	w, err := LoadWorksheet(worksheet)
	if err != nil {
		return nil, err
	}
	file := opt.Lesson
	if file == "" {
		if file, err = FindLesson(w.Lesson, worksheet); err != nil {
			return nil, err
		}
	}
	l, err := Load(file)
	if err != nil {
		return nil, err
	}
	return checkWith(l, w, opt.Results)
}

func checkWith(l *Lesson, w *Worksheet, results string) (*Report, error) {
	if w.Lesson != l.Name {
		return nil, fmt.Errorf("%s: the worksheet is for lesson %s, %s is lesson %s", w.File, w.Lesson, l.File, l.Name)
	}
	if results == "" {
		results = w.Results
	}
	recs, recErr := readRecords(results)
	if recErr != nil && !errors.Is(recErr, fs.ErrNotExist) && !errors.Is(recErr, errNoResults) {
		return nil, recErr
	}
	return Check(l, w, recs, recErr), nil
}

var errNoResults = errors.New("the worksheet names no results folder (results: DIR)")

func readRecords(dir string) ([]labrun.Record, error) {
	if dir == "" {
		return nil, errNoResults
	}
	return labrun.ReadRecords(dir)
}

// FindLesson finds the lesson file of a lesson name for a worksheet: the
// lesson.yaml beside the worksheet or in its parent folder, then
// lessons/NAME or lessons/NN-NAME under the working folder and under the
// atmlab binary's folder and its parent (a source tree's bin/atmlab).
func FindLesson(name, worksheet string) (string, error) {
	if !nameRE.MatchString(name) {
		return "", fmt.Errorf("%s: lesson %q: give the lesson with --lesson FILE", worksheet, name)
	}
	var tried []string
	wdir := filepath.Dir(worksheet)
	for _, f := range []string{filepath.Join(wdir, "lesson.yaml"), filepath.Join(wdir, "..", "lesson.yaml")} {
		if l, err := Load(f); err == nil && l.Name == name {
			return f, nil
		}
	}
	roots := []string{"lessons"}
	if exe, err := os.Executable(); err == nil {
		roots = append(roots, filepath.Join(filepath.Dir(exe), "lessons"), filepath.Join(filepath.Dir(exe), "..", "lessons"))
	}
	for _, root := range roots {
		cands := []string{filepath.Join(root, name, "lesson.yaml")}
		more, _ := filepath.Glob(filepath.Join(root, "[0-9][0-9]-"+name, "lesson.yaml"))
		for _, f := range append(cands, more...) {
			tried = append(tried, f)
			if st, err := os.Stat(f); err == nil && st.Mode().IsRegular() {
				return f, nil
			}
		}
	}
	return "", fmt.Errorf("%s: lesson %s not found beside the worksheet nor in %s: give it with --lesson FILE", worksheet, name, strings.Join(tried, ", "))
}

// Check checks each of the lesson's questions against the worksheet's
// answers and the student's records (recErr: why there are none).
func Check(l *Lesson, w *Worksheet, recs []labrun.Record, recErr error) *Report {
	r := &Report{Lesson: l.Name, Student: w.Student, Worksheet: w.File, Results: w.Results}
	for _, q := range l.Questions {
		v := check(l, q, w.Answers[q.ID], recs, recErr)
		if v.Right {
			r.Right++
		}
		r.Verdicts = append(r.Verdicts, v)
	}
	r.Total = len(l.Questions)
	return r
}

func check(l *Lesson, q *Question, a *Answer, recs []labrun.Record, recErr error) Verdict {
	v := Verdict{ID: q.ID, Kind: q.Kind, Unit: q.Unit}
	if a != nil {
		v.Answer = a.Text
	}
	if a == nil || strings.TrimSpace(a.Text) == "" {
		v.Reason = "not answered"
		return v
	}
	if q.Kind == Explanation {
		return explain(q, a, v)
	}
	if a.Figure == nil {
		v.Reason = fmt.Sprintf("want a figure in %s, such as 12.5 %s", q.Unit, q.Unit)
		return v
	}
	got, dim := a.Figure.base(q.Unit)
	if dim != q.Dim() {
		v.Reason = fmt.Sprintf("%s is %s; the question asks for %s in %s", a.Figure, dim, q.Dim(), q.Unit)
		return v
	}
	v.Value = ptr(inUnit(got, q.Unit))
	switch q.Kind {
	case Number:
		return against(q, a, v, got, *q.Answer, "answer")
	case Prediction:
		lab, err := l.Lab.WithVariant(q.Variant)
		var want float64
		if err == nil {
			want, err = Expected(lab, q, slip{})
		}
		if err != nil {
			v.Reason = "atmlab cannot work this out: " + err.Error()
			return v
		}
		v = against(q, a, v, got, want, "theory")
		if !v.Right && v.Reason == "" {
			v.Reason = predictionSlip(lab, q, got)
		}
		return v
	}
	return measured(l, q, a, v, got, recs, recErr)
}

// against checks got against want and, when wrong, tries the unit slips.
func against(q *Question, a *Answer, v Verdict, got, want float64, what string) Verdict {
	v.Expected, v.Against, v.Within = ptr(inUnit(want, q.Unit)), what, q.Tol.Text
	if q.Tol.within(got, want) {
		v.Right = true
		return v
	}
	v.Reason = unitSlip(q, a.Figure, want)
	return v
}

// predictionSlip names the slip whose figure matches a wrong prediction,
// the closest if several do; slips that give the same figure (the AAL5
// trailer and the LLC/SNAP header are both 8 octets) are named together.
// "" when none matches.
func predictionSlip(l *topologies.Lab, q *Question, got float64) string {
	type match struct {
		name string
		fig  float64
	}
	var found []match
	truth, _ := Expected(l, q, slip{})
	for _, s := range slips {
		if !s.applicable(l, q) {
			continue
		}
		f, err := Expected(l, q, s)
		if err != nil || q.Tol.within(f, truth) || !q.Tol.within(got, f) {
			continue // no such slip here, or one that changes nothing
		}
		found = append(found, match{s.name, f})
	}
	if len(found) == 0 {
		return "it matches none of the usual slips: work it through again, layer by layer"
	}
	best := found[0]
	for _, m := range found[1:] {
		if math.Abs(got-m.fig) < math.Abs(got-best.fig) {
			best = m
		}
	}
	var names []string
	for _, m := range found {
		if math.Abs(m.fig-best.fig) <= 1e-9*math.Abs(best.fig) {
			names = append(names, m.name)
		}
	}
	return strings.Join(names, ", or ") + fmt.Sprintf(" (that gives %s %s)", format(best.fig, q.Unit), q.Unit)
}

// unitSlip names the unit the answer's number was worked out in when it
// is not the unit written beside it (or the lesson's): Mbit vs MiB, bits
// vs bytes, MB vs MiB; "" when none fits.
func unitSlip(q *Question, f *Figure, want float64) string {
	written := f.Unit
	if written == "" {
		written = q.Unit
	}
	wu, _ := lookupUnit(written)
	alts := map[Dimension][]string{
		Rate:   {"bit/s", "kbit/s", "Mbit/s", "Gbit/s", "kB/s", "MB/s", "GB/s", "KiB/s", "MiB/s", "GiB/s"},
		Octets: {"octets", "bits", "kB", "KiB"},
		Time:   {"s", "ms", "us"},
	}[wu.dim]
	for _, alt := range alts {
		au, _ := lookupUnit(alt)
		if au.factor == wu.factor || !q.Tol.within(f.Number*au.factor, want) {
			continue
		}
		bitsBytes := (au.factor/wu.factor == 8 || wu.factor/au.factor == 8)
		mib := strings.Contains(alt, "iB") != strings.Contains(written, "iB")
		switch {
		case mib && strings.Contains(strings.ToLower(written+alt), "bit"):
			return fmt.Sprintf("Mbit vs MiB: %s is the figure in %s (a MiB is 2^20 octets, 8 388 608 bits), not in %s", format(f.Number, ""), alt, written)
		case mib:
			return fmt.Sprintf("MB vs MiB: %s is the figure in %s (a MiB is 2^20 octets, a MB 10^6), not in %s", format(f.Number, ""), alt, written)
		case bitsBytes:
			return fmt.Sprintf("bits vs bytes: %s is the figure in %s, not in %s (an octet is 8 bits)", format(f.Number, ""), alt, written)
		}
		return fmt.Sprintf("%s is the figure in %s, not in %s", format(f.Number, ""), alt, written)
	}
	return ""
}

// measured checks a measurement against the student's own records first,
// then says whose figure a wrong one is: the handout's example, or the
// theory's, where it is one of them.
func measured(l *Lesson, q *Question, a *Answer, v Verdict, got float64, recs []labrun.Record, recErr error) Verdict {
	if recErr != nil {
		v.Reason = "no results to check it against: " + recErr.Error() + "; run the lab with atmlab lab run " + l.LabFile + " --out DIR and name DIR in results:"
		return v
	}
	own, n := recorded(q, recs)
	if n == 0 {
		v.Reason = fmt.Sprintf("your results folder has no record of %s in variant %s: run that experiment first", q.Point, q.Variant)
		return v
	}
	var theoryFig *float64
	if lab, err := l.Lab.WithVariant(q.Variant); err == nil && q.Quantity == "goodput" {
		tq := *q
		tq.Kind = Prediction
		if t, err := Expected(lab, &tq, slip{}); err == nil {
			theoryFig = &t
		}
	}
	v = against(q, a, v, got, own, "your results")
	switch {
	case v.Right:
		if theoryFig != nil && own > *theoryFig*1.02 {
			v.Reason = fmt.Sprintf("note: your record is above the theory's ceiling %s %s; measure it again", format(*theoryFig, q.Unit), q.Unit)
		}
	case q.Example != nil && q.Tol.within(got, *q.Example):
		v.Reason = fmt.Sprintf("this is the handout's example figure, not what your results folder measured (%s %s)", format(own, q.Unit), q.Unit)
	case theoryFig != nil && q.Tol.within(got, *theoryFig):
		v.Reason = fmt.Sprintf("this is the theory's ceiling, not what your results folder measured (%s %s)", format(own, q.Unit), q.Unit)
	case v.Reason == "":
		v.Reason = fmt.Sprintf("your results folder measured %s %s", format(own, q.Unit), q.Unit)
	}
	return v
}

// recorded is the mean of the question's quantity over the records of its
// point (repetitions, both clocks), and how many there were.
func recorded(q *Question, recs []labrun.Record) (float64, int) {
	sum, n := 0.0, 0
	for _, r := range recs {
		if r.From != q.Point.From || r.To != q.Point.To || r.Test != q.Point.Test || r.Variant != q.Variant ||
			q.Point.Size != 0 && r.Size != q.Point.Size || q.Point.SockBuf >= 0 && r.SockBuf != q.Point.SockBuf || r.Error != "" || r.Result.Error != "" {
			continue
		}
		var x float64
		switch q.Quantity {
		case "goodput":
			x = r.Result.ThroughputBps
		case "transactions_per_s":
			x = r.Result.TransactionsPerSec
		case "rtt":
			if r.Result.Latency == nil {
				continue
			}
			x = r.Result.Latency.P50 / 1e6
		case "ceiling_share":
			if r.Ceiling == 0 {
				continue
			}
			x = r.Result.ThroughputBps / r.Ceiling
		}
		sum += x
		n++
	}
	if n == 0 {
		return 0, 0
	}
	return sum / float64(n), n
}

var wordRE = regexp.MustCompile(`[\p{L}\p{N}]+`)

// explain checks an explanation's keywords: from each list, one word must
// appear (a number as a whole word, a word as the start of one: "trailer"
// matches "trailers"; words with a space as a phrase).
func explain(q *Question, a *Answer, v Verdict) Verdict {
	text := strings.ToLower(a.Text)
	tokens := wordRE.FindAllString(text, -1)
	has := func(k string) bool {
		if strings.ContainsAny(k, " -/") {
			return strings.Contains(text, k)
		}
		for _, t := range tokens {
			if t == k || !isNumber(k) && strings.HasPrefix(t, k) {
				return true
			}
		}
		return false
	}
	var missing []string
	for _, list := range q.Keywords {
		found := false
		for _, k := range list {
			found = found || has(k)
		}
		if !found {
			missing = append(missing, strings.Join(list, " or "))
		}
	}
	v.Right = len(missing) == 0
	if !v.Right {
		v.Reason = "it does not say " + strings.Join(missing, "; nor ")
	}
	return v
}

func isNumber(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

// inUnit is a base-unit figure in the named unit.
func inUnit(v float64, name string) float64 {
	if u, ok := lookupUnit(name); ok && u.factor != 0 {
		return v / u.factor
	}
	return v
}

func ptr(f float64) *float64 { return &f }

// WriteText writes the report as `atmlab check` prints it: a line a
// question, then the score.
func (r *Report) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "%s: lesson %s, %s\n", r.Worksheet, r.Lesson, r.Student)
	for _, v := range r.Verdicts {
		fmt.Fprintln(w, v)
	}
	_, err := fmt.Fprintf(w, "%d of %d right\n", r.Right, r.Total)
	return err
}
