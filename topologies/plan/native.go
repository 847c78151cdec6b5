package plan

import (
	"fmt"
	"strings"

	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/labyaml"
)

// CheckNative checks the experiments that name a native AAL test: atmlab's
// tool measures them, over a native PVC between their hosts.
func CheckNative(lab *topologies.Lab) []error {
	var errs []error
	for i, e := range lab.Experiments {
		for _, t := range e.Tests {
			if !strings.HasPrefix(t, "AAL") {
				continue
			}
			key := fmt.Sprintf("experiments[%d].tests", i)
			if e.Tool != "atmlab" {
				errs = append(errs, &labyaml.Error{File: lab.File, Line: e.Line, Key: key, Msg: fmt.Sprintf("%s is atmlab's own test of the native AAL API; %s has none: leave out tool: %s", t, e.Tool, e.Tool)})
			} else if _, _, err := lab.NativePVC(e.From, e.To); err != nil {
				errs = append(errs, &labyaml.Error{File: lab.File, Line: e.Line, Key: key, Msg: fmt.Sprintf("%s: %v", t, err)})
			}
			break
		}
	}
	return errs
}
