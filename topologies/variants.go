package topologies

import (
	"errors"
	"fmt"
	"time"

	"github.com/atmlab/atmlab/emulator/units"
	"github.com/atmlab/atmlab/topologies/labyaml"
)

// Variant is a named what-if: overrides of the topology, built and measured
// in turn with the same experiments as the lab as written ("base").
type Variant struct {
	Name string
	Line int
	Set  []Override
	Grid []string // a sweep's point: its value of each parameter (Lab.Sweep); nil for a named variant
}

// Override changes one thing: a link's rate, delay, jitter or loss (both
// directions, by one of its endpoints), an ATM link's PHY, AAL or
// encapsulation, or a node's kind, MPLS, CPU, switch buffer or router cost.
type Override struct {
	Line          int
	Link          string // endpoint naming the link
	Node          string
	Rate          units.BitRate
	Delay, Jitter *time.Duration
	Loss          *float64
	PHY           PHY
	AAL           AAL
	Encap         Encap
	Kind          Kind
	MPLS          *bool
	CPU           *FrameCPU   // a host's or switch's processing limit (zero costs: none)
	Buffer        units.Size  // a switch's output buffer per port
	Cost          *RouterCost // a router's costs, all of them
}

// Source makes a lab's variants: the lab file's YAML tree it was
// resolved from, kept in memory (package labfile's Raw). Labs read back
// from spec.json or built by hand have none.
type Source interface {
	// Variant returns the lab as the named variant makes it ("base": as
	// written), resolved and checked, or every problem found.
	Variant(name string) (*Lab, []error)
}

// WithVariant returns the lab as the named variant makes it: a copy of
// the lab as written, resolved once from the file's YAML tree kept in
// memory (so the base lab is untouched; the file is not read again), the
// overrides applied and the result checked as a lab file would be. "base"
// is the lab as written.
func (l *Lab) WithVariant(name string) (*Lab, error) {
	fresh, errs := l.withVariant(name)
	if errs != nil {
		return nil, fmt.Errorf("variant %s: %w", name, errors.Join(errs...))
	}
	return fresh, nil
}

func (l *Lab) withVariant(name string) (*Lab, []error) {
	if l.Source == nil {
		return nil, []error{fmt.Errorf("lab %s was not read from a lab file, so it has no variants", l.Name)}
	}
	return l.Source.Variant(name)
}

// ResolveVariants resolves the lab as each named variant makes it ("base":
// as written; lab run measures Measured's), PVC plans included, so that a
// bad variant fails now, before anything runs: the start of lab run calls
// it. Every problem of every variant comes back at once, joined; a
// lab-file problem is an *labyaml.Error whose message names the variant.
func (l *Lab) ResolveVariants(names []string) ([]*Lab, error) {
	labs := make([]*Lab, 0, len(names))
	if err := l.eachVariant(names, func(v *Lab) { labs = append(labs, v) }); err != nil {
		return nil, err
	}
	return labs, nil
}

// CheckVariants is ResolveVariants for validate: each variant's lab is
// dropped once checked, so that memory stays one lab's.
func (l *Lab) CheckVariants(names []string) error {
	return l.eachVariant(names, func(*Lab) {})
}

// eachVariant resolves the named variants in turn, handing each good one
// to keep, and returns every problem joined.
func (l *Lab) eachVariant(names []string, keep func(*Lab)) error {
	var problems []error
	for _, name := range names {
		prefix := func(err error) error {
			if name == "base" {
				return err
			}
			if e, ok := err.(*labyaml.Error); ok {
				e2 := *e
				e2.Msg = "variant " + name + ": " + e.Msg
				return &e2
			}
			return fmt.Errorf("variant %s: %w", name, err)
		}
		v, errs := l.withVariant(name)
		for _, err := range errs {
			problems = append(problems, prefix(err))
		}
		if errs == nil {
			keep(v)
		}
	}
	return errors.Join(problems...)
}
