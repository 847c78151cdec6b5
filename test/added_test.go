//go:build integration

package test

import (
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// atmlab stats reports the emulator's added latency at the spacing the
// user's traffic had: after pings 200 ms apart through a 100M switch, its
// line for frames 20 ms or more apart counts them (each host's first
// aside), with a median spacing of about 200 ms.
func TestStatsShowsAddedLatencyAtThePingSpacing(t *testing.T) {
	requireRoot(t, "ping")
	r := up(t, strings.ReplaceAll(pairLab, "RATE", "100M"))
	r.exec("h1", "ping", "-c", "5", "-i", "0.2", "10.0.0.2")
	out, err := exec.Command(atmlab, "stats", r.name).CombinedOutput()
	if err != nil {
		t.Fatalf("atmlab stats: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`(?m)^  20ms or more apart \(the emulator slept between them\): p50 (\S+) p99 (\S+) over (\d+) releases, median spacing (\S+)$`).FindStringSubmatch(string(out))
	if m == nil {
		t.Fatalf("no added latency for frames 20 ms or more apart in\n%s", out)
	}
	t.Logf("pings 200 ms apart: %s", m[0])
	spacing, err := time.ParseDuration(m[4])
	n, _ := strconv.Atoi(m[3])
	if err != nil || spacing < 150*time.Millisecond || spacing > 250*time.Millisecond || n < 8 {
		t.Errorf("want at least 8 releases about 200 ms apart (4 requests and 4 replies after each host's first): %s", m[0])
	}
}
