package topologies

import "encoding/json"

// SpecFile is where lab run writes the resolved labs beside its results.
const SpecFile = "spec.json"

// SpecJSON writes the resolved labs of a run, one per variant in the
// order given (lab run's: base, then each variant or grid point), as JSON:
// every default, check and PVC plan the models were built from. The same
// lab file gives the same bytes.
func SpecJSON(names []string, labs []*Lab) ([]byte, error) {
	type variant struct {
		Name string `json:"variant"`
		Lab  *Lab   `json:"lab"`
	}
	spec := struct {
		Variants []variant `json:"variants"`
	}{}
	for i, l := range labs {
		spec.Variants = append(spec.Variants, variant{names[i], l})
	}
	b, err := json.MarshalIndent(spec, "", "  ")
	return append(b, '\n'), err
}
