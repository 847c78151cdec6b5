package lesson

import (
	"errors"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/atmlab/atmlab/topologies/labyaml"
)

// Worksheet is what a student hands in: their answers, and where their
// lab run put its results.
type Worksheet struct {
	File    string
	Lesson  string
	Student string
	Results string // the results folder, resolved against the worksheet's folder; "" when not given
	Answers map[string]*Answer
}

// Answer is one answer as written: a figure, or text (an explanation, or
// a figure left blank).
type Answer struct {
	Line   int
	Text   string
	Figure *Figure // nil for text and blank answers
}

// LoadWorksheet reads a worksheet; see ParseWorksheet.
func LoadWorksheet(path string) (*Worksheet, error) {
	data, err := readFile(path)
	if err != nil {
		return nil, err
	}
	return ParseWorksheet(path, data)
}

// ParseWorksheet decodes a worksheet's contents (file names it in
// errors). An answer that starts with a digit, a sign or a point is a
// figure and must read as one ("135.6 Mbit/s", "11 cells"); anything else
// is text. Which answers a lesson expects is Check's business.
func ParseWorksheet(file string, data []byte) (*Worksheet, error) {
	d := &decoder{labyaml.Decoder{File: file}}
	root := d.document(data)
	if root == nil {
		return nil, errors.Join(d.Errs...)
	}
	w := &Worksheet{File: file, Answers: map[string]*Answer{}}
	keys := d.mapping(root, "", []string{"lesson", "student", "results", "answers"}, []string{"lesson", "answers"})
	if n := keys["lesson"]; n != nil {
		w.Lesson = d.str(n, "lesson")
		if w.Lesson != "" && !nameRE.MatchString(w.Lesson) {
			d.errorf(n, "lesson", "%q: a lesson's name, such as aal5-sawtooth", w.Lesson)
		}
	}
	if n := keys["student"]; n != nil {
		w.Student = d.str(n, "student")
	}
	if n := keys["results"]; n != nil {
		if s := d.str(n, "results"); s != "" {
			w.Results = s
			if !filepath.IsAbs(s) {
				w.Results = filepath.Join(filepath.Dir(file), s)
			}
		}
	}
	if n := keys["answers"]; n != nil {
		switch {
		case n.Kind == yaml.ScalarNode && n.Tag == "!!null":
		case n.Kind != yaml.MappingNode:
			d.errorf(n, "answers", "want a mapping of question id to answer: q1: 135.6 Mbit/s")
		case len(n.Content)/2 > MaxQuestions:
			d.errorf(n, "answers", "%d answers: a lesson holds at most %d questions", len(n.Content)/2, MaxQuestions)
		default:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				key := "answers." + k.Value
				if !idRE.MatchString(k.Value) {
					d.errorf(k, key, "%q is no question id (such as q1)", k.Value)
					continue
				}
				if w.Answers[k.Value] != nil {
					d.errorf(k, key, "given twice; keep one")
					continue
				}
				a := &Answer{Line: v.Line}
				if v.Kind == yaml.ScalarNode && v.Tag != "!!null" {
					a.Text = v.Value
				} else if v.Kind != yaml.ScalarNode {
					d.errorf(v, key, "want a single value: a figure with its unit, or a sentence in quotes")
					continue
				}
				if looksNumeric(a.Text) {
					f, err := parseFigure(a.Text)
					if err != nil {
						d.errorf(v, key, "%v", err)
						continue
					}
					a.Figure = &f
				}
				w.Answers[k.Value] = a
			}
		}
	}
	if len(d.Errs) > 0 {
		return nil, errors.Join(d.Errs...)
	}
	return w, nil
}

// looksNumeric reports whether an answer is written as a figure: it
// starts as a number does and has at most one word (its unit) after it;
// "485 octets and the trailer ..." is a sentence.
func looksNumeric(s string) bool {
	s = strings.TrimSpace(s)
	if s == "" || !strings.ContainsRune("0123456789.-+", rune(s[0])) {
		return false
	}
	return len(strings.Fields(s)) <= 2
}
