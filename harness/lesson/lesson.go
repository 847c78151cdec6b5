// Package lesson is a lesson's questions and a student's worksheet: it
// decodes lesson.yaml and worksheet.yaml (errors FILE:LINE: KEY: message,
// as lab files), works out each question's figure from the theory that
// draws the ceilings (harness/theory) or from the student's results folder,
// and checks the answers, naming the slip behind a wrong prediction by
// recomputing the theory with one change at a time.
package lesson

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/atmlab/atmlab/harness/perf"
	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/labfile"
	"github.com/atmlab/atmlab/topologies/labyaml"
)

// MaxFileBytes bounds a lesson or worksheet file.
const MaxFileBytes = 1 << 20

// MaxQuestions bounds a lesson's questions.
const MaxQuestions = 200

// Kinds of question.
const (
	Prediction  = "prediction"
	Measurement = "measurement"
	Explanation = "explanation"
	Number      = "number"
)

// quantities are what a question may ask for, with the dimension of the
// answer and the kinds that may ask for it.
var quantities = map[string]struct {
	dim   Dimension
	kinds []string
}{
	"goodput":            {Rate, []string{Prediction, Measurement, Number}},
	"cells_per_pdu":      {Cells, []string{Prediction, Number}},
	"pdu_octets":         {Octets, []string{Prediction, Number}},
	"padding_octets":     {Octets, []string{Prediction, Number}},
	"transactions_per_s": {PerSec, []string{Prediction, Measurement, Number}},
	"rtt":                {Time, []string{Prediction, Measurement, Number}},
	"ceiling_share":      {Ratio, []string{Measurement, Number}},
	"bdp_octets":         {Octets, []string{Prediction, Number}},
	"number":             {"", []string{Number}},
}

// defaultUnits are the units of the quantities that need no unit: key.
var defaultUnits = map[string]string{"cells_per_pdu": "cells", "transactions_per_s": "/s", "ceiling_share": "%"}

// Point is what a question is about: a test from one host to another at a
// message size, as a lab's experiment measures it.
type Point struct {
	From, To, Test string
	Size           int
	SockBuf        int // -1: any
}

func (p Point) String() string { return fmt.Sprintf("%s→%s %s %d", p.From, p.To, p.Test, p.Size) }

// Question is one question of a lesson.
type Question struct {
	Line     int
	ID       string
	Kind     string
	Ask      string
	Point    Point
	Variant  string // "base" when not given
	Quantity string
	Unit     string
	Tol      Tolerance
	Answer   *float64   // kind number: the teacher's figure, in base units
	Example  *float64   // the handout's example figure (measurement), in base units
	Keywords [][]string // explanation: each inner list, one of its words
}

// Dim is the dimension of the question's answer.
func (q *Question) Dim() Dimension {
	if d := quantities[q.Quantity].dim; d != "" {
		return d
	}
	u, _ := lookupUnit(q.Unit)
	return u.dim
}

// Lesson is a decoded lesson.yaml with its lab.
type Lesson struct {
	File      string
	Name      string
	Title     string
	LabFile   string // as resolved against the lesson's folder
	Lab       *topologies.Lab
	Questions []*Question
}

// Question returns the question of that id, or nil.
func (l *Lesson) Question(id string) *Question {
	for _, q := range l.Questions {
		if q.ID == id {
			return q
		}
	}
	return nil
}

var (
	nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)
	idRE   = regexp.MustCompile(`^[a-z0-9_-]{1,32}$`)
)

// IsLesson reports whether a YAML file's contents are a lesson: its top
// mapping has a lesson: key (a lab file has name:).
func IsLesson(data []byte) bool {
	var root yaml.Node
	if yaml.Unmarshal(data, &root) != nil || len(root.Content) == 0 || root.Content[0].Kind != yaml.MappingNode {
		return false
	}
	m := root.Content[0]
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == "lesson" {
			return true
		}
	}
	return false
}

// Load reads and checks a lesson file: its keys, its lab (which must
// validate), and that every question's point exists in the lab. All
// problems come back at once, joined, each a *labyaml.Error.
func Load(path string) (*Lesson, error) {
	data, err := readFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}

func readFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(data) > MaxFileBytes {
		return nil, &labyaml.Error{File: path, Line: 1, Key: "yaml", Msg: fmt.Sprintf("over %d bytes: not a lesson or worksheet", MaxFileBytes)}
	}
	return data, nil
}

