package control

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/atmlab/atmlab/devices"
	"github.com/atmlab/atmlab/emulator"
	"github.com/atmlab/atmlab/emulator/sched"
	"github.com/atmlab/atmlab/topologies/labfile"
)

const hubLab = `
name: hubs
topology:
  nodes:
    h1: {kind: host, ipv4: 10.0.0.1/24}
    h2: {kind: host, ipv4: 10.0.0.2/24}
    h3: {kind: host, ipv4: 10.0.0.3/24}
    hub1: {kind: hub}
    sw1: {kind: switch}
  links:
    - {endpoints: ["h1:eth0", "hub1:p1"], ethernet: {rate: 100M}}
    - {endpoints: ["h2:eth0", "hub1:p2"], ethernet: {rate: 100M}}
    - {endpoints: ["sw1:p1", "hub1:p3"], ethernet: {rate: 100M}}
    - {endpoints: ["h3:eth0", "sw1:p2"], ethernet: {rate: 100M}}
`

// The devices' reports fill the per-node section and the top-level keys
// clients read since before it (hubs, switch_filtered), with the values
// they had; a client's decoded copy encodes to the same JSON.
func TestSnapshotSections(t *testing.T) {
	lab, err := labfile.Parse("hubs.yaml", []byte(hubLab))
	if err != nil {
		t.Fatal(err)
	}
	s := sched.New()
	n := devices.Build(lab, s)
	broadcast := make([]byte, 1514)
	copy(broadcast, "\xff\xff\xff\xff\xff\xff\x02\x00\x00\x00\x00\x01")
	n.Hosts["h1:eth0"].Input(&emulator.Frame{Data: broadcast})
	s.Run()
	st := Snapshot("hubs", LoopStats{}, n, time.Millisecond, nil)
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	var keys struct {
		Hubs     map[string]map[string]float64 `json:"hubs"`
		Filtered map[string]uint64             `json:"switch_filtered"`
		Nodes    map[string]map[string]any     `json:"nodes"`
		Ports    []map[string]any              `json:"ports"`
	}
	if err := json.Unmarshal(b, &keys); err != nil {
		t.Fatal(err)
	}
	// One 1514-octet frame (1518 with its FCS) in 1 ms of a 100 Mbit/s medium,
	// busy for its 8+1518 octets (122.08 µs).
	h := keys.Hubs["hub1"]
	if h["successes"] != 1 || h["collisions"] != 0 || h["frame_bits"] != 1518*8 || h["utilization"] != 1518*8/1e5 || h["collision_fraction"] != 0 || h["busy_ns"] != 122080 {
		t.Errorf("hubs = %v", keys.Hubs)
	}
	if len(keys.Filtered) != 1 || keys.Filtered["sw1"] != 0 {
		t.Errorf("switch_filtered = %v", keys.Filtered)
	}
	if len(keys.Ports) != 5 || len(keys.Nodes) != 2 || keys.Nodes["hub1"]["kind"] != "hub" || keys.Nodes["sw1"]["kind"] != "switch" {
		t.Errorf("ports %d, nodes %v", len(keys.Ports), keys.Nodes)
	}
	if want := "hub hub1: utilisation 12.1%, collisions 0.00% of the time, 1 frames, 0 collision events"; st.Nodes["hub1"].Line != want {
		t.Errorf("hub line %q, want %q", st.Nodes["hub1"].Line, want)
	}
	if _, err := json.Marshal(Snapshot("hubs", LoopStats{}, n, 0, nil)); err != nil {
		t.Errorf("stats at the lab's first instant: %v", err)
	}
	var back Stats
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	again, err := json.Marshal(back)
	if err != nil || !bytes.Equal(again, b) {
		t.Errorf("decoded and encoded again (%v):\n%s\nwant\n%s", err, again, b)
	}
}
