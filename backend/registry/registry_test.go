package registry

import (
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/atmlab/atmlab/backend/virtual"
	"github.com/atmlab/atmlab/harness/clock"
)

// A run whose clocks are all virtual takes a processor per point it
// measures at once for its length and gives back what it had; one that
// measures in real time too, or whose environment sets GOMAXPROCS, keeps
// its processors.
func TestVirtualRunTakesOneProcPerJob(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	t.Setenv("GOMAXPROCS", "")
	for _, jobs := range []int{1, 2} {
		restore := Procs(clock.Choice{clock.Virtual}, jobs, 66)
		if n := runtime.GOMAXPROCS(0); n != jobs {
			t.Errorf("during a virtual run of %d at a time GOMAXPROCS is %d, want %d", jobs, n, jobs)
		}
		restore()
		if n := runtime.GOMAXPROCS(0); n != 4 {
			t.Errorf("after a virtual run GOMAXPROCS is %d, want 4 again", n)
		}
	}
	for _, c := range []struct {
		clocks clock.Choice
		env    string
	}{{clock.Both, ""}, {clock.Choice{clock.Real}, ""}, {clock.Choice{clock.Virtual}, "2"}} {
		t.Setenv("GOMAXPROCS", c.env)
		restore := Procs(c.clocks, 1, 66)
		if n := runtime.GOMAXPROCS(0); n != 4 {
			t.Errorf("clocks %v, GOMAXPROCS=%q: %d processors, want the 4 it had", c.clocks, c.env, n)
		}
		restore()
	}
}

// A virtual run of one point takes one processor whatever --jobs says:
// its stacks run one goroutine at a time, and a second processor only
// adds handoffs between threads.
func TestVirtualRunOfOnePointTakesOneProc(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	t.Setenv("GOMAXPROCS", "")
	restore := Procs(clock.Choice{clock.Virtual}, 2, 1)
	if n := runtime.GOMAXPROCS(0); n != 1 {
		t.Errorf("during a virtual run of one point at --jobs 2 GOMAXPROCS is %d, want 1", n)
	}
	restore()
}

// A run whose clocks are all virtual collects garbage less often (GOGC
// 400, a 4 GiB soft limit) for its length and gives back what it had; one
// that measures in real time too, or whose environment sets GOGC, keeps
// the collector as it was.
func TestVirtualRunCollectsLessOften(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	percent := func() int { p := debug.SetGCPercent(-1); debug.SetGCPercent(p); return p }
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	restore := GC(clock.Choice{clock.Virtual})
	if p, l := percent(), debug.SetMemoryLimit(-1); p != virtual.GCPercent || l != virtual.MemoryLimit {
		t.Errorf("during a virtual run GOGC is %d and the limit %d, want %d and %d", p, l, virtual.GCPercent, virtual.MemoryLimit)
	}
	restore()
	if p := percent(); p != 100 {
		t.Errorf("after a virtual run GOGC is %d, want 100 again", p)
	}
	for _, c := range []struct {
		clocks clock.Choice
		env    string
	}{{clock.Both, ""}, {clock.Choice{clock.Virtual}, "200"}} {
		t.Setenv("GOGC", c.env)
		restore := GC(c.clocks)
		if p := percent(); p != 100 {
			t.Errorf("clocks %v, GOGC=%q: GOGC %d, want the 100 it had", c.clocks, c.env, p)
		}
		restore()
	}
}

// Every clock has a backend, and the one For gives measures by it.
func TestEveryClockHasABackend(t *testing.T) {
	for _, c := range clock.All {
		b, err := For(c)
		if err != nil || b.Clock() != c {
			t.Errorf("For(%v) = %v, %v", c, b, err)
		}
	}
}
