// Package allocs counts the allocations of a model's path exactly, for
// the tests that pin steady traffic at none.
package allocs

import (
	"math"
	"runtime"
	"testing"
)

// Tries is how many times Count counts.
const Tries = 3

// Count returns the fewest allocations the whole process made in any
// of Tries calls of f n times in a row (testing.AllocsPerRun over
// one run, which is exact): a path that allocates per call shows in
// every count, while the runtime's own rare allocations (starting an OS
// thread after a preemption, growing a type assertion's cache) show in
// one now and then (1 in 50 runs of 100 ATM PDUs, before the fewest was
// taken).
func Count(n int, f func()) float64 {
	fewest := math.Inf(1)
	for range Tries {
		runtime.GC()
		fewest = min(fewest, testing.AllocsPerRun(1, func() {
			for range n {
				f()
			}
		}))
	}
	return fewest
}
