// Package lessons holds the lessons a teacher hands out: each folder NN-slug
// has a lab file, a handout, its questions (lesson.yaml) and a blank
// worksheet. These tests check that every lesson's lab validates and that
// its experiments, run end to end in virtual time as a student runs them,
// give a record for every point its questions name, within a minute of CPU.
package lessons

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/atmlab/atmlab/topologies/labfile"
)

var atmlab string // the binary a student runs, built once

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "atmlab-lessons")
	if err != nil {
		panic(err)
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	atmlab = filepath.Join(dir, "atmlab")
	if out, err := exec.Command(goTool, "build", "-o", atmlab, "../cmd/atmlab").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build atmlab: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// point is the part of a question that names a measured point.
type point struct {
	From    string `yaml:"from"`
	To      string `yaml:"to"`
	Test    string `yaml:"test"`
	Size    int    `yaml:"size"`
	Sockbuf *int   `yaml:"sockbuf"`
}

type question struct {
	ID      string `yaml:"id"`
	Kind    string `yaml:"kind"`
	Point   *point `yaml:"point"`
	Variant string `yaml:"variant"`
}

type lesson struct {
	Lesson    string     `yaml:"lesson"`
	Lab       string     `yaml:"lab"`
	Questions []question `yaml:"questions"`
}

type worksheet struct {
	Lesson  string         `yaml:"lesson"`
	Results string         `yaml:"results"`
	Answers map[string]any `yaml:"answers"`
}

// record is what the tests read of a results.jsonl line.
type record struct {
	Variant string `json:"variant"`
	Test    string `json:"test"`
	Size    int    `json:"size"`
	Sockbuf int    `json:"sockbuf"`
	From    string `json:"from"`
	To      string `json:"to"`
	Error   string `json:"error"`
	Result  struct {
		Throughput   float64 `json:"throughput_bps"`
		Transactions float64 `json:"transactions_per_sec"`
	} `json:"result"`
}

var folderName = regexp.MustCompile(`^[0-9]{2}-[a-z0-9-]+$`)

// lessonDirs lists the lesson folders.
func lessonDirs(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, e := range entries {
		if e.IsDir() && folderName.MatchString(e.Name()) {
			dirs = append(dirs, e.Name())
		}
	}
	if len(dirs) < 7 {
		t.Fatalf("%d lesson folders, want at least 7: %v", len(dirs), dirs)
	}
	return dirs
}

func readYAML(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func readLesson(t *testing.T, dir string) lesson {
	t.Helper()
	var l lesson
	readYAML(t, filepath.Join(dir, "lesson.yaml"), &l)
	if l.Lab == "" {
		t.Fatalf("%s/lesson.yaml names no lab", dir)
	}
	return l
}

// Every lesson folder has what a student and the checker need, its lab
// file validates, and its blank worksheet answers exactly its questions.
func TestLessonFoldersAreComplete(t *testing.T) {
	for _, dir := range lessonDirs(t) {
		t.Run(dir, func(t *testing.T) {
			for _, f := range []string{"lab.yaml", "handout.md", "lesson.yaml", "worksheet.yaml"} {
				if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
					t.Errorf("%s: %v", dir, err)
				}
			}
			l := readLesson(t, dir)
			lab, err := labfile.Load(filepath.Join(dir, l.Lab))
			if err != nil {
				t.Fatalf("lab file: %v", err)
			}
			if len(lab.Experiments) == 0 {
				t.Errorf("%s: the lab has no experiments to run", l.Lab)
			}
			handout, err := os.ReadFile(filepath.Join(dir, "handout.md"))
			if err != nil {
				t.Fatal(err)
			}
			var ws worksheet
			readYAML(t, filepath.Join(dir, "worksheet.yaml"), &ws)
			if ws.Lesson != l.Lesson {
				t.Errorf("worksheet.yaml is for lesson %q, lesson.yaml is %q", ws.Lesson, l.Lesson)
			}
			var ids []string
			for i, q := range l.Questions {
				if slices.Contains(ids, q.ID) {
					t.Errorf("question %d: id %q twice", i+1, q.ID)
				}
				ids = append(ids, q.ID)
				if _, ok := ws.Answers[q.ID]; !ok {
					t.Errorf("worksheet.yaml has no line for %s", q.ID)
				}
				if !regexp.MustCompile(`\*\*` + regexp.QuoteMeta(qTitle(q.ID)) + `\*\*`).Match(handout) {
					t.Errorf("handout.md does not ask **%s**", qTitle(q.ID))
				}
				if (q.Kind == "prediction" || q.Kind == "measurement") && q.Point == nil {
					t.Errorf("%s: a %s names no point", q.ID, q.Kind)
				}
			}
			for id := range ws.Answers {
				if !slices.Contains(ids, id) {
					t.Errorf("worksheet.yaml answers %s, which lesson.yaml does not ask", id)
				}
			}
		})
	}
}

// qTitle is how a handout names a question: q3 is **Q3**.
func qTitle(id string) string {
	if len(id) > 1 && id[0] == 'q' {
		return "Q" + id[1:]
	}
	return id
}

// Every lesson runs end to end in virtual time, with no root, as its
// handout tells a student to run it, within a minute of CPU, and measures
// every point its questions name.
func TestLessonsRunInVirtualTime(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every lesson (about a minute of CPU in all)")
	}
	for _, dir := range lessonDirs(t) {
		t.Run(dir, func(t *testing.T) {
			t.Parallel()
			l := readLesson(t, dir)
			out := filepath.Join(t.TempDir(), "results")
			cmd := exec.Command(atmlab, "lab", "run", filepath.Join(dir, l.Lab), "--clock", "virtual", "--out", out)
			start := time.Now()
			b, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("atmlab lab run --clock virtual: %v\n%s", err, b)
			}
			cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
			t.Logf("%s: %.1f s of CPU, %.1f s", dir, cpu.Seconds(), time.Since(start).Seconds())
			if cpu > time.Minute {
				t.Errorf("the lesson's virtual run took %v of CPU, want under a minute", cpu)
			}
			recs := readRecords(t, filepath.Join(out, "results.jsonl"))
			for _, q := range l.Questions {
				if q.Point == nil {
					continue
				}
				if r, ok := find(recs, q); !ok {
					t.Errorf("%s: no record for %s", q.ID, describe(q))
				} else if r.Error != "" {
					t.Errorf("%s: the record for %s is an error: %s", q.ID, describe(q), r.Error)
				} else if r.Result.Throughput <= 0 && r.Result.Transactions <= 0 {
					t.Errorf("%s: the record for %s measured nothing", q.ID, describe(q))
				}
			}
		})
	}
}

