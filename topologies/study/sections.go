// Package study reads the study parts of a lab file: its experiments,
// hardware reference figures, findings (the claims a lab reproduces),
// grades and figures. Lab runs measure the experiments; the report checks
// the findings and draws the figures. Package topologies decodes the rest
// of the file and calls the Decode functions here, in the file's order.
package study

import (
	"time"

	"gopkg.in/yaml.v3"

	"github.com/atmlab/atmlab/topologies/labyaml"
	"github.com/atmlab/atmlab/topologies/settings"
)

// Sections are a lab file's study as it is decoded, with what its
// entries may name in the rest of the file.
type Sections struct {
	File        string // the lab file, whose directory holds reference files
	Experiments []*Experiment
	References  []*Reference
	Findings    []*Finding
	Grades      *Grades
	Figures     []*Figure
	// ToolUses are the tools the study names, for the harness to check.
	ToolUses []ToolUse
	// UDPSizeUses are the sizes its experiments' UDP tests send, for the
	// harness to check against each tool's limits.
	UDPSizeUses []UDPSizeUse

	// Host returns a host's first IPv4 address ("" for none); false when
	// name is not a host of the lab.
	Host func(name string) (addr string, host bool)
	// Variant reports whether the lab file names a variant ("base", the
	// lab as written, aside).
	Variant func(name string) bool
}

// decoder decodes the study's sections, collecting problems in the lab
// file's decoder.
type decoder struct{ *labyaml.Decoder }

// duration decodes a Go duration from 0 to settings.MaxDuration.
func (d *decoder) duration(key string, v *yaml.Node, into *time.Duration) {
	d.DurationIn(key, v, settings.MaxDuration, into)
}

// DecodeExperiments decodes experiments: into s.
func DecodeExperiments(ld *labyaml.Decoder, n *yaml.Node, s *Sections) {
	(&decoder{ld}).experiments(n, s)
}

// DecodeReferences decodes reference: into s.
func DecodeReferences(ld *labyaml.Decoder, n *yaml.Node, s *Sections) {
	(&decoder{ld}).references(n, s)
}

// CheckExperimentVariants checks that the variants experiments name
// exist; it runs once the file's variants are read.
func CheckExperimentVariants(ld *labyaml.Decoder, s *Sections) {
	(&decoder{ld}).experimentVariants(s)
}

// DecodeFindings decodes findings: into s.
func DecodeFindings(ld *labyaml.Decoder, n *yaml.Node, s *Sections) {
	(&decoder{ld}).findings(n, s)
}

// DecodeGrades decodes grades: into s.
func DecodeGrades(ld *labyaml.Decoder, n *yaml.Node, s *Sections) {
	(&decoder{ld}).grades(n, s)
}

// DecodeFigures decodes figures: into s.
func DecodeFigures(ld *labyaml.Decoder, n *yaml.Node, s *Sections) {
	(&decoder{ld}).figures(n, s)
}
