//go:build integration

package test

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// pingSpacings are the spacings a user's ping meets the emulator at:
// ping's default, and three shorter ones, each with how many pings.
var pingSpacings = []struct {
	every time.Duration
	count int
}{{time.Second, 30}, {100 * time.Millisecond, 100}, {10 * time.Millisecond, 300}, {5 * time.Millisecond, 400}}

// TestBenchPingSpacing prints ping's median RTT through a 100M switch
// at each of pingSpacings beside a veth pair's at the same spacing, both
// taken in the same run, half a spacing apart; and what the emulator
// added beyond the pair and the model. It asserts nothing and runs only
// with ATMLAB_BENCH=1.
func TestBenchPingSpacing(t *testing.T) {
	if os.Getenv("ATMLAB_BENCH") == "" {
		t.Skip("benchmark: run with ATMLAB_BENCH=1 (make bench)")
	}
	requireRoot(t, "ping")
	veth := vethPair(t)
	sw := up(t, strings.ReplaceAll(pairLab, "RATE", "100M"))
	sw.exec("h1", "ping", "-c", "1", "10.0.0.2")
	veth.exec("h1", "ping", "-c", "1", "10.9.0.2")
	model := 4 * hop100M(98)
	fmt.Println("| ping spacing | through a 100M switch | veth pair | + model | emulator added | emulator CPU |")
	fmt.Println("|---|---|---|---|---|---|")
	for _, sp := range pingSpacings {
		var vp, ep time.Duration
		before := sw.stats().Loop
		var wg sync.WaitGroup
		wg.Add(2)
		go func() { defer wg.Done(); vp = pingAt(t, veth, "10.9.0.2", sp.every, sp.count) }()
		go func() {
			defer wg.Done()
			time.Sleep(sp.every / 2)
			ep = pingAt(t, sw, "10.0.0.2", sp.every, sp.count)
		}()
		wg.Wait()
		after := sw.stats().Loop
		wall := after.Uptime - before.Uptime
		cpu := float64(after.CPUTime-before.CPUTime+after.IdleSpin-before.IdleSpin) / float64(wall)
		fmt.Printf("| %v | %.1f µs | %.1f µs | %.1f µs | %+.1f µs | %.1f %% of a core, idle polling included |\n", sp.every, us(ep), us(vp), us(model), us(ep-vp-model), 100*cpu)
	}
}

// pingAt is the median RTT of count pings every apart.
func pingAt(t *testing.T, r *running, addr string, every time.Duration, count int) time.Duration {
	out := r.exec("h1", "ping", "-c", strconv.Itoa(count), "-i", fmt.Sprintf("%.3f", every.Seconds()), addr)
	var v []float64
	for _, m := range pingTime.FindAllSubmatch(out, -1) {
		ms, _ := strconv.ParseFloat(string(m[1]), 64)
		v = append(v, ms)
	}
	return time.Duration(median(t, v) * 1e6)
}

// TestPingAfterIdleIsNotHundredsOfMicrosecondsLate: at ping's default
// spacing, one a second, the emulator wakes for every request from a
// quiet spell, and what it adds beyond a veth pair (measured beside it,
// half a second apart) and the model's serialization stays well under
// the 300-420 µs it added while its sleep gave away its P.
func TestPingAfterIdleIsNotHundredsOfMicrosecondsLate(t *testing.T) {
	requireRoot(t, "ping")
	veth := vethPair(t)
	sw := up(t, strings.ReplaceAll(pairLab, "RATE", "100M"))
	sw.exec("h1", "ping", "-c", "1", "10.0.0.2")
	veth.exec("h1", "ping", "-c", "1", "10.9.0.2")
	var vp, ep time.Duration
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); vp = pingAt(t, veth, "10.9.0.2", time.Second, 9) }()
	time.Sleep(500 * time.Millisecond)
	ep = pingAt(t, sw, "10.0.0.2", time.Second, 9)
	wg.Wait()
	added := ep - vp - 4*hop100M(98)
	t.Logf("ping at 1 s spacing: through the switch %v, veth pair %v, emulator added %v", ep, vp, added)
	if added > 250*time.Microsecond {
		t.Errorf("the emulator added %v to a ping after a second of quiet (switch %v, veth %v); want under 250µs", added, ep, vp)
	}
}
