package cells

import "fmt"

// AAL is an ATM adaptation layer: a value, like Encap, so that the
// lab-file package and theory name a link's layers without the ATM model.
type AAL int

// Adaptation layers (ITU-T I.363.5, I.363.3).
const (
	AAL5 AAL = iota
	AAL34
)

func (a AAL) String() string {
	if a == AAL34 {
		return "aal34"
	}
	return "aal5"
}

// ParseAAL reads "aal5" or "aal34".
func ParseAAL(s string) (AAL, error) {
	switch s {
	case "aal5":
		return AAL5, nil
	case "aal34":
		return AAL34, nil
	}
	return 0, fmt.Errorf("unknown AAL %q: use aal5 or aal34", s)
}

// Cells returns how many cells an SDU of n octets takes.
func (a AAL) Cells(n int) int {
	if a == AAL34 {
		return AAL34Cells(n)
	}
	return AAL5Cells(n)
}
