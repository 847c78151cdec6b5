package cut

import (
	"fmt"
	"strings"

	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/split"
)

// Of is the part named part of lab, split as its parts: say.
func Of(lab *topologies.Lab, part string) (*Part, error) {
	plan, err := split.Of(lab)
	if err != nil {
		return nil, err
	}
	if plan == nil {
		return nil, fmt.Errorf("%s: --part %s: the lab has no parts: (a split lab lists its parts' nodes under parts:)", lab.File, part)
	}
	var names []string
	for _, p := range plan.Parts {
		if p.Name == part {
			return NewPart(lab, part, p.Nodes, plan.PartOf)
		}
		names = append(names, p.Name)
	}
	return nil, fmt.Errorf("%s: --part %s: no such part; the lab's parts are %s", lab.File, part, strings.Join(names, ", "))
}
