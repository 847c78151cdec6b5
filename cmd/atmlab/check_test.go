package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/atmlab/atmlab/harness/labrun"
)

const checkLesson = "../../harness/lesson/testdata/lesson.yaml"

// A student runs the lesson's lab in virtual time and hands in what it
// measured: check finds it right against their own results folder, and
// the handout's example figure wrong.
func TestCheckWorksheetAgainstVirtualRun(t *testing.T) {
	dir := t.TempDir()
	results := filepath.Join(dir, "results")
	if _, errOut, err := run(t, "lab", "run", "../../harness/lesson/testdata/lab.yaml", "--clock", "virtual", "--out", results); err != nil {
		t.Fatalf("lab run: %v\n%s", err, errOut)
	}
	recs, err := labrun.ReadRecords(results)
	if err != nil {
		t.Fatal(err)
	}
	measured := 0.0
	for _, r := range recs {
		if r.Size == 485 && r.From == "h1" {
			measured = r.Result.ThroughputBps / 1e6
		}
	}
	sheet := filepath.Join(dir, "worksheet.yaml")
	write := func(q5 string) {
		os.WriteFile(sheet, []byte(fmt.Sprintf("lesson: sawtooth-test\nstudent: Ada\nresults: results\nanswers:\n  q1: 114.2 Mbit/s\n  q2: 12 cells\n  q3: 124.33\n"+
			"  q4: 116.09 Mbit/s\n  q5: %s\n  q6: 95.7 Mbit/s\n  q7: \"the 8-octet trailer needs a 12th cell of 48\"\n", q5)), 0o644)
	}
	write(fmt.Sprintf("%.2f Mbit/s", measured))
	out, errOut, err := run(t, "check", sheet, "--lesson", checkLesson)
	if err != nil || !strings.Contains(out, "7 of 7 right") {
		t.Errorf("check: %v\n%s%s", err, out, errOut)
	}
	write("101.3 Mbit/s")
	out, _, err = run(t, "-o", "json", "check", sheet, "--lesson", checkLesson)
	var r struct {
		Right    int
		Verdicts []struct{ ID, Reason string }
	}
	if err != nil || json.Unmarshal([]byte(out), &r) != nil || r.Right != 6 || !strings.Contains(r.Verdicts[4].Reason, "handout's example") {
		t.Errorf("check -o json: %v\n%s", err, out)
	}
}

// A bad worksheet is a usage error naming FILE:LINE; a class folder gets
// its summary files.
func TestCheckBadWorksheetAndClass(t *testing.T) {
	dir := t.TempDir()
	sheet := filepath.Join(dir, "ada", "worksheet.yaml")
	os.MkdirAll(filepath.Dir(sheet), 0o755)
	os.WriteFile(sheet, []byte("lesson: sawtooth-test\nanswers:\n  q1: 12 furlongs\n"), 0o644)
	_, _, err := run(t, "check", sheet, "--lesson", checkLesson)
	if _, usage := err.(usageError); !usage || !strings.Contains(err.Error(), sheet+":3: answers.q1:") {
		t.Errorf("check: %v, want a usage error at %s:3", err, sheet)
	}
	os.WriteFile(sheet, []byte("lesson: sawtooth-test\nstudent: Ada\nanswers:\n  q1: 114.2 Mbit/s\n"), 0o644)
	out, errOut, err := run(t, "check", "--class", dir, "--lesson", checkLesson)
	if err != nil || !strings.Contains(out, "1 students checked") {
		t.Fatalf("check --class: %v\n%s%s", err, out, errOut)
	}
	for _, f := range []string{"summary.csv", "summary.html"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
}

// validate checks a lesson file as a lesson.
func TestValidateLesson(t *testing.T) {
	out, errOut, err := run(t, "validate", checkLesson)
	if err != nil || !strings.Contains(out, "lesson sawtooth-test is valid: 7 questions") {
		t.Errorf("validate: %v\n%s%s", err, out, errOut)
	}
	file := filepath.Join(t.TempDir(), "lesson.yaml")
	lab, _ := filepath.Abs("../../harness/lesson/testdata/lab.yaml")
	os.WriteFile(file, []byte("lesson: x\nlab: "+lab+"\nquestions:\n  - id: q1\n    kind: measurement\n    quantity: goodput\n    unit: Mbit/s\n    variant: vcmux\n    point: {from: h1, to: h2, test: UDP_STREAM, size: 485}\n"), 0o644)
	_, errOut, err = run(t, "validate", file)
	if err == nil || !strings.Contains(errOut, file+":4: questions.q1.point: no experiment") {
		t.Errorf("validate: %v, stderr %q", err, errOut)
	}
}
