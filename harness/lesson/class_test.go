package lesson

import (
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/atmlab/atmlab/internal/headless"
)

// slipsOfClass are the wrong answers a prepared class makes, one pattern
// a student in turn (the first: all right).
var slipsOfClass = []map[string]string{
	nil,
	{"q4": "126.6 Mbit/s"},                   // no trailer
	{"q1": "124.59 Mbit/s"},                  // no LLC/SNAP header
	{"q1": "13.61 Mbit/s"},                   // Mbit vs MiB
	{"q5": "101.3 Mbit/s"},                   // copied from the handout
	{"q7": `"it is bigger"`, "q3": "-"},      // no keywords, no answer
	{"q2": "11 cells", "q6": "96.97 Mbit/s"}, // no trailer; no preamble and gap
	nil,
}

// class prepares a class folder of n students, each with a worksheet and
// a results folder of their own measured figures.
func class(t testing.TB, n int) string {
	dir := t.TempDir()
	for i := range n {
		sdir := filepath.Join(dir, fmt.Sprintf("student%02d", i+1))
		own := 110 + float64(i%7)*0.8 // what this student's run measured at 485 octets
		writeResults(t, filepath.Join(sdir, "results"), map[int]float64{485: own, 484: 121, 1472: 95.5})
		change := map[string]string{"q5": fmt.Sprintf("%.2f Mbit/s", own)}
		for k, v := range slipsOfClass[i%len(slipsOfClass)] {
			change[k] = v
		}
		worksheet(t, sdir, fmt.Sprintf("Student %d", i+1), change)
	}
	// the last student's worksheet does not read: the row says why
	os.WriteFile(filepath.Join(dir, fmt.Sprintf("student%02d", n), "worksheet.yaml"), []byte("lesson: sawtooth-test\nanswers:\n  q1: 114 Mbit/z\n"), 0o644)
	return dir
}

func TestClassSummary(t *testing.T) {
	dir := class(t, 30)
	c, err := CheckClass(dir, Options{Lesson: "testdata/lesson.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	csvPath, htmlPath, err := c.WriteSummary()
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(csvPath)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil || len(rows) != 31 {
		t.Fatalf("summary.csv: %d rows (%v), want a header and 30", len(rows), err)
	}
	allRight, errs := 0, 0
	for _, r := range rows[1:] {
		if r[2] == "7" {
			allRight++
		}
		if r[4] != "" {
			errs++
			if !strings.HasPrefix(r[4], "student30/worksheet.yaml:3: answers.q1") {
				t.Errorf("%s: error %q, want FILE:LINE", r[0], r[4])
			}
		}
	}
	// students 1, 8, 9, 16, 17, 24, 25 are all right (patterns 0 and 7)
	if allRight != 7 || errs != 1 {
		t.Errorf("%d students all right, %d errors; want 7 and 1", allRight, errs)
	}
	q1 := c.distribution(0)
	if q1.Right+q1.Wrong != 29 || q1.Wrong != 8 || len(q1.Reasons) != 2 {
		t.Errorf("q1: %d right, %d wrong, reasons %v; want 21, 8 and two reasons", q1.Right, q1.Wrong, q1.Reasons)
	}

	ctx, cancel := context.WithTimeout(headless.New(t), time.Minute)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1400, 900), chromedp.Navigate("file://"+htmlPath), chromedp.WaitVisible(chromedp.CSS(`#students`))); err != nil {
		t.Fatal(err)
	}
	count := func(js string) int {
		n, err := chromedp.Run(ctx, chromedp.Evaluate[int](js))
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	rowsShown := count(`document.querySelectorAll('#students tbody tr').length`)
	histograms := count(`document.querySelectorAll('svg.histogram').length`)
	bars := count(`document.querySelectorAll('svg.histogram rect').length`)
	q1counts, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`[data-question="q1"] .counts`)))
	if err != nil {
		t.Fatal(err)
	}
	// every question with figures has a histogram: all but the explanation
	if rowsShown != 30 || histograms != 6 || bars == 0 || !strings.Contains(q1counts, "21 right, 8 wrong") {
		t.Errorf("page: %d rows, %d histograms, %d bars, q1 %q; want 30 rows, 6 histograms, 21 right 8 wrong", rowsShown, histograms, bars, q1counts)
	}
	if out := os.Getenv("ATMLAB_CLASS_SCREENSHOT"); out != "" {
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(out, png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// A summary file that is a link is replaced, not written through.
func TestClassSummaryReplacesLinks(t *testing.T) {
	dir := class(t, 2)
	victim := filepath.Join(t.TempDir(), "victim")
	os.WriteFile(victim, []byte("keep"), 0o644)
	os.Symlink(victim, filepath.Join(dir, "summary.html"))
	if _, _, _, err := Summarize(dir, Options{Lesson: "testdata/lesson.yaml"}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep" {
		t.Errorf("the link's target was written: %q", b)
	}
	if st, err := os.Lstat(filepath.Join(dir, "summary.html")); err != nil || !st.Mode().IsRegular() {
		t.Errorf("summary.html: %v, %v", st, err)
	}
}

// In a class a worksheet may not name another student's results folder.
func TestClassRefusesAnotherStudentsResults(t *testing.T) {
	dir := class(t, 3)
	sheet := filepath.Join(dir, "student02", "worksheet.yaml")
	b, _ := os.ReadFile(sheet)
	os.WriteFile(sheet, []byte(strings.Replace(string(b), "results: results/", "results: ../student01/results", 1)), 0o644)
	c, err := CheckClass(dir, Options{Lesson: "testdata/lesson.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	if s := c.Students[1]; s.Report != nil || !strings.Contains(s.Err, "outside the student's folder") {
		t.Errorf("student02: %+v", s)
	}
	if c.Students[0].Report == nil {
		t.Errorf("student01: %+v", c.Students[0])
	}
}
