// Package validate is atmlab validate: a lab file's or a lesson's every
// problem and warning, as lines (FILE:LINE: KEY: what is wrong) or JSON.
package validate

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/atmlab/atmlab/harness/labrun"
	"github.com/atmlab/atmlab/harness/lesson"
	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/labfile"
	"github.com/atmlab/atmlab/topologies/split"
)

// Result is one file checked.
type Result struct {
	File   string
	Lab    *topologies.Lab // a lab file's, when it loaded
	Lesson *lesson.Lesson  // a lesson's, when it loaded
	lesson bool            // the file is a lesson
	Err    error           // every problem, joined; nil when valid
}

// File checks the file at path: a lesson (its top key lesson:) as a
// lesson, anything else as a lab file: its tools, and each variant as lab
// run will build it, one at a time.
func File(path string) *Result {
	r := &Result{File: path}
	if r.lesson = isLesson(path); r.lesson {
		r.Lesson, r.Err = lesson.Load(path)
		return r
	}
	if r.Lab, r.Err = labfile.Load(path); r.Err == nil {
		r.Err = errors.Join(labrun.CheckTools(r.Lab), r.Lab.CheckVariants(r.Lab.Measured()))
	}
	return r
}

// Write prints the result as format says (table or json): problems one
// a line to errOut and a summary to out, or one JSON object to out. It
// returns an error that counts the problems, if any.
func (r *Result) Write(out, errOut io.Writer, format string) error {
	problems := flatten(r.Err)
	if format == "json" {
		v := map[string]any{"file": r.File, "valid": r.Err == nil, "problems": lines(problems)}
		if !r.lesson {
			var warnings []string
			if r.Lab != nil {
				warnings = lines(r.Lab.Warnings)
			}
			v["warnings"] = warnings
			if r.Lab != nil {
				v["parts"], v["cuts"] = partsJSON(r.Lab), cutsJSON(r.Lab)
			}
		}
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		enc.Encode(v)
	}
	if r.Err != nil {
		if format == "table" {
			for _, e := range problems {
				fmt.Fprintln(errOut, e)
			}
		}
		return fmt.Errorf("%s: %d problem(s)", r.File, len(problems))
	}
	if format != "table" {
		return nil
	}
	if r.lesson {
		fmt.Fprintf(out, "%s: lesson %s is valid: %d questions on lab %s\n", r.File, r.Lesson.Name, len(r.Lesson.Questions), r.Lesson.Lab.Name)
		return nil
	}
	Warnings(errOut, r.Lab)
	fmt.Fprintf(out, "%s: lab %s is valid: %d nodes, %d links", r.File, r.Lab.Name, len(r.Lab.Nodes), len(r.Lab.Links))
	if len(r.Lab.Warnings) > 0 {
		fmt.Fprintf(out, " (%d warning(s))", len(r.Lab.Warnings))
	}
	fmt.Fprintln(out)
	Cuts(out, r.Lab)
	return nil
}

// Cuts prints where the lab may be cut into parts and why not elsewhere,
// a line per link, after its parts: if it has them.
func Cuts(w io.Writer, lab *topologies.Lab) {
	for _, p := range lab.Parts {
		fmt.Fprintf(w, "  part %s: %s\n", p.Name, strings.Join(p.Nodes, ", "))
	}
	of := partOf(lab)
	for _, v := range split.Candidates(lab) {
		if a, b := of[v.Link.A.Node], of[v.Link.B.Node]; a != b {
			fmt.Fprintf(w, "  %s; cut here, between %s and %s\n", v, a, b)
			continue
		}
		fmt.Fprintf(w, "  %s\n", v)
	}
}

// cut is a link's verdict as validate's JSON gives it.
type cut struct {
	Link      string   `json:"link"`
	Line      int      `json:"line"`
	Cuttable  bool     `json:"cuttable"`
	Why       string   `json:"why"`
	Lookahead string   `json:"lookahead"`
	Parts     []string `json:"parts,omitempty"` // the two parts it joins, when it is cut
}

// partOf maps each node to its part's name (empty for a lab in one piece).
func partOf(lab *topologies.Lab) map[string]string {
	of := map[string]string{}
	for _, p := range lab.Parts {
		for _, n := range p.Nodes {
			of[n] = p.Name
		}
	}
	return of
}

func cutsJSON(lab *topologies.Lab) []cut {
	of := partOf(lab)
	out := []cut{}
	for _, v := range split.Candidates(lab) {
		c := cut{Link: v.Link.A.String() + "-" + v.Link.B.String(), Line: v.Link.Line, Cuttable: v.Cuttable, Why: v.Why, Lookahead: v.Lookahead.String()}
		if a, b := of[v.Link.A.Node], of[v.Link.B.Node]; a != b {
			c.Parts = []string{a, b}
		}
		out = append(out, c)
	}
	return out
}

// partsJSON is the lab's parts: by name, its nodes in file order; empty
// for a lab in one piece.
func partsJSON(lab *topologies.Lab) []map[string]any {
	out := []map[string]any{}
	for _, p := range lab.Parts {
		out = append(out, map[string]any{"name": p.Name, "nodes": p.Nodes})
	}
	return out
}

// Warnings prints the lab file's warnings (loops of switches) one a
// line, as FILE:LINE: warning: KEY: what; validate, up and lab run print
// them alike.
func Warnings(w io.Writer, lab *topologies.Lab) {
	for _, x := range lab.Warnings {
		fmt.Fprintf(w, "%s:%d: warning: %s: %s\n", x.File, x.Line, x.Key, x.Msg)
	}
}

// flatten lists the errors joined in err.
func flatten(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var all []error
		for _, e := range j.Unwrap() {
			all = append(all, flatten(e)...)
		}
		return all
	}
	return []error{err}
}

// lines are errors' texts.
func lines[E error](errs []E) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}

// isLesson reports whether a file is a lesson (its top key lesson:),
// which validate checks as one.
func isLesson(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, lesson.MaxFileBytes))
	return err == nil && lesson.IsLesson(data)
}
