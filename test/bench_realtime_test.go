//go:build integration

package test

import (
	"fmt"
	"os"
	"path/filepath"
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
}{{time.Second, 21}, {100 * time.Millisecond, 99}, {10 * time.Millisecond, 300}, {5 * time.Millisecond, 399}}

// pingModes are the ways the emulator is run for TestBenchPingSpacing:
// its defaults, with the CPUs kept from going idle, and with that and a
// loop that never sleeps (its idle polling outlasts the run).
var pingModes = []struct {
	name string
	args []string
}{
	{"defaults", nil},
	{"--keep-cpus-awake", []string{"--keep-cpus-awake"}},
	{"--keep-cpus-awake --idle-spin 1h", []string{"--keep-cpus-awake", "--idle-spin", "1h"}},
}

// pingTurns is how many turns the paths of a row take at each spacing.
const pingTurns = 3

// TestBenchPingSpacing prints ping's median RTT through a 100M switch
// at each of pingSpacings beside a veth pair's at the same spacing and,
// with the emulator's defaults, a bare TAP-to-TAP relay's (test/relay:
// no model), once spinning, never asleep (the least any emulator whose
// hosts sit behind TAPs can add, which takes a core: it is up only for
// its turn), and once sleeping in read; what the emulator added beyond
// the pair and the model, and beyond the spinning relay and the model;
// the CPU it and its CPU keeper took meanwhile; and the load average: a
// row per spacing for each of pingModes, the lab brought up afresh for
// each (the keeper keeps the pair's CPUs awake too, so the pair is
// measured in each mode). The paths take turns, a third of the pings each
// at a time, so that none's pings wake the machine between another's and
// the machine's other load weighs on all alike. After each mode, the
// release lateness atmlab stats reported by spacing. It asserts nothing
// and runs only with ATMLAB_BENCH=1.
func TestBenchPingSpacing(t *testing.T) {
	if os.Getenv("ATMLAB_BENCH") == "" {
		t.Skip("benchmark: run with ATMLAB_BENCH=1 (make bench)")
	}
	requireRoot(t, "ping")
	veth := vethPair(t)
	veth.exec("h1", "ping", "-c", "1", "10.9.0.2")
	model := 4 * hop100M(98)
	fmt.Println("| mode | ping spacing | through a 100M switch | veth pair | bare relay spinning, sleeping | + model | emulator added beyond the pair | beyond the spinning relay | emulator CPU | keeper CPU | load average |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|")
	// spinning pings through a relay that spins only while they run.
	spinning := func(every time.Duration, count int) []float64 {
		r, stop := relayPair(t, false)
		defer stop()
		r.exec("h1", "ping", "-c", "1", "10.8.0.2")
		return pingAt(r, "10.8.0.2", every, count)
	}
	for _, m := range pingModes {
		var relay *running
		stopRelay := func() {}
		if m.args == nil {
			relay, stopRelay = relayPair(t, true)
			relay.exec("h1", "ping", "-c", "1", "10.8.0.2")
		}
		sw := up(t, strings.ReplaceAll(pairLab, "RATE", "100M"), m.args...)
		sw.exec("h1", "ping", "-c", "1", "10.0.0.2")
		keeper := keeperOf(t, sw, len(m.args) > 0)
		for _, sp := range pingSpacings {
			var vp, ep, rp, sr []float64
			before, kBefore := sw.stats().Loop, procCPU(keeper)
			for range pingTurns {
				vp = append(vp, pingAt(veth, "10.9.0.2", sp.every, sp.count/pingTurns)...)
				ep = append(ep, pingAt(sw, "10.0.0.2", sp.every, sp.count/pingTurns)...)
				if relay != nil {
					rp = append(rp, pingAt(relay, "10.8.0.2", sp.every, sp.count/pingTurns)...)
					sr = append(sr, spinning(sp.every, sp.count/pingTurns)...)
				}
			}
			after, kAfter := sw.stats().Loop, procCPU(keeper)
			wall := after.Uptime - before.Uptime
			cpu := float64(after.CPUTime-before.CPUTime+after.IdleSpin-before.IdleSpin) / float64(wall)
			kcpu := "none"
			if keeper > 0 {
				kcpu = fmt.Sprintf("%.0f %% of a core", 100*float64(kAfter-kBefore)/float64(wall))
			}
			v, e := msMedian(t, vp), msMedian(t, ep)
			relayCol, beyondRelay := "", ""
			if relay != nil {
				r, spun := msMedian(t, rp), msMedian(t, sr)
				relayCol, beyondRelay = fmt.Sprintf("%.1f µs, %.1f µs", us(spun), us(r)), fmt.Sprintf("%+.1f µs", us(e-spun-model))
			}
			fmt.Printf("| %s | %v | %.1f µs | %.1f µs | %s | %.1f µs | %+.1f µs | %s | %.1f %% of a core, idle polling included | %s | %s |\n",
				m.name, sp.every, us(e), us(v), relayCol, us(model), us(e-v-model), beyondRelay, 100*cpu, kcpu, loadAverage())
		}
		for _, a := range sw.stats().Loop.Added {
			fmt.Printf("%s: atmlab stats, release lateness of frames %s: p50 %.1f µs, p99 %.1f µs over %d\n",
				m.name, a.Traffic(), us(a.Lateness.P50), us(a.Lateness.P99), a.Lateness.Count)
		}
		sw.stop()
		stopRelay()
	}
}

