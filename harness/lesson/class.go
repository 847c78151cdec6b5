package lesson

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"html/template"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/atmlab/atmlab/harness/results"
)

// MaxStudents bounds a class folder.
const MaxStudents = 1000

// Student is one student's folder of a class and its check.
type Student struct {
	Folder string  `json:"folder"`
	Report *Report `json:"report,omitempty"`
	Err    string  `json:"error,omitempty"` // why the worksheet could not be checked
}

// Class is a class folder checked: every student's worksheet against one
// lesson.
type Class struct {
	Dir      string
	Lesson   *Lesson
	Students []Student
}

// CheckClass checks every worksheet.yaml in dir's subfolders (one a
// student, their results folder named in it and inside their folder)
// against the lesson (opt's, or the one the first worksheet names). A
// worksheet that cannot be read, or names another folder's results, is
// the student's row's error, not the class's.
func CheckClass(dir string, opt Options) (*Class, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	c := &Class{Dir: dir}
	var files []string
	for _, e := range entries {
		f := filepath.Join(dir, e.Name(), "worksheet.yaml")
		if st, err := os.Lstat(f); e.IsDir() && err == nil && st.Mode().IsRegular() {
			files = append(files, f)
		}
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: no student folder with a worksheet.yaml in it: a class folder holds one folder a student", dir)
	}
	if len(files) > MaxStudents {
		return nil, fmt.Errorf("%s: %d students: a class holds at most %d", dir, len(files), MaxStudents)
	}
	if opt.Lesson != "" {
		if c.Lesson, err = Load(opt.Lesson); err != nil {
			return nil, err
		}
	}
	for _, f := range files {
		s := Student{Folder: filepath.Base(filepath.Dir(f))}
		w, err := LoadWorksheet(f)
		if err == nil && c.Lesson == nil {
			var file string
			if file, err = FindLesson(w.Lesson, f); err == nil {
				if c.Lesson, err = Load(file); err != nil {
					return nil, err // the lesson itself is bad: nothing can be checked
				}
			}
		}
		if err == nil {
			err = ownResults(w, filepath.Dir(f))
		}
		if err == nil {
			s.Report, err = checkWith(c.Lesson, w, "")
		}
		if err != nil {
			// the class folder's path is the teacher's: the row names the student's file
			s.Err = strings.ReplaceAll(err.Error(), filepath.Clean(dir)+string(filepath.Separator), "")
		}
		c.Students = append(c.Students, s)
	}
	if c.Lesson == nil {
		return nil, fmt.Errorf("%s: no worksheet could be read, so no lesson is known: %s", dir, c.Students[0].Err)
	}
	return c, nil
}

// ownResults refuses a worksheet of a class whose results folder is not
// in the student's own folder: one student's measurements are not
// another's answers.
func ownResults(w *Worksheet, own string) error {
	if w.Results == "" {
		return nil // the measurements say there are no results
	}
	rel, err := filepath.Rel(own, w.Results)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return fmt.Errorf("%s: results: %s is outside the student's folder %s: in a class, each student's results are their own", w.File, w.Results, own)
	}
	return nil
}

// WriteSummary writes the class's summary.csv and summary.html into its
// folder through harness/results (each written aside and renamed into
// place, never through a link) and returns their paths.
func (c *Class) WriteSummary() (csvPath, htmlPath string, err error) {
	dir, err := results.Open(c.Dir)
	if err != nil {
		return "", "", err
	}
	defer dir.Close()
	var b bytes.Buffer
	if err := c.CSV(&b); err != nil {
		return "", "", err
	}
	if err := dir.WriteFile("summary.csv", b.Bytes(), 0o644); err != nil {
		return "", "", err
	}
	b.Reset()
	if err := c.HTML(&b); err != nil {
		return "", "", err
	}
	if err := dir.WriteFile("summary.html", b.Bytes(), 0o644); err != nil {
		return "", "", err
	}
	return dir.Join("summary.csv"), dir.Join("summary.html"), nil
}

// CSV writes a row a student: their folder, name, score, and each
// question's answer, verdict and reason.
func (c *Class) CSV(w *bytes.Buffer) error {
	cw := csv.NewWriter(w)
	head := []string{"folder", "student", "right", "total", "error"}
	for _, q := range c.Lesson.Questions {
		head = append(head, q.ID, q.ID+"_verdict", q.ID+"_reason")
	}
	cw.Write(head)
	for _, s := range c.Students {
		row := []string{s.Folder, "", "", strconv.Itoa(len(c.Lesson.Questions)), s.Err}
		if s.Report != nil {
			row[1], row[2] = s.Report.Student, strconv.Itoa(s.Report.Right)
			for _, v := range s.Report.Verdicts {
				row = append(row, v.Answer, map[bool]string{true: "right", false: "wrong"}[v.Right], v.Reason)
			}
		}
		for len(row) < len(head) {
			row = append(row, "")
		}
		cw.Write(row)
	}
	cw.Flush()
	return cw.Error()
}

