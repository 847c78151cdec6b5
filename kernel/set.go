//go:build linux

package kernel

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/atmlab/atmlab/emulator/units"
	"github.com/atmlab/atmlab/topologies"
)

// Changed is one run-time change as the lab applied it: when (model time
// since up), to what, and each direction's settings after it.
type Changed struct {
	At         time.Duration `json:"at_ns"`
	Endpoint   string        `json:"endpoint"`
	Direction  string        `json:"direction,omitempty"` // sending endpoint; empty is both
	Change     string        `json:"change"`              // as atmlab set's words
	Directions []string      `json:"directions"`          // "h1:eth0->sw1:p1 rate=... delay=..." after the change
}

func (c Changed) String() string {
	return fmt.Sprintf("at %v: set %s %s: %s", c.At.Round(time.Millisecond), c.Endpoint, c.Change, strings.Join(c.Directions, "; "))
}

// set handles atmlab set: the change is applied on the loop goroutine, at
// the model's current time, then a host's token bucket follows its link's
// new rate (else the host would outrun, or starve, the emulated NIC).
func (s *server) set(ctx context.Context, c net.Conn, req request) {
	if req.Change == nil {
		json.NewEncoder(c).Encode(reply{Error: "set without a change: give key=value settings or --reset"})
		return
	}
	ch, err := s.k.Set(ctx, req.Endpoint, req.Direction, *req.Change)
	if err != nil {
		json.NewEncoder(c).Encode(reply{Error: err.Error()})
		return
	}
	json.NewEncoder(c).Encode(reply{Set: &ch})
}

// Set applies a change to a running lab's link and logs it.
func (k *Lab) Set(ctx context.Context, endpoint, direction string, c topologies.Change) (Changed, error) {
	var applied []topologies.Applied
	var rec Changed
	var err error
	qerr := k.Loop.Query(ctx, func() {
		applied, err = k.Net.Set(endpoint, direction, c)
		if err != nil {
			return
		}
		rec = Changed{At: k.Loop.Now(), Endpoint: endpoint, Direction: direction, Change: c.String()}
		for _, a := range applied {
			cfg := a.After
			d := fmt.Sprintf("%s->%s rate=%v delay=%v jitter=%v loss=%g%% limit=%d", a.From, a.To, cfg.Rate, cfg.Impair.Delay, cfg.Impair.Jitter, cfg.Impair.Loss*100, cfg.Impair.Limit)
			if cfg.QueueBytes > 0 {
				d += " buffer=" + units.Size(cfg.QueueBytes).String()
			}
			rec.Directions = append(rec.Directions, d)
		}
		k.changes = append(k.changes, rec)
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
		if err := retune(k.Lab, a.From, a.After.Rate); err != nil {
			return rec, err
		}
	}
	if k.Events != nil {
		fmt.Fprintf(k.Events, "lab %s %s\n", k.Lab.Name, rec)
	}
	return rec, nil
}

// retune changes a host interface's token bucket to its link's new rate.
func retune(lab *topologies.Lab, e topologies.Endpoint, rate units.BitRate) error {
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
	return pushback(lab.Namespace(e.Node), e.Port, lab.Node(e.Node).Interface(e.Port).MTU, wireOf(&changed, e), offloads(lab, e))
}

// SetLink asks a running lab to apply a change (atmlab set).
func SetLink(ctx context.Context, lab, endpoint, direction string, c topologies.Change) (*Changed, error) {
	conn, _, rep, err := dial(ctx, lab, request{Op: "set", Endpoint: endpoint, Direction: direction, Change: &c})
	if err != nil {
		return nil, err
	}
	conn.Close()
	return rep.Set, nil
}

// Changes returns the lab's run-time changes so far, oldest first.
func (k *Lab) Changes(ctx context.Context) []Changed {
	var out []Changed
	k.Loop.Query(ctx, func() { out = slices.Clone(k.changes) })
	return out
}
