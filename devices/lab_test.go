package devices

import (
	"maps"
	"path/filepath"
	"slices"
	"testing"

	"github.com/atmlab/atmlab/emulator"
	"github.com/atmlab/atmlab/emulator/atm"
	"github.com/atmlab/atmlab/emulator/ether"
	"github.com/atmlab/atmlab/emulator/sched"
	"github.com/atmlab/atmlab/topologies/defaults"
	"github.com/atmlab/atmlab/topologies/labfile"
)

// Every shipped lab file validates and builds.
func TestShippedLabsValid(t *testing.T) {
	files, _ := filepath.Glob("../topologies/*.yaml")
	if len(files) < 2 {
		t.Fatalf("shipped labs: %v", files)
	}
	for _, f := range files {
		lab, err := labfile.Load(f)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		Build(lab, sched.New()) // panics on a programming fault
	}
}

// FuzzParseBuild runs what `up` runs on whatever labfile.Parse accepts: Build, then
// a broadcast frame from every host through the network for a bounded
// number of events. A lab labfile.Parse accepts must build (what `up` would refuse,
// validate refuses) and never panic: jitter of 1281023h did, on the first
// frame; NaN loss, cable and pcr silently meant nothing.
//
// Its seeds are small labs. The lab files of this directory (up to 14 KB)
// made it stall at about 20 executions: the engine minimizes every input
// that finds new coverage, with a pass whose cost grows with the square of
// the input's length, for up to 60 s each, and the first mutants of every
// large seed found some. TestBuildDeterministic runs the lab files instead.
func FuzzParseBuild(f *testing.F) {
	for _, seed := range buildSeeds() {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		lab, err := labfile.Parse("fuzz.yaml", data)
		if err != nil {
			return
		}
		s := sched.New()
		n := Build(lab, s)
		// In a fixed order, so that one input takes one path: Build is
		// deterministic (TestBuildDeterministic), the hosts map is not.
		for _, name := range slices.Sorted(maps.Keys(n.Hosts)) {
			broadcast := make([]byte, 60)
			copy(broadcast, "\xff\xff\xff\xff\xff\xff\x02\x00\x00\x00\x00\x01\x08\x06")
			n.Hosts[name].Input(&emulator.Frame{Data: broadcast})
		}
		for i := 0; i < 20000 && s.Step(); i++ {
		}
	})
}

// buildSeeds are FuzzParseBuild's seeds: small labs at the edges of the
// values' ranges, a loop of switches, ATM links.
func buildSeeds() [][]byte {
	var seeds [][]byte
	for _, v := range []string{
		"impair: {delay: 24h, jitter: 24h, loss: 0.5%, limit: 1}",
		"impair: {jitter: 1281023h}",
		"impair: {loss: NaN}",
		"ethernet: {rate: 1k, cable: 100000000m}",
		"ethernet: {rate: 1000G, cable: NaNm}",
		"ethernet: {rate: 9e18}",
		"atm: {phy: oc3, pcr: 1}",
		"atm: {phy: ds3, aal: aal34, encap: vcmux, pcr: 1e-300}",
		"atm: {phy: oc3}, impair: {delay: 24h, jitter: 24h, loss: 50%}",
		"atm: {phy: oc12}, impair: {delay: 24h, limit: 1}",
	} {
		seeds = append(seeds, []byte("name: f\ntopology:\n  nodes:\n    h1: {kind: host, ipv4: 10.0.0.1/24}\n    h2: {kind: host, ipv4: 10.0.0.2/24, sysctls: {net.ipv4.tcp_congestion_control: reno}}\n  links:\n    - {endpoints: [\"h1:eth0\", \"h2:eth0\"], "+v+"}\n"))
	}
	seeds = append(seeds, []byte("name: f\ntopology:\n  nodes:\n    h1: {kind: host, ipv4: 10.0.0.1/24}\n    h2: {kind: host, ipv4: 10.0.0.2/24}\n    a1: {kind: atm-switch}\n  links:\n    - {endpoints: [\"h1:eth0\", \"a1:p1\"], atm: {phy: oc3}}\n    - {endpoints: [\"h2:eth0\", \"a1:p2\"], atm: {phy: oc3, aal: aal34}}\n"))
	seeds = append(seeds, []byte("name: f\ntopology:\n  nodes:\n    h1: {kind: host, ipv4: 10.0.0.1/24}\n    s1: {kind: switch, buffer: 1GiB}\n    s2: {kind: switch}\n  links:\n    - {endpoints: [\"h1:eth0\", \"s1:p1\"]}\n    - {endpoints: [\"s1:p2\", \"s2:p1\"]}\n    - {endpoints: [\"s2:p2\", \"s1:p3\"]}\n"))
	return seeds
}

// The lab file's defaults are the models' own where a model has one.
func TestDefaultsAgree(t *testing.T) {
	if defaults.SwitchBuffer != ether.DefaultBuffer {
		t.Errorf("a switch's default buffer: lab file %v, ether %v", defaults.SwitchBuffer, ether.DefaultBuffer)
	}
	if defaults.ATMSwitchQueue != atm.DefaultSwitchQueue {
		t.Errorf("an atm-switch's default queue: lab file %d, atm %d", defaults.ATMSwitchQueue, atm.DefaultSwitchQueue)
	}
}
