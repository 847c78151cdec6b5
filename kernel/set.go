//go:build linux

package kernel

import (
	"context"
	"fmt"
	"slices"

	"github.com/atmlab/atmlab/control"
	"github.com/atmlab/atmlab/devices"
	"github.com/atmlab/atmlab/emulator/units"
	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/settings"
)

// Set applies a change to a running lab's link and logs it (atmlab set):
// the change is applied on the loop goroutine, at the model's current
// time, then a host's token bucket follows its link's new rate (else the
// host would outrun, or starve, the emulated NIC).
func (k *Lab) Set(ctx context.Context, endpoint, direction string, c settings.Change) (control.Changed, error) {
	var applied []devices.Applied
	var rec control.Changed
	var err error
	qerr := k.Loop.Query(ctx, func() {
		if applied, rec, err = control.Apply(k.Net, k.Loop.Now(), endpoint, direction, c); err == nil {
			k.changes = append(k.changes, rec)
		}
	})
	if qerr != nil {
		return rec, qerr
	}
	if err != nil {
		return rec, err
	}
	for _, a := range applied {
		if a.After.Rate == a.Before.Rate || k.Lab.Node(a.From.Node).Kind != topologies.KindHost {
			continue
		}
		port := k.Net.Hosts[a.From.String()]
		k.Loop.Query(ctx, func() { k.Loop.setBucket(port, nil) }) // the old bucket no longer dates frames
		b, err := retune(k.Lab, a.From, a.After.Rate)
		if err != nil {
			return rec, err
		}
		k.Loop.Query(ctx, func() { k.Loop.setBucket(port, &b) })
	}
	if k.Events != nil {
		fmt.Fprintf(k.Events, "lab %s %s\n", k.Lab.Name, rec)
	}
	return rec, nil
}

// retune changes a host interface's token bucket to its link's new rate,
// and returns the new bucket.
func retune(lab *topologies.Lab, e topologies.Endpoint, rate units.BitRate) (bucket, error) {
	l := lab.LinkOf(e)
	nl := *l
	if nl.A == e {
		nl.AB.Rate = rate
	} else {
		nl.BA.Rate = rate
	}
	changed := *lab
	changed.Links = slices.Clone(lab.Links)
	changed.Links[slices.Index(lab.Links, l)] = &nl
	// tc qdisc replace of the same tbf changes it in place, keeping the
	// packets it holds.
	mtu, w := lab.Node(e.Node).Interface(e.Port).MTU, wireOf(&changed, e)
	return w.bucket(mtu), pushback(lab.Namespace(e.Node), e.Port, mtu, w, offloads(lab, e))
}

// Changes returns the lab's run-time changes so far, oldest first.
func (k *Lab) Changes(ctx context.Context) []control.Changed {
	var out []control.Changed
	k.Loop.Query(ctx, func() { out = slices.Clone(k.changes) })
	return out
}