// The prepared worksheets of lesson 2 (all right, and each kind of wrong)
// answer all its questions, and the results folder beside them holds a
// record for every point they name.
func TestSawtoothExamplesMatchTheLesson(t *testing.T) {
	dir := "02-aal5-sawtooth"
	l := readLesson(t, dir)
	names, err := filepath.Glob(filepath.Join(dir, "examples", "*.yaml"))
	if err != nil || len(names) < 3 {
		t.Fatalf("%d prepared worksheets (%v), want at least 3", len(names), err)
	}
	for _, path := range names {
		name := filepath.Base(path)
		var ws worksheet
		readYAML(t, path, &ws)
		if ws.Lesson != l.Lesson {
			t.Errorf("%s is for lesson %q, want %q", name, ws.Lesson, l.Lesson)
		}
		for _, q := range l.Questions {
			if v, ok := ws.Answers[q.ID]; !ok || v == nil || v == "" {
				t.Errorf("%s leaves %s unanswered", name, q.ID)
			}
		}
		recs := readRecords(t, filepath.Join(dir, "examples", ws.Results, "results.jsonl"))
		for _, q := range l.Questions {
			if q.Point != nil {
				if _, ok := find(recs, q); !ok {
					t.Errorf("%s: its results hold no record for %s (%s)", name, q.ID, describe(q))
				}
			}
		}
	}
}

func readRecords(t *testing.T, path string) []record {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var recs []record
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var r record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		recs = append(recs, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return recs
}

// find returns the record of a question's point: its variant ("base"
// unless it names one), hosts, test, size and, if it names one, socket buffer.
func find(recs []record, q question) (record, bool) {
	variant := q.Variant
	if variant == "" {
		variant = "base"
	}
	p := q.Point
	for _, r := range recs {
		if r.Variant == variant && r.From == p.From && r.To == p.To && r.Test == p.Test && r.Size == p.Size &&
			(p.Sockbuf == nil || *p.Sockbuf == r.Sockbuf) {
			return r, true
		}
	}
	return record{}, false
}

func describe(q question) string {
	s := fmt.Sprintf("%s %s -> %s size %d", q.Point.Test, q.Point.From, q.Point.To, q.Point.Size)
	if q.Point.Sockbuf != nil {
		s += fmt.Sprintf(" sockbuf %d", *q.Point.Sockbuf)
	}
	if q.Variant != "" {
		s += " in variant " + q.Variant
	}
	return s
}

// TestLessonsValidateAndTheirExamplesCheck runs what a teacher and a
// student would: atmlab validate on every lesson.yaml, and atmlab check on
// the sawtooth lesson's prepared worksheets, each of which must get the
// verdicts it was written for, with the reason the theory gives.
func TestLessonsValidateAndTheirExamplesCheck(t *testing.T) {
	lessons, err := filepath.Glob("*/lesson.yaml")
	if err != nil || len(lessons) < 7 {
		t.Fatalf("%d lessons: %v", len(lessons), err)
	}
	for _, l := range lessons {
		if out, err := exec.Command(atmlab, "validate", l).CombinedOutput(); err != nil {
			t.Errorf("atmlab validate %s: %v\n%s", l, err, out)
		}
	}
	type verdict struct {
		ID     string `json:"id"`
		Right  bool   `json:"right"`
		Reason string `json:"reason"`
	}
	type report struct {
		Right, Total int
		Verdicts     []verdict
	}
	// wrong: each question the worksheet gets wrong, and words its reason must hold.
	for file, wrong := range map[string]map[string]string{
		"all-right.yaml":      {},
		"trailer-slip.yaml":   {"q2": "AAL5 trailer", "q3": "AAL5 trailer", "q5": "AAL5 trailer", "q6": "AAL5 trailer", "q10": "trailer"},
		"unit-slip.yaml":      {"q4": "MiB", "q5": "MiB", "q6": "MiB", "q7": "MiB", "q8": "MiB", "q9": "MiB"},
		"copied-example.yaml": {"q7": "handout's example"},
	} {
		out, err := exec.Command(atmlab, "check", "-o", "json", filepath.Join("02-aal5-sawtooth", "examples", file)).Output()
		if err != nil {
			t.Errorf("atmlab check %s: %v", file, err)
			continue
		}
		var r report
		if err := json.Unmarshal(out, &r); err != nil || r.Total != 11 {
			t.Errorf("atmlab check %s: %v, %d questions", file, err, r.Total)
			continue
		}
		for _, v := range r.Verdicts {
			want, isWrong := wrong[v.ID]
			switch {
			case v.Right == isWrong:
				t.Errorf("%s %s: right %v, want %v (%s)", file, v.ID, v.Right, !isWrong, v.Reason)
			case isWrong && !strings.Contains(v.Reason, want):
				t.Errorf("%s %s: reason %q does not say %q", file, v.ID, v.Reason, want)
			}
		}
	}
}