// column is one question's class distribution for the page.
type column struct {
	Q                    *Question
	Right, Wrong, Blank  int
	Expected             string // the theory's figure, when one for all
	Reasons              []reasonCount
	Bars                 []bar
	Lo, Hi               string
	W, H                 int
	ExpectedX            float64
	HasExpected, HasBars bool
}

type reasonCount struct {
	Reason string
	N      int
}

type bar struct {
	X, W, RightY, RightH, WrongY, WrongH float64
	Title                                string
}

// distribution is question i's counts, reasons and histogram.
func (c *Class) distribution(i int) column {
	q := c.Lesson.Questions[i]
	col := column{Q: q, W: 260, H: 90}
	var values []float64
	var right []bool
	reasons := map[string]int{}
	for _, s := range c.Students {
		if s.Report == nil || i >= len(s.Report.Verdicts) {
			continue
		}
		v := s.Report.Verdicts[i]
		switch {
		case v.Answer == "":
			col.Blank++
		case v.Right:
			col.Right++
		default:
			col.Wrong++
		}
		if !v.Right && v.Reason != "" && v.Answer != "" {
			reasons[reasonGroup(v.Reason)]++
		}
		if v.Value != nil {
			values = append(values, *v.Value)
			right = append(right, v.Right)
		}
		if v.Expected != nil && v.Against != "your results" {
			col.Expected = format(*v.Expected, "") + " " + v.Unit
			col.ExpectedX = *v.Expected
			col.HasExpected = true
		}
	}
	for r, n := range reasons {
		col.Reasons = append(col.Reasons, reasonCount{r, n})
	}
	sort.Slice(col.Reasons, func(a, b int) bool {
		if col.Reasons[a].N != col.Reasons[b].N {
			return col.Reasons[a].N > col.Reasons[b].N
		}
		return col.Reasons[a].Reason < col.Reasons[b].Reason
	})
	if len(values) == 0 {
		col.HasExpected = false
		return col
	}
	lo, hi := values[0], values[0]
	for _, v := range values {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	if col.HasExpected {
		lo, hi = math.Min(lo, col.ExpectedX), math.Max(hi, col.ExpectedX)
	}
	if hi-lo <= 1e-3*math.Max(math.Abs(hi), math.Abs(lo)) {
		// one figure, give or take its rounding: centre it in a range of ±5 %
		mid := (lo + hi) / 2
		lo, hi = mid-math.Max(math.Abs(mid)*0.05, 0.5), mid+math.Max(math.Abs(mid)*0.05, 0.5)
	}
	const bins = 12
	var nr, nw [bins]int
	width := (hi - lo) / bins
	for k, v := range values {
		b := min(int((v-lo)/width), bins-1)
		if right[k] {
			nr[b]++
		} else {
			nw[b]++
		}
	}
	most := 1
	for b := range bins {
		most = max(most, nr[b]+nw[b])
	}
	plotH := float64(col.H - 14)
	bw := float64(col.W) / bins
	for b := range bins {
		if nr[b]+nw[b] == 0 {
			continue
		}
		rh, wh := plotH*float64(nr[b])/float64(most), plotH*float64(nw[b])/float64(most)
		col.Bars = append(col.Bars, bar{X: float64(b)*bw + 1, W: bw - 2, RightY: plotH - rh, RightH: rh, WrongY: plotH - rh - wh, WrongH: wh,
			Title: fmt.Sprintf("%s to %s %s: %d right, %d wrong", format(lo+float64(b)*width, ""), format(lo+float64(b+1)*width, ""), q.Unit, nr[b], nw[b])})
	}
	col.HasBars = true
	col.Lo, col.Hi = format(lo, "")+" "+q.Unit, format(hi, "")+" "+q.Unit
	col.ExpectedX = (col.ExpectedX - lo) / (hi - lo) * float64(col.W)
	return col
}

// reasonGroup is a reason without its figures in parentheses at the end
// (what this student measured), so students who made the same slip count
// together.
func reasonGroup(r string) string {
	if i := strings.LastIndex(r, " ("); i > 0 && strings.HasSuffix(r, ")") {
		return r[:i]
	}
	return r
}

// HTML writes the class's page: a table of every student's answers and
// verdicts, and per question the class's counts, the reasons given and a
// histogram of the figures (right in green, wrong in red, the theory's
// figure a line). One file, no script: it opens from disk.
func (c *Class) HTML(w *bytes.Buffer) error {
	var cols []column
	for i := range c.Lesson.Questions {
		cols = append(cols, c.distribution(i))
	}
	return classPage.Execute(w, map[string]any{"Lesson": c.Lesson, "Students": c.Students, "Columns": cols})
}

var classPage = template.Must(template.New("class").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>{{.Lesson.Name}}: class summary</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}
h1{font-size:1.4em}h2{font-size:1.1em;margin-top:1.5em}
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:3px 6px;text-align:left;vertical-align:top}
td.right{background:#e3f4e3}td.wrong{background:#fbe3e3}td.blank{color:#999}
.questions{display:flex;flex-wrap:wrap;gap:1em}
.question{border:1px solid #ccc;border-radius:4px;padding:.6em;width:300px}
.question p{margin:.3em 0}.counts b{font-size:1.1em}
svg rect.r{fill:#4a4}svg rect.w{fill:#c44}svg line{stroke:#333;stroke-dasharray:3 2}
svg text{font-size:10px;fill:#555}ul{margin:.2em 0;padding-left:1.2em;font-size:12px}
</style></head>
<body>
<h1>{{.Lesson.Title}} <small>({{.Lesson.Name}})</small>: class summary</h1>
<table id="students">
<thead><tr><th>student</th><th>right</th>{{range .Columns}}<th title="{{.Q.Ask}}">{{.Q.ID}}</th>{{end}}</tr></thead>
<tbody>
{{range .Students}}<tr data-student="{{.Folder}}">
{{if .Report}}<td>{{.Report.Student}} <small>{{.Folder}}</small></td><td>{{.Report.Right}}/{{.Report.Total}}</td>
{{range .Report.Verdicts}}<td class="{{if .Right}}right{{else if .Answer}}wrong{{else}}blank{{end}}" title="{{if eq .Kind "explanation"}}{{.Answer}}: {{end}}{{.Reason}}">{{if .Answer}}{{if eq .Kind "explanation"}}text{{else}}{{.Answer}}{{end}}{{else}}—{{end}}</td>{{end}}
{{else}}<td>{{.Folder}}</td><td colspan="99" class="wrong">{{.Err}}</td>{{end}}
</tr>
{{end}}</tbody></table>
<h2>Per question</h2>
<div class="questions">
{{range .Columns}}<div class="question" data-question="{{.Q.ID}}">
<p><b>{{.Q.ID}}</b> ({{.Q.Kind}}) {{.Q.Ask}}</p>
<p class="counts"><b class="n-right">{{.Right}}</b> right, <b class="n-wrong">{{.Wrong}}</b> wrong, {{.Blank}} not answered{{if .Expected}}; theory {{.Expected}}{{end}}</p>
{{if .HasBars}}<svg class="histogram" width="{{.W}}" height="{{.H}}" viewBox="0 0 {{.W}} {{.H}}" role="img" aria-label="answers to {{.Q.ID}}">
{{range .Bars}}<g><title>{{.Title}}</title><rect class="r" x="{{.X}}" y="{{.RightY}}" width="{{.W}}" height="{{.RightH}}"/><rect class="w" x="{{.X}}" y="{{.WrongY}}" width="{{.W}}" height="{{.WrongH}}"/></g>
{{end}}{{if .HasExpected}}<line x1="{{.ExpectedX}}" x2="{{.ExpectedX}}" y1="0" y2="{{.H}}"/>{{end}}
<text x="0" y="{{.H}}">{{.Lo}}</text><text x="{{.W}}" y="{{.H}}" text-anchor="end">{{.Hi}}</text>
</svg>{{end}}
{{if .Reasons}}<ul>{{range .Reasons}}<li>{{.N}} × {{.Reason}}</li>{{end}}</ul>{{end}}
</div>
{{end}}</div>
</body></html>
`))

// Summarize checks a class folder (CheckClass) and writes its summary
// (WriteSummary): `atmlab check --class DIR`.
func Summarize(dir string, opt Options) (c *Class, csvPath, htmlPath string, err error) {
	if c, err = CheckClass(dir, opt); err != nil {
		return nil, "", "", err
	}
	csvPath, htmlPath, err = c.WriteSummary()
	return c, csvPath, htmlPath, err
}
