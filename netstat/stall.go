package netstat

import (
	"cmp"
	"fmt"
	"slices"
	"time"
)

// StallMin is the shortest Stall the loop records: ten times what a pass
// of a loop that keeps up takes, and a fifth of what a frame may be
// released late under load (kernel.DefaultReleaseBound).
const StallMin = time.Millisecond

// Stall is a spell of more than StallMin in which the loop, awake
// (spinning between events or working through a pass, not sleeping in
// epoll), did not come back to its clock: every frame due meanwhile was
// released that much late. With it come what the loop's thread and the
// machine did over Window, from the loop's last reading of its counters
// before the stall (taken every few milliseconds) to the stall's end, so
// that a test or a report can say why.
type Stall struct {
	At  time.Duration `json:"at_ns"`  // when it began, on the loop's uptime clock (control.LoopStats.Uptime)
	Len time.Duration `json:"len_ns"` // how long it lasted
	// Window is the span the figures below cover: the stall and up to
	// a sampling period before it.
	Window time.Duration `json:"window_ns"`
	// Ran is the thread's time on a CPU (its schedstat run time, which
	// the kernel's steal accounting leaves out): the loop's own work, or
	// Go's runtime on its thread.
	Ran time.Duration `json:"ran_ns"`
	// Waited is the thread's time runnable, waiting for a CPU that
	// another thread held (its schedstat run delay).
	Waited time.Duration `json:"waited_ns"`
	// Switches are the times the thread was switched onto a CPU: one or
	// none for a loop that kept its CPU.
	Switches uint64 `json:"switches"`
	// GCs are the garbage collections the process finished.
	GCs uint64 `json:"gcs"`
	// Steal is the time the hypervisor took from the machine's CPUs, all
	// of them together (/proc/stat, in 10 ms ticks).
	Steal time.Duration `json:"steal_ns"`
}

// Off is the time of the window in which the loop's thread neither ran
// nor waited for a CPU: it slept (parked by Go's runtime, or blocked in
// the kernel), or the hypervisor stopped its CPU under it.
func (s Stall) Off() time.Duration { return max(0, s.Window-s.Ran-s.Waited) }

// Cause names what the stall's figures point to: the share of the window
// that explains at least half of the stall.
func (s Stall) Cause() string {
	half := s.Len / 2
	switch {
	case s.Waited >= half:
		return "another thread held its CPU"
	case s.Off() >= half && s.Steal >= half:
		return "the hypervisor took its CPU"
	case s.Off() >= half && s.GCs > 0:
		return "Go's runtime parked its thread during a garbage collection"
	case s.Off() >= half:
		return "its thread slept: parked by Go's runtime, or blocked in the kernel"
	case s.Ran >= half && s.GCs > 0:
		return "its thread ran, a garbage collection among it"
	case s.Ran >= half:
		return "its thread ran: the loop's own work, or Go's runtime on it"
	}
	return "no one cause"
}

// String says the stall in a line: how long, when, why, and the figures.
func (s Stall) String() string {
	ms := func(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/1e6) }
	return fmt.Sprintf("%s at %.3f s: %s (of %s: ran %s, waited for a CPU %s, off %s; %d switches, %d GCs, steal %s)",
		ms(s.Len), s.At.Seconds(), s.Cause(), ms(s.Window), ms(s.Ran), ms(s.Waited), ms(s.Off()), s.Switches, s.GCs, ms(s.Steal))
}

// StallsIn returns the stalls that began within [from, to), longest
// first.
func StallsIn(stalls []Stall, from, to time.Duration) []Stall {
	var in []Stall
	for _, s := range stalls {
		if s.At >= from && s.At < to {
			in = append(in, s)
		}
	}
	slices.SortStableFunc(in, func(a, b Stall) int { return cmp.Compare(b.Len, a.Len) })
	return in
}
