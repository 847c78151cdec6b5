package vhost

import (
	"sync"
	"time"

	"gvisor.dev/gvisor/pkg/tcpip"

	"github.com/atmlab/atmlab/emulator/sched"
)

// Epoch is the wall-clock time a virtual lab's model time zero reads as
// (tcpip.Clock.Now): fixed, so timestamps in packets do not depend on when
// the run happened.
var Epoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// clock is a host's tcpip.Clock: time is the scheduler's, and AfterFunc
// queues its callback as a scheduler event, which runs on the driver's
// goroutine at its model time and is followed by the host's barrier.
// Netstack calls AfterFunc, Stop and Reset from its TCP processor
// goroutines too, but only while the driver waits in a barrier (see the
// package doc), so one goroutine at a time touches the scheduler; mu only
// guards against two netstack goroutines of one host at once.
type clock struct {
	h  *Host
	s  *sched.Scheduler
	mu sync.Mutex
}

// Now implements tcpip.Clock.
func (c *clock) Now() time.Time { return Epoch.Add(c.s.Now()) }

// NowMonotonic implements tcpip.Clock.
func (c *clock) NowMonotonic() tcpip.MonotonicTime { return tcpip.MonotonicTime{}.Add(c.s.Now()) }

// AfterFunc implements tcpip.Clock.
func (c *clock) AfterFunc(d time.Duration, f func()) tcpip.Timer {
	t := &timer{c: c, f: f}
	c.mu.Lock()
	t.t = c.s.NewTimer(t.fire)
	t.t.Reset(c.s.Now() + d)
	c.mu.Unlock()
	return t
}

// timer is a netstack timer on the scheduler.
type timer struct {
	c *clock
	f func()
	t *sched.Timer
}

func (t *timer) fire() {
	t.f()
	t.c.h.settle()
}

// Stop implements tcpip.Timer.
func (t *timer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	return t.t.Stop()
}

// Reset implements tcpip.Timer.
func (t *timer) Reset(d time.Duration) {
	t.c.mu.Lock()
	t.t.Reset(t.c.s.Now() + d)
	t.c.mu.Unlock()
}
