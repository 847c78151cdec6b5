package kernel

import (
	"math"
	"runtime/debug"
	"testing"
)

// A lab collects garbage only near MemoryLimit while it runs, and as
// before after; GOGC or GOMEMLIMIT in the environment leave the runtime
// as they set it.
func TestCollectAtLimit(t *testing.T) {
	percent, limit := debug.SetGCPercent(100), debug.SetMemoryLimit(math.MaxInt64)
	defer debug.SetGCPercent(percent)
	defer debug.SetMemoryLimit(limit)
	restore := collectAtLimit(func(string) string { return "" })
	if p, l := debug.SetGCPercent(-1), debug.SetMemoryLimit(-1); p != -1 || l != MemoryLimit {
		t.Errorf("while a lab runs: GOGC %d, memory limit %d; want -1 (off), %d", p, l, MemoryLimit)
	}
	restore()
	if p, l := debug.SetGCPercent(-1), debug.SetMemoryLimit(-1); p != 100 || l != math.MaxInt64 {
		t.Errorf("after: GOGC %d, memory limit %d; want 100, none", p, l)
	}
	debug.SetGCPercent(100)
	for _, env := range []string{"GOGC", "GOMEMLIMIT"} {
		collectAtLimit(func(k string) string {
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
