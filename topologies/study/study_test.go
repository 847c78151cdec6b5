package study

import (
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/atmlab/atmlab/topologies/labyaml"
)

// A study's sections decode on their own, given what they may name: an
// experiment between two hosts, a finding about it and a reference figure,
// each name checked against the lab and its experiments.
func TestSectionsDecodeAgainstTheLabsNames(t *testing.T) {
	var top yaml.Node
	if err := yaml.Unmarshal([]byte(`
experiments: [{name: tcp, from: h1, to: h2, tests: [TCP_STREAM], sizes: [1460]}]
reference: [{experiment: tcp, test: TCP_STREAM, value: 11.41, unit: MiB/s, source: a paper}]
findings: [{claim: c, why: w, measured: {experiment: tcp, test: TCP_STREAM, variant: slow}, against: {experiment: nope, test: TCP_STREAM}, change: [-70, -30]}]
`), &top); err != nil {
		t.Fatal(err)
	}
	m := top.Content[0]
	s := &Sections{
		File:    "lab.yaml",
		Host:    func(n string) (string, bool) { return "10.0.0." + n[1:], n == "h1" || n == "h2" },
		Variant: func(n string) bool { return n == "slow" },
	}
	d := &labyaml.Decoder{File: "lab.yaml"}
	DecodeExperiments(d, m.Content[1], s)
	DecodeReferences(d, m.Content[3], s)
	DecodeFindings(d, m.Content[5], s)
	if len(s.Experiments) != 1 || s.Experiments[0].From != "h1" || len(s.References) != 1 || len(s.Findings) != 1 {
		t.Fatalf("decoded %+v", s)
	}
	if got := s.References[0].Label(); got != "11.41 MiB/s" {
		t.Errorf("Label = %q", got)
	}
	if got, want := s.References[0].Normalized(), 11.41*8*(1<<20); got != want {
		t.Errorf("Normalized = %g, want %g", got, want)
	}
	if len(d.Errs) != 1 || d.Errs[0].Error() != `lab.yaml:4: findings[0].against.experiment: no experiment named "nope"` {
		t.Errorf("errors %v, want the one unknown experiment", d.Errs)
	}
}

// Grades run A to D, then F: at or above a threshold when more is better,
// at or below it when less is.
func TestLetter(t *testing.T) {
	bw, cpu := [4]float64{900, 800, 700, 600}, [4]float64{10, 20, 30, 40}
	for _, c := range []struct {
		v      float64
		higher bool
		want   string
	}{{950, true, "A"}, {800, true, "B"}, {650, true, "D"}, {599, true, "F"}, {5, false, "A"}, {30, false, "C"}, {41, false, "F"}} {
		scale := bw
		if !c.higher {
			scale = cpu
		}
		if got := Letter(c.v, scale, c.higher); got != c.want {
			t.Errorf("Letter(%g, higher %v) = %s, want %s", c.v, c.higher, got, c.want)
		}
	}
}