// Parse decodes a lesson file's contents (file names it in errors; its
// lab: is read relative to file's folder) and checks it against its lab.
func Parse(file string, data []byte) (*Lesson, error) {
	d := &decoder{labyaml.Decoder{File: file}}
	root := d.document(data)
	if root == nil {
		return nil, errors.Join(d.Errs...)
	}
	l := &Lesson{File: file}
	keys := d.mapping(root, "", []string{"lesson", "title", "lab", "questions"}, []string{"lesson", "lab", "questions"})
	if n := keys["lesson"]; n != nil {
		l.Name = d.str(n, "lesson")
		if l.Name != "" && !nameRE.MatchString(l.Name) {
			d.errorf(n, "lesson", "%q: a name of lowercase letters, digits and dashes, such as aal5-sawtooth", l.Name)
		}
	}
	if n := keys["title"]; n != nil {
		l.Title = d.str(n, "title")
	}
	var labNode *yaml.Node
	if n := keys["lab"]; n != nil {
		labNode = n
		if s := d.str(n, "lab"); s != "" {
			l.LabFile = filepath.Join(filepath.Dir(file), s)
			if filepath.IsAbs(s) {
				l.LabFile = s
			}
		}
	}
	if n := keys["questions"]; n != nil {
		if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
			d.errorf(n, "questions", "want a list of questions, each with id: and kind:")
		} else if len(n.Content) > MaxQuestions {
			d.errorf(n, "questions", "%d questions: a lesson holds at most %d", len(n.Content), MaxQuestions)
		} else {
			seen := map[string]int{}
			for _, qn := range n.Content {
				q := d.question(qn)
				if q == nil {
					continue
				}
				if first, ok := seen[q.ID]; ok && q.ID != "" {
					d.errorf(qn, "questions."+q.ID, "id %s again, first on line %d: ids are unique", q.ID, first)
				}
				seen[q.ID] = q.Line
				l.Questions = append(l.Questions, q)
			}
		}
	}
	if len(d.Errs) > 0 {
		return nil, errors.Join(d.Errs...)
	}
	if l.LabFile != "" {
		lab, err := labfile.Load(l.LabFile)
		if err != nil {
			d.errorf(labNode, "lab", "%s does not validate: %v", l.LabFile, firstLine(err))
		} else {
			l.Lab = lab
			for _, q := range l.Questions {
				d.checkPoint(l, q)
			}
		}
	}
	if len(d.Errs) > 0 {
		return nil, errors.Join(d.Errs...)
	}
	return l, nil
}

// firstLine is an error's first problem, with how many more there are.
func firstLine(err error) string {
	var list []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		list = j.Unwrap()
	}
	if len(list) > 1 {
		return fmt.Sprintf("%v (and %d more: atmlab validate it)", list[0], len(list)-1)
	}
	return err.Error()
}

