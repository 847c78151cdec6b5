package kernel

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

// A running lab collects garbage once per headroom of it, never on the
// runtime's two-minute clock (GOGC off), under a memory limit that
// follows its live heap; after it, as before; GOGC or GOMEMLIMIT in the
// environment leave the runtime as they set it.
func TestCollectPast(t *testing.T) {
	percent, limit := debug.SetGCPercent(100), debug.SetMemoryLimit(math.MaxInt64)
	defer debug.SetGCPercent(percent)
	defer debug.SetMemoryLimit(limit)
	const headroom = 16 << 20
	restore := collectPast(headroom, func(string) string { return "" })
	if p, l := debug.SetGCPercent(-1), debug.SetMemoryLimit(-1); p != -1 || l < headroom || l > inUse()+headroom {
		t.Errorf("while a lab runs: GOGC %d, memory limit %d; want -1 (off), %d past what is in use (%d)", p, l, headroom, inUse())
	}
	// 256 MiB of garbage in 64 KiB pieces: a collection a headroom of
	// it, about 16 (fewer when the test outruns a collection at nice 19:
	// 6-18 seen); with GOGC 100 over a heap of a few MiB, over 50; with
	// no limit, none.
	gcs := func() uint64 {
		s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
		metrics.Read(s)
		return s[0].Value.Uint64()
	}
	before := gcs()
	var sink []byte
	for range 4096 {
		sink = make([]byte, 64<<10)
	}
	_ = sink
	if n := gcs() - before; n < 4 || n > 32 {
		t.Errorf("%d collections in 256 MiB of garbage under a %d MiB headroom: want about 16 (4-32)", n, headroom>>20)
	}
	// A live heap of 64 MiB, more than the headroom: the limit moves up
	// past it after the next collection rather than collecting on and on.
	live := make([][]byte, 64)
	for i := range live {
		live[i] = make([]byte, 1<<20)
	}
	runtime.GC()
	deadline := time.Now().Add(5 * time.Second)
	for debug.SetMemoryLimit(-1) < 64<<20+headroom && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond) // the finalizer's goroutine moves it
	}
	if l := debug.SetMemoryLimit(-1); l < 64<<20+headroom {
		t.Errorf("memory limit %d MiB with 64 MiB live: want it past the live heap by the headroom, %d MiB", l>>20, (64<<20+headroom)>>20)
	}
	runtime.KeepAlive(live)
	restore()
	if p, l := debug.SetGCPercent(-1), debug.SetMemoryLimit(-1); p != 100 || l != math.MaxInt64 {
		t.Errorf("after: GOGC %d, memory limit %d; want 100, none", p, l)
	}
	debug.SetGCPercent(100)
	runtime.GC() // a finalizer armed before restore finds the policy off
	if l := debug.SetMemoryLimit(-1); l != math.MaxInt64 {
		t.Errorf("after a collection: memory limit %d, want none", l)
	}
	for _, env := range []string{"GOGC", "GOMEMLIMIT"} {
		collectPast(headroom, func(k string) string {
			if k == env {
				return "200"
			}
			return ""
		})()
		if p, l := debug.SetGCPercent(100), debug.SetMemoryLimit(-1); p != 100 || l != math.MaxInt64 {
			t.Errorf("with %s set: GOGC %d, memory limit %d; want them untouched", env, p, l)
		}
	}
}