// keeperOf is the pid of the CPU keeper r's atmlab up started (0 when
// want is false); it fails the test if one is where none was asked for,
// or none where one was.
func keeperOf(t *testing.T, r *running, want bool) int {
	t.Helper()
	var pids []int
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", r.cmd.Process.Pid))
	for _, f := range tasks {
		b, _ := os.ReadFile(f)
		for _, p := range strings.Fields(string(b)) {
			pid, _ := strconv.Atoi(p)
			if cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); strings.HasPrefix(string(cmdline), "atmlab-keep-cpus-awake") {
				pids = append(pids, pid)
			}
		}
	}
	switch {
	case want && len(pids) != 1:
		t.Fatalf("want one CPU keeper under atmlab up, found %v", pids)
	case !want && len(pids) > 0:
		t.Fatalf("a CPU keeper %v where none was asked for", pids)
	case !want:
		return 0
	}
	return pids[0]
}

// procCPU is the CPU time process pid has used (0 for pid 0 or one that
// is gone).
func procCPU(pid int) time.Duration {
	if pid == 0 {
		return 0
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	utime, _ := strconv.Atoi(f[11])
	stime, _ := strconv.Atoi(f[12])
	return time.Duration(utime+stime) * 10 * time.Millisecond // USER_HZ 100
}

// pingAt is the RTTs, in milliseconds, of count pings every apart.
func pingAt(r *running, addr string, every time.Duration, count int) []float64 {
	out := r.exec("h1", "ping", "-c", strconv.Itoa(count), "-i", fmt.Sprintf("%.3f", every.Seconds()), addr)
	var v []float64
	for _, m := range pingTime.FindAllSubmatch(out, -1) {
		ms, _ := strconv.ParseFloat(string(m[1]), 64)
		v = append(v, ms)
	}
	return v
}

// msMedian is the median of RTTs in milliseconds.
func msMedian(t *testing.T, ms []float64) time.Duration {
	return time.Duration(median(t, ms) * 1e6)
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
	go func() { defer wg.Done(); vp = msMedian(t, pingAt(veth, "10.9.0.2", time.Second, 9)) }()
	time.Sleep(500 * time.Millisecond)
	ep = msMedian(t, pingAt(sw, "10.0.0.2", time.Second, 9))
	wg.Wait()
	added := ep - vp - 4*hop100M(98)
	t.Logf("ping at 1 s spacing: through the switch %v, veth pair %v, emulator added %v", ep, vp, added)
	if added > 250*time.Microsecond {
		t.Errorf("the emulator added %v to a ping after a second of quiet (switch %v, veth %v); want under 250µs", added, ep, vp)
	}
}
