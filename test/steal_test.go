//go:build integration

package test

import (
	"math"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/atmlab/atmlab/harness/labrun"
	"github.com/atmlab/atmlab/netstat"
)

// maxSteal is the share of the machine's CPU a hypervisor may take from
// this VM during a second before the second is not judged: the time the
// guest's vCPUs lost (/proc/stat's steal) stalls the emulator for reasons
// no code in it can cause or cure (labrun.MaxSteal, which flags a lab
// run's points for it, says what was measured).
const maxSteal = labrun.MaxSteal

// stealClock samples the machine's steal time while a measurement runs.
type stealClock struct {
	start time.Time
	mu    sync.Mutex
	at    []time.Duration // since start
	steal []time.Duration // cumulative
	done  chan struct{}
	wg    sync.WaitGroup
}

// watchSteal starts sampling every 100 ms until stop.
func watchSteal() *stealClock {
	c := &stealClock{start: time.Now(), done: make(chan struct{})}
	c.sample()
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-c.done:
				return
			case <-tick.C:
				c.sample()
			}
		}
	}()
	return c
}

func (c *stealClock) stop() {
	close(c.done)
	c.wg.Wait()
	c.sample()
}

func (c *stealClock) sample() {
	st, err := netstat.Steal()
	if err != nil {
		return
	}
	c.mu.Lock()
	c.at = append(c.at, time.Since(c.start))
	c.steal = append(c.steal, st)
	c.mu.Unlock()
}

// share is the fraction of the machine's CPU stolen between from and to
// (since start), taken from the samples around them; 0 without samples.
func (c *stealClock) share(from, to time.Duration) float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	i, k := -1, -1
	for n, at := range c.at {
		if at <= from {
			i = n
		}
		if k < 0 && at >= to {
			k = n
		}
	}
	if i < 0 {
		i = 0
	}
	if k < 0 {
		k = len(c.at) - 1
	}
	if k <= i {
		return 0
	}
	return netstat.StealShare(c.steal[k]-c.steal[i], c.at[k]-c.at[i])
}

// dropStolen sets to NaN each per-second interval (of secs seconds each,
// the first starting at from) during which, or within a quarter second
// either side, the hypervisor took more than maxSteal of the machine;
// steady leaves them out. It returns how many it dropped.
func dropStolen(c *stealClock, from time.Duration, secs []float64, series ...[]float64) int {
	dropped := 0
	at := from
	for k, s := range secs {
		end := at + time.Duration(s*float64(time.Second))
		if c.share(at-250*time.Millisecond, end+250*time.Millisecond) > maxSteal {
			for _, v := range series {
				v[k] = math.NaN()
			}
			dropped++
		}
		at = end
	}
	return dropped
}

// TestStealShare pins the arithmetic of share and dropStolen on samples
// made by hand: 2 CPUs' worth of steal is 1.0 of the machine.
func TestStealShare(t *testing.T) {
	c := &stealClock{}
	n := float64(runtime.NumCPU())
	for i := range 31 { // 3 s, sampled every 100 ms
		c.at = append(c.at, time.Duration(i)*100*time.Millisecond)
		var st time.Duration
		if i > 10 { // the second second: half of the machine stolen
			st = time.Duration(float64(min(i, 20)-10) * 50 * n * float64(time.Millisecond))
		}
		c.steal = append(c.steal, st)
	}
	if got := c.share(0, time.Second); got != 0 {
		t.Errorf("first second: share %v, want 0", got)
	}
	if got := c.share(time.Second, 2*time.Second); math.Abs(got-0.5) > 1e-9 {
		t.Errorf("second second: share %v, want 0.5", got)
	}
	rx := []float64{1, 2, 3}
	if d := dropStolen(c, 0, []float64{1, 1, 1}, rx); d != 3 || !math.IsNaN(rx[1]) {
		// the first and last seconds are within a quarter second of it
		t.Errorf("dropStolen: %d dropped, %v", d, rx)
	}
	rx = []float64{1, 2}
	if d := dropStolen(c, 0, []float64{0.5, 0.2}, rx); d != 0 || rx[0] != 1 || rx[1] != 2 {
		t.Errorf("dropStolen before the steal: %d dropped, %v", d, rx)
	}
}