// question decodes one entry of questions:.
func (d *decoder) question(n *yaml.Node) *Question {
	q := &Question{Line: n.Line, Variant: "base"}
	keys := d.mapping(n, "questions", []string{"id", "kind", "ask", "point", "variant", "quantity", "unit", "tolerance", "answer", "example", "keywords"}, []string{"id", "kind"})
	if keys == nil {
		return nil
	}
	key := "questions"
	if k := keys["id"]; k != nil {
		q.ID = d.str(k, "questions.id")
		if !idRE.MatchString(q.ID) {
			d.errorf(k, "questions.id", "%q: an id of lowercase letters, digits, _ and -, such as q1", q.ID)
		}
		key += "." + q.ID
	}
	if k := keys["kind"]; k != nil {
		q.Kind = d.str(k, key+".kind")
		if !slices.Contains([]string{Prediction, Measurement, Explanation, Number}, q.Kind) {
			d.errorf(k, key+".kind", "%q: use prediction, measurement, explanation or number", q.Kind)
			return nil
		}
	}
	if k := keys["ask"]; k != nil {
		q.Ask = d.str(k, key+".ask")
	}
	need := func(name, why string) *yaml.Node {
		if keys[name] == nil {
			d.errorf(n, key+"."+name, "missing; a %s question needs it (%s)", q.Kind, why)
		}
		return keys[name]
	}
	refuse := func(names ...string) {
		for _, name := range names {
			if k := keys[name]; k != nil {
				d.errorf(k, key+"."+name, "not for a %s question", q.Kind)
			}
		}
	}
	if q.Kind == Explanation {
		refuse("point", "variant", "quantity", "unit", "tolerance", "answer", "example")
		if k := need("keywords", "lists of words, one of each list must appear: [[trailer, \"8\"], [cell]]"); k != nil {
			q.Keywords = d.keywords(k, key+".keywords")
		}
		return q
	}
	refuse("keywords")
	if q.Kind == Number && keys["quantity"] == nil {
		q.Quantity = "number"
	} else if k := need("quantity", "what is asked: goodput, cells_per_pdu, pdu_octets, padding_octets, transactions_per_s, rtt, ceiling_share, bdp_octets or number"); k != nil {
		q.Quantity = d.str(k, key+".quantity")
		info, ok := quantities[q.Quantity]
		switch {
		case !ok:
			d.errorf(k, key+".quantity", "%q: use goodput, cells_per_pdu, pdu_octets, padding_octets, transactions_per_s, rtt, ceiling_share, bdp_octets or number", q.Quantity)
			return nil
		case !slices.Contains(info.kinds, q.Kind):
			d.errorf(k, key+".quantity", "%s has no %s check: it may be asked as %s (number: give answer:)", q.Quantity, q.Kind, strings.Join(info.kinds, ", "))
			return nil
		}
	}
	if u, ok := defaultUnits[q.Quantity]; ok && keys["unit"] == nil {
		q.Unit = u
	} else if k := need("unit", "what the student answers in, such as Mbit/s, cells, octets, ms or %"); k != nil {
		q.Unit = d.str(k, key+".unit")
		u, ok := lookupUnit(q.Unit)
		switch {
		case !ok:
			d.errorf(k, key+".unit", "%q: use bit/s kbit/s Mbit/s Gbit/s MB/s MiB/s, octets, cells, s ms us, /s or %%", q.Unit)
		case quantities[q.Quantity].dim != "" && u.dim != quantities[q.Quantity].dim:
			d.errorf(k, key+".unit", "%s is %s; %s is %s", q.Quantity, quantities[q.Quantity].dim, q.Unit, u.dim)
		}
	}
	q.Tol = Tolerance{Percent: 1, Text: "1%"}
	if k := keys["tolerance"]; k != nil && q.Dim() != "" {
		t, err := parseTolerance(d.str(k, key+".tolerance"), q.Dim())
		if err != nil {
			d.errorf(k, key+".tolerance", "%v", err)
		}
		q.Tol = t
	}
	figure := func(name string) *float64 {
		k := keys[name]
		if k == nil {
			return nil
		}
		f, err := parseFigure(d.str(k, key+"."+name))
		if err != nil {
			d.errorf(k, key+"."+name, "%v", err)
			return nil
		}
		v, dim := f.base(q.Unit)
		if dim != q.Dim() {
			d.errorf(k, key+"."+name, "%s is %s; the question asks for %s", f, dim, q.Dim())
			return nil
		}
		return &v
	}
	if q.Kind == Number {
		refuse("example", "point", "variant")
		if need("answer", "the figure the teacher gives, with the lesson's unit or its own") != nil {
			q.Answer = figure("answer")
		}
		return q
	}
	refuse("answer")
	if q.Kind == Measurement {
		q.Example = figure("example")
	} else {
		refuse("example")
	}
	if k := need("point", "{from: h1, to: h2, test: UDP_STREAM, size: 485}"); k != nil {
		q.Point = d.point(k, key+".point")
	}
	if k := keys["variant"]; k != nil {
		q.Variant = d.str(k, key+".variant")
	}
	return q
}

// point decodes a question's point: mapping.
func (d *decoder) point(n *yaml.Node, key string) Point {
	var p Point
	p.SockBuf = -1
	keys := d.mapping(n, key, []string{"from", "to", "test", "size", "sockbuf"}, []string{"from", "to", "test"})
	if k := keys["sockbuf"]; k != nil {
		s := d.str(k, key+".sockbuf")
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 || n > 1<<30 {
			d.errorf(k, key+".sockbuf", "%q: want a socket buffer in octets (0: the system's default), as the experiment's sockbufs: give it", s)
		}
		p.SockBuf = n
	}
	if k := keys["from"]; k != nil {
		p.From = d.str(k, key+".from")
	}
	if k := keys["to"]; k != nil {
		p.To = d.str(k, key+".to")
	}
	if k := keys["test"]; k != nil {
		p.Test = d.str(k, key+".test")
		if !slices.Contains(perf.Tests, p.Test) {
			d.errorf(k, key+".test", "%q: use one of %s", p.Test, strings.Join(perf.Tests, ", "))
		}
	}
	if k := keys["size"]; k != nil {
		s := d.str(k, key+".size")
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 1<<20 {
			d.errorf(k, key+".size", "%q: want a message size in octets, from 1", s)
		}
		p.Size = n
	}
	return p
}

