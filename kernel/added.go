//go:build linux

package kernel

import (
	"time"

	"github.com/atmlab/atmlab/control"
	"github.com/atmlab/atmlab/emulator/hist"
)

// spacingBounds split the emulator's added latency (release lateness) by
// the spacing of the frames a host is sent, at the loop's own states: under
// a millisecond apart the loop is busy with them (streams, fast request and
// response); up to DefaultIdleSpin it polls idle between them (pings 5-10
// ms apart); beyond it sleeps between them (ping's default second).
var spacingBounds = []time.Duration{time.Millisecond, DefaultIdleSpin}

// added is the release lateness of each spacing class, and the spacings
// themselves: what `atmlab stats` reports as the emulator's added latency
// over the traffic it served. Owned by the loop goroutine.
type added struct {
	spacing hist.Histogram    // every release's spacing after the TAP's one before
	late    [3]hist.Histogram // release lateness by class (spacingBounds)
	gaps    [3]hist.Histogram // the spacings in each class
}

// lastRelease is a TAP's own part of added, kept on the tap so that a
// release costs no map lookup: its last release's model time and class.
type lastRelease struct {
	at    time.Duration
	class int  // the class of the last release; -1: the TAP's first
	seen  bool // a release was noted
}

// class is the spacing class of a gap (an index into added.late).
func class(gap time.Duration) int {
	for i, b := range spacingBounds {
		if gap < b {
			return i
		}
	}
	return len(spacingBounds)
}

// note records a release to t at model time at, before it is written
// (handed).
func (a *added) note(t *tap, at time.Duration) {
	r := &t.last
	c := -1
	if r.seen {
		gap := at - r.at
		c = class(gap)
		a.spacing.Record(gap)
		a.gaps[c].Record(gap)
	}
	*r = lastRelease{at: at, class: c, seen: true}
}

// handed records how late a write to t ended, in the class of t's latest
// release (a write the moderator or GRO held is of the traffic that
// followed it).
func (a *added) handed(t *tap, late time.Duration) {
	if r := t.last; r.seen && r.class >= 0 {
		a.late[r.class].Record(late)
	}
}

// stats is the added latency of every class that has releases.
func (a *added) stats() []control.AddedLatency {
	var out []control.AddedLatency
	for c := range a.late {
		if a.late[c].Count() == 0 {
			continue
		}
		al := control.AddedLatency{Lateness: a.late[c].Summary(), Spacing: a.gaps[c].Summary()}
		if c > 0 {
			al.From = spacingBounds[c-1]
		}
		if c < len(spacingBounds) {
			al.To = spacingBounds[c]
		}
		out = append(out, al)
	}
	return out
}

// ReleaseSpacing is how far apart in model time the loop released
// frames to the same host, over the lab's whole run: the traffic its
// Lateness was measured over. Call it on the loop goroutine.
func (l *Loop) ReleaseSpacing() hist.Histogram { return l.added.spacing }
