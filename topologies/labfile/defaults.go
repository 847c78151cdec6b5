package labfile

import (
	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/defaults"
)

// linkDefaults gives each impairment pipe its medium's limit unless the
// lab file set one: an ATM link's always (its cell link bounds the cells
// in flight whatever else it does), an Ethernet direction's only when it
// has an impairment, since a channel without one has no pipe to bound and
// 0 says so (a hub's links never have one). It runs after every check, of
// the lab as written and of a variant, which may add a delay.
func linkDefaults(lab *topologies.Lab) {
	for _, l := range lab.Links {
		for _, im := range []*topologies.Impair{&l.AB.Impair, &l.BA.Impair} {
			switch {
			case im.Limit != 0:
			case l.ATM != nil:
				im.Limit = defaults.ATMLimit
			case !im.IsZero():
				im.Limit = defaults.Limit
			}
		}
	}
}
