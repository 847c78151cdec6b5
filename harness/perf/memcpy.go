package perf

import (
	"time"
)

// Memcpy measures the host's memory-to-memory copy rate, the end-system
// bound the CERNET study measured before any network test (77 Mbit/s on a
// 75 MHz SPARC 20): it copies a block of size bytes back and forth between
// two buffers for d and reports bits copied per second. Blocks larger than
// the caches measure memory, as the study's did.
func Memcpy(size int, d time.Duration) Result {
	a, b := make([]byte, size), make([]byte, size)
	for i := range a {
		a[i] = byte(i)
	}
	var n uint64
	start := time.Now()
	for time.Since(start) < d {
		copy(b, a)
		a, b = b, a
		n += uint64(size)
	}
	elapsed := time.Since(start)
	return Result{Schema: SchemaVersion, Test: "MEMCPY", Spec: Spec{Test: "MEMCPY", Duration: d, Message: size},
		Elapsed: elapsed.Seconds(), BytesReceived: n, ThroughputBps: float64(n*8) / elapsed.Seconds()}
}
