package topologies

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// SpecFile is where lab run writes the resolved labs beside its results.
const SpecFile = "spec.json"

// Spec is a run's resolved labs as spec.json holds them, one per variant
// in the order lab run measured them: what the report reads, so that it
// describes the labs the runs were built from, not the lab file as this
// atmlab would resolve it again.
type Spec struct {
	Variants []SpecVariant `json:"variants"`
}

// SpecVariant is one variant's resolved lab.
type SpecVariant struct {
	Name string `json:"variant"`
	Lab  *Lab   `json:"lab"`
}

// SpecJSON writes the resolved labs of a run, one per variant in the
// order given (lab run's: base, then each variant or grid point), as JSON:
// every default, check and PVC plan the models were built from. The lab
// file's variants and sweep, the same in every lab, are written once, in
// the first (where the report reads them): in each, a 1000-point grid's
// spec.json held a million variants. The same lab file gives the same
// bytes.
func SpecJSON(names []string, labs []*Lab) ([]byte, error) {
	var spec Spec
	for i, l := range labs {
		if i > 0 {
			c := *l
			c.Variants, c.Sweep = nil, nil
			l = &c
		}
		spec.Variants = append(spec.Variants, SpecVariant{names[i], l})
	}
	b, err := json.MarshalIndent(spec, "", "  ")
	return append(b, '\n'), err
}

// ReadSpec reads what SpecJSON wrote. A spec with no variant, or a
// variant without its lab, is an error: the report would have nothing to
// read. Labs read back carry no lab file tree, so they have no variants
// to make (WithVariant): each variant's lab is in the spec already.
func ReadSpec(data []byte) (*Spec, error) {
	var spec Spec
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&spec); err != nil {
		return nil, err
	}
	if len(spec.Variants) == 0 {
		return nil, fmt.Errorf("it holds no variant")
	}
	for i, v := range spec.Variants {
		if v.Name == "" || v.Lab == nil {
			return nil, fmt.Errorf("variant %d has no name or no lab", i)
		}
	}
	return &spec, nil
}

// Lab returns the named variant's lab, or nil.
func (s *Spec) Lab(variant string) *Lab {
	for _, v := range s.Variants {
		if v.Name == variant {
			return v.Lab
		}
	}
	return nil
}