// keywords decodes [[a, b], [c]].
func (d *decoder) keywords(n *yaml.Node, key string) [][]string {
	var out [][]string
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		d.errorf(n, key, "want a list of lists of words: [[trailer, \"8\"], [cell]]")
		return nil
	}
	for _, in := range n.Content {
		var words []string
		list := in.Content
		if in.Kind == yaml.ScalarNode {
			list = []*yaml.Node{in}
		} else if in.Kind != yaml.SequenceNode || len(in.Content) == 0 {
			d.errorf(in, key, "want a list of words, any one of which must appear: [trailer, \"8\"]")
			continue
		}
		for _, w := range list {
			if s := strings.TrimSpace(d.str(w, key)); s != "" {
				words = append(words, strings.ToLower(s))
			}
		}
		if len(words) > 0 {
			out = append(out, words)
		}
	}
	return out
}

// checkPoint checks a question against the lesson's lab: its variant, its
// hosts, and that its figure can be worked out (a prediction) or is
// measured by one of the lab's experiments (a measurement).
func (d *decoder) checkPoint(l *Lesson, q *Question) {
	if q.Kind == Explanation || q.Kind == Number {
		return
	}
	key := "questions." + q.ID
	node := &yaml.Node{Line: q.Line}
	lab, err := l.Lab.WithVariant(q.Variant)
	if err != nil {
		d.errorf(node, key+".variant", "%q: %s has no such variant (%v)", q.Variant, l.LabFile, firstLine(err))
		return
	}
	for _, h := range []string{q.Point.From, q.Point.To} {
		if n := lab.Node(h); n == nil || n.Kind != topologies.KindHost {
			d.errorf(node, key+".point", "%s is not a host of lab %s", h, lab.Name)
			return
		}
	}
	if q.Kind == Prediction {
		if _, err := Expected(lab, q, slip{}); err != nil {
			d.errorf(node, key+".point", "%v", err)
		}
		return
	}
	for _, e := range lab.Experiments {
		sockbufs := e.SockBufs
		if len(sockbufs) == 0 {
			sockbufs = []int{0}
		}
		if e.From == q.Point.From && e.To == q.Point.To && slices.Contains(e.Tests, q.Point.Test) && (q.Point.Size == 0 || slices.Contains(e.Sizes, q.Point.Size)) &&
			(q.Point.SockBuf < 0 || slices.Contains(sockbufs, q.Point.SockBuf)) {
			return
		}
	}
	d.errorf(node, key+".point", "no experiment of %s measures %s in variant %s: the student would have no record to answer from", l.LabFile, q.Point, q.Variant)
}

// decoder collects a lesson's or a worksheet's problems, each at its line.
type decoder struct{ labyaml.Decoder }

func (d *decoder) errorf(n *yaml.Node, key, format string, a ...any) {
	d.Errorf(n, key, format, a...)
}

// document parses data into its top mapping, or records why not.
func (d *decoder) document(data []byte) *yaml.Node {
	top, err := labyaml.Document(d.File, data, "a second YAML document: a lesson or worksheet is one document; remove the --- and what follows")
	if err != nil {
		d.Errs = append(d.Errs, err)
		return nil
	}
	if top == nil || top.Kind != yaml.MappingNode {
		d.errorf(&yaml.Node{Line: 1}, "yaml", "want a mapping of keys (lesson: ... or the worksheet's lesson:, student:, answers:)")
		return nil
	}
	return top
}

// mapping checks n is a mapping of known keys, each once, with the
// required ones present, and returns the values by key.
func (d *decoder) mapping(n *yaml.Node, path string, allowed, required []string) map[string]*yaml.Node {
	return d.Keys(n, path, allowed, required)
}

// str is a scalar's text.
func (d *decoder) str(n *yaml.Node, key string) string {
	s, _ := d.Scalar(key, n)
	return s
}
