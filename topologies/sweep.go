package topologies

// Sweep is a lab file's parameter grid: every combination of its
// parameters' values is a variant (Lab.Variants, after the named ones),
// measured with the lab's experiments instead of the lab as written.
type Sweep struct {
	Line   int
	Params []*Param
}

// Param is one swept parameter: a variant key (rate, delay, kind...) of
// one or more links or nodes and the values it takes, as written.
type Param struct {
	Name   string // the key, or the entry's name: when two set the same key
	Key    string
	Line   int
	Values []string
}

// Measured lists the variants lab run measures, in order: the lab as
// written ("base") and its named variants; with a sweep, the named
// variants and the grid's points, not the lab as written.
func (l *Lab) Measured() []string {
	var names []string
	if l.Sweep == nil {
		names = append(names, "base")
	}
	for _, v := range l.Variants {
		names = append(names, v.Name)
	}
	return names
}

// GridOf returns the grid values of the named variant, one per parameter
// of the lab's sweep, or nil if it is not a grid point.
func (l *Lab) GridOf(variant string) []string {
	for _, v := range l.Variants {
		if v.Name == variant {
			return v.Grid
		}
	}
	return nil
}
