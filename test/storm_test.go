//go:build integration

package test

import (
	"context"
	"encoding/json"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/atmlab/atmlab/control"
)

// stormLab has a loop of switches: sw1's ports p3 and p4 are cabled to
// each other, and sw1 and sw2 are joined by two parallel links. One ARP
// broadcast from h1 circulates in both for ever, as it does between real
// switches without spanning tree.
const stormLab = `
name: NAME
topology:
  nodes:
    h1:  {kind: host, ipv4: 10.0.0.1/24}
    h2:  {kind: host, ipv4: 10.0.0.2/24}
    sw1: {kind: switch}
    sw2: {kind: switch}
  links:
    - {endpoints: ["h1:eth0", "sw1:p1"], ethernet: {rate: 100M}}
    - {endpoints: ["h2:eth0", "sw2:p1"], ethernet: {rate: 100M}}
    - {endpoints: ["sw1:p3", "sw1:p4"], ethernet: {rate: 1G}}
    - {endpoints: ["sw1:p5", "sw2:p5"], ethernet: {rate: 1G}}
    - {endpoints: ["sw1:p6", "sw2:p6"], ethernet: {rate: 1G}}
`

// Under a broadcast storm atmlab stays responsive: stats
// answers within 1 s, SIGINT ends the lab within 2 s with nothing left.
func TestStormResponsive(t *testing.T) {
	requireRoot(t, "ping")
	r := up(t, stormLab)
	r.try("h1", "ping", "-c", "1", "-W", "1", "10.0.0.2") // its ARP request starts the storm; the answer may drown
	var first uint64
	for i := range 3 {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		start := time.Now()
		out, err := exec.CommandContext(ctx, atmlab, "stats", r.name, "-o", "json").Output()
		took := time.Since(start)
		cancel()
		if err != nil {
			t.Fatalf("atmlab stats under the storm: %v", err)
		}
		var st control.Stats
		if err := json.Unmarshal(out, &st); err != nil {
			t.Fatalf("atmlab stats -o json: %v\n%s", err, out)
		}
		rx := port(t, st, "sw1:p4").Rx
		t.Logf("stats %d answered in %v: sw1:p4 received %d frames, emulator CPU %.0f%%, lateness p50 %v", i, took.Round(time.Millisecond), rx, 100*st.Loop.CPU, st.Loop.Lateness.P50)
		if took > time.Second {
			t.Errorf("atmlab stats took %v under the storm, want 1 s at most", took)
		}
		if i == 0 {
			first = rx
		} else if rx <= first {
			t.Fatalf("sw1:p4 received %d frames, then %d: no storm to test under", first, rx)
		}
		time.Sleep(300 * time.Millisecond) // stats asked again and again, under the storm
	}
	start := time.Now()
	r.cmd.Process.Signal(syscall.SIGINT)
	select {
	case err := <-r.done:
		took := time.Since(start)
		t.Logf("SIGINT ended the storming lab in %v", took.Round(time.Millisecond))
		if err != nil {
			t.Errorf("atmlab up exited with %v after SIGINT: %s", err, r.stderr.String())
		}
		if took > 2*time.Second {
			t.Errorf("SIGINT took %v to end the storming lab, want 2 s at most", took)
		}
	case <-time.After(2 * time.Second):
		r.cmd.Process.Kill()
		<-r.done
		exec.Command(atmlab, "down", r.name).Run()
		t.Fatalf("atmlab up still running 2 s after SIGINT under a storm")
	}
	if left := namespaces(r.name); len(left) > 0 {
		t.Errorf("after SIGINT, namespaces remain: %v", left)
	}
}
