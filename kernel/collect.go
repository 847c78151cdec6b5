package kernel

import "runtime/debug"

// MemoryLimit is the soft limit on a real-time lab's process memory under
// which it collects no garbage (collectAtLimit).
const MemoryLimit = 1 << 30

// collectAtLimit has Go's runtime collect garbage only when the process
// nears MemoryLimit, not whenever its heap doubles nor every two minutes
// (the runtime's forced collection, which GOGC off turns off too), and
// returns what undoes it; GOGC or GOMEMLIMIT in getenv, if either is set,
// leave the runtime as they set it. The loop's path allocates nothing per
// frame: in 20 minutes of OC-3c cells (AAL5, 484-byte UDP) the heap stayed
// at 10 MB and each collection after the first minutes was the forced one,
// 7-21 ms of marking that stops the loop's goroutine (its stack is
// scanned, and the runtime's preemption hands a locked thread's P away):
// the loop's stalls that spanned a collection lasted 18-25 ms on a busy
// machine (docs/benchmarks.md).
func collectAtLimit(getenv func(string) string) (restore func()) {
	if getenv("GOGC") != "" || getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	percent := debug.SetGCPercent(-1)
	limit := debug.SetMemoryLimit(MemoryLimit)
	return func() {
		debug.SetMemoryLimit(limit)
		debug.SetGCPercent(percent)
	}
}
