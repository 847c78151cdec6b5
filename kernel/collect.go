package kernel

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// Headroom is how much memory a running real-time lab may take beyond
// what it holds live before Go's runtime collects its garbage
// (collectPast).
const Headroom = 64 << 20

// collectPast has Go's runtime collect garbage only once the process
// has grown headroom past what it held live after its last collection
// (after one at the start), and returns what undoes it. Go's defaults
// collect whenever the heap doubles and, whatever was allocated, every
// two minutes (the forced collection, which only GOGC off turns off):
// on an ATM path at OC-3c, which allocates nothing per frame, each
// collection was the forced one, and the loop's stalls that spanned one
// lasted 18-25 ms on a busy machine (docs/benchmarks.md). So collection
// is off under a soft memory limit that follows the live heap: a lab
// that makes no garbage never collects, one that makes some (a router's
// CPU job, a harness parsing its tools' output) collects once per
// headroom of it instead of once per live heap (10-20 MB), and a lab
// whose live heap grows (pipes filling) moves the limit with it rather
// than collecting over and over. GOGC or GOMEMLIMIT in getenv, if either
// is set, leave the runtime as they set it.
func collectPast(headroom int64, getenv func(string) string) (restore func()) {
	if getenv("GOGC") != "" || getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	runtime.GC() // the set-up's garbage, and a live heap to start from
	percent := debug.SetGCPercent(-1)
	limit := debug.SetMemoryLimit(inUse() + headroom)
	var mu sync.Mutex
	on := true
	var follow func()
	follow = func() {
		// A finalizer runs after the collection that found its object
		// unreachable: each collection moves the limit and arms the next.
		runtime.SetFinalizer(new([32]byte), func(*[32]byte) {
			mu.Lock()
			defer mu.Unlock()
			if on {
				debug.SetMemoryLimit(inUse() + headroom)
				follow()
			}
		})
	}
	follow()
	return func() {
		mu.Lock()
		on = false
		mu.Unlock()
		debug.SetMemoryLimit(limit)
		debug.SetGCPercent(percent)
	}
}

// inUse is what the runtime's memory limit counts that the last
// collection found in use: every mapped byte but the heap's released,
// free and unused ones and its objects that were not live.
func inUse() int64 {
	s := []metrics.Sample{
		{Name: "/memory/classes/total:bytes"},
		{Name: "/memory/classes/heap/released:bytes"},
		{Name: "/memory/classes/heap/free:bytes"},
		{Name: "/memory/classes/heap/unused:bytes"},
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/gc/heap/live:bytes"},
	}
	metrics.Read(s)
	var v [6]int64
	for i := range s {
		if s[i].Value.Kind() == metrics.KindUint64 {
			v[i] = int64(s[i].Value.Uint64())
		}
	}
	return v[0] - v[1] - v[2] - v[3] - v[4] + v[5]
}
