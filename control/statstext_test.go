package control

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/atmlab/atmlab/devices"
	"github.com/atmlab/atmlab/emulator"
	"github.com/atmlab/atmlab/emulator/hist"
	"github.com/atmlab/atmlab/emulator/sched"
	"github.com/atmlab/atmlab/topologies/labfile"
)

// atmlab stats prints each node's own line (here two hubs'), in name
// order, after the port table; a switch, with nothing filtered, prints none.
func TestWriteStats(t *testing.T) {
	lab, err := labfile.Parse("hubs.yaml", []byte(`name: hubs
topology:
  nodes:
    h1: {kind: host, ipv4: 10.0.0.1/24}
    h2: {kind: host, ipv4: 10.0.0.2/24}
    h3: {kind: host, ipv4: 10.0.1.3/24}
    h4: {kind: host, ipv4: 10.0.1.4/24}
    hubb: {kind: hub}
    huba: {kind: hub}
    sw1: {kind: switch}
    h5: {kind: host, ipv4: 10.0.2.5/24}
    h6: {kind: host, ipv4: 10.0.2.6/24}
  links:
    - {endpoints: ["h1:eth0", "hubb:p1"], ethernet: {rate: 100M}}
    - {endpoints: ["h2:eth0", "hubb:p2"], ethernet: {rate: 100M}}
    - {endpoints: ["h3:eth0", "huba:p1"], ethernet: {rate: 10M}}
    - {endpoints: ["h4:eth0", "huba:p2"], ethernet: {rate: 10M}}
    - {endpoints: ["h5:eth0", "sw1:p1"]}
    - {endpoints: ["h6:eth0", "sw1:p2"]}
`))
	if err != nil {
		t.Fatal(err)
	}
	s := sched.New()
	n := devices.Build(lab, s)
	n.Hosts["h1:eth0"].Input(&emulator.Frame{Data: make([]byte, 1514)})
	s.Run()
	st := Snapshot("hubs", LoopStats{}, n, time.Millisecond, nil)
	var out bytes.Buffer
	st.WriteText(&out)
	want := "hub huba: utilisation 0.0%, collisions 0.00% of the time, 0 frames, 0 collision events\n" +
		"hub hubb: utilisation 12.1%, collisions 0.00% of the time, 1 frames, 0 collision events\n"
	got := out.String()
	i, j := strings.Index(got, "hub "), strings.Index(got, "half duplex:")
	if i < 0 || j < i || got[i:j] != want || !strings.HasSuffix(got[:i], "sw1:p2          0         0          0         0      0             0           0           0          0\n") || strings.Contains(got, "switch") {
		t.Errorf("want the hubs' lines in name order after the port table, and no switch line:\n%s", got)
	}
}

// atmlab stats says how many frames the emulator held back to stay
// within its bound on lateness, and says nothing when it held none.
func TestWriteStatsShowsLateHeld(t *testing.T) {
	for _, drops := range []uint64{0, 4321} {
		var out bytes.Buffer
		st := Stats{Lab: "l", Loop: LoopStats{LateHeld: drops}}
		st.WriteText(&out)
		const line = "warning: the emulator held back 4321 frames from the hosts: its model ran too far behind the wall clock, and they entered it later than they came\n"
		if got := strings.Contains(out.String(), "frames from the hosts"); got != (drops > 0) || drops > 0 && !strings.Contains(out.String(), line) {
			t.Errorf("%d late drops: stats read\n%s", drops, out.String())
		}
	}
}

// atmlab stats says how many frames the emulator dropped rather than hand
// them to a host later than its bound, and says nothing when it dropped none.
func TestWriteStatsShowsLateDropped(t *testing.T) {
	for _, drops := range []uint64{0, 765} {
		var out bytes.Buffer
		st := Stats{Lab: "l", Loop: LoopStats{LateDropped: drops}}
		st.WriteText(&out)
		const line = "warning: the emulator dropped 765 frames it would have handed to the hosts later than its bound after their model time: it lost its core for longer\n"
		if got := strings.Contains(out.String(), "later than its bound"); got != (drops > 0) || drops > 0 && !strings.Contains(out.String(), line) {
			t.Errorf("%d late drops: stats read\n%s", drops, out.String())
		}
	}
}

// atmlab stats prints the emulator's added latency for each spacing class
// that had releases, naming the traffic and its median spacing, and no
// such section before any.
func TestWriteStatsShowsAddedLatencyBySpacing(t *testing.T) {
	var out bytes.Buffer
	(&Stats{Lab: "l"}).WriteText(&out)
	if strings.Contains(out.String(), "added latency (release") {
		t.Errorf("no releases yet, stats read\n%s", out.String())
	}
	out.Reset()
	st := Stats{Lab: "l", Loop: LoopStats{Added: []AddedLatency{
		{To: time.Millisecond, Spacing: hist.Summary{P50: 120 * time.Microsecond}, Lateness: hist.Summary{Count: 900, P50: 2 * time.Microsecond, P99: 40 * time.Microsecond}},
		{From: 20 * time.Millisecond, Spacing: hist.Summary{P50: time.Second + 300*time.Nanosecond}, Lateness: hist.Summary{Count: 30, P50: 3 * time.Microsecond, P99: 9 * time.Microsecond}},
	}}}
	st.WriteText(&out)
	want := "emulator's added latency (release minus model time), by how far apart each host's frames came:\n" +
		"  under 1ms apart (streams, fast request/response): p50 2µs p99 40µs over 900 releases, median spacing 120µs\n" +
		"  20ms or more apart (the emulator slept between them): p50 3µs p99 9µs over 30 releases, median spacing 1s\n"
	if !strings.Contains(out.String(), want) {
		t.Errorf("stats read\n%s\nwant\n%s", out.String(), want)
	}
}

// A part of a split lab shows its cuts: what crossed, how late, and the
// clock exchanges' figures, in text and in JSON.
func TestWriteStatsShowsCuts(t *testing.T) {
	st := Stats{Lab: "split-left", Cuts: []CutStats{{
		Link: "s1:p9-s2:p9", Peer: "right", Address: "192.0.2.2:47001", Delay: time.Millisecond,
		Sent: 10, Received: 9, Lost: 1, Late: 2, Lateness: hist.Summary{Count: 2, P99: 30 * time.Microsecond, Max: 31 * time.Microsecond},
		Slack: hist.Summary{Count: 7, P50: 900 * time.Microsecond}, Exchanges: 40, Offset: -3 * time.Millisecond,
		Latency: 45 * time.Microsecond, Jitter: 5 * time.Microsecond, RTTMin: 80 * time.Microsecond, RTTMedian: 90 * time.Microsecond, RTTMax: 200 * time.Microsecond,
	}}}
	var b bytes.Buffer
	st.WriteText(&b)
	for _, want := range []string{
		"s1:p9-s2:p9 to part right at 192.0.2.2:47001: delay 1ms, sent 10, received 9, lost 1, late 2 (p99 30µs, max 31µs), on time by p50 900µs",
		"clock: offset -3ms, one-way latency 45µs + jitter 5µs, round trip min 80µs median 90µs max 200µs over 40 exchanges",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("stats text lacks %q:\n%s", want, b.String())
		}
	}
	j, err := st.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"cuts":[{"link":"s1:p9-s2:p9","peer":"right"`, `"late":2`, `"latency_ns":45000`, `"jitter_ns":5000`, `"offset_ns":-3000000`} {
		if !strings.Contains(string(j), want) {
			t.Errorf("stats JSON lacks %s: %s", want, j)
		}
	}
}
