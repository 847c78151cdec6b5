package labfile

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/atmlab/atmlab/emulator/units"
	"github.com/atmlab/atmlab/internal/labtest"
	"github.com/atmlab/atmlab/topologies"
)

const sweepLab = `name: grid
topology:
  nodes:
    h1: {kind: host, ipv4: 10.0.0.1/24}
    h2: {kind: host, ipv4: 10.0.0.2/24}
    sw1: {kind: switch}
    sw2: {kind: switch}
  links:
    - endpoints: ["h1:eth0", "sw1:p1"]
    - endpoints: ["sw1:p2", "sw2:p1"]
    - endpoints: ["h2:eth0", "sw2:p2"]
experiments:
  - {name: s, from: h1, to: h2, tests: [TCP_STREAM]}
variants:
  - {name: far, set: [{link: "h1:eth0", delay: 50ms}]}
sweep:
  - {link: ["h1:eth0", "sw2:p1"], rate: [10M, 100M, 1G]}
  - {link: "h2:eth0", delay: [0s, 5ms]}
  - {node: sw1, kind: [switch, hub]}
`

// A sweep's grid is its parameters' every combination, the first
// slowest, named by value, after the named variants; base is not measured.
func TestSweepGrid(t *testing.T) {
	lab, err := Parse("grid.yaml", []byte(sweepLab))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"far",
		"rate=10M,delay=0s,kind=switch", "rate=10M,delay=0s,kind=hub", "rate=10M,delay=5ms,kind=switch", "rate=10M,delay=5ms,kind=hub",
		"rate=100M,delay=0s,kind=switch", "rate=100M,delay=0s,kind=hub", "rate=100M,delay=5ms,kind=switch", "rate=100M,delay=5ms,kind=hub",
		"rate=1G,delay=0s,kind=switch", "rate=1G,delay=0s,kind=hub", "rate=1G,delay=5ms,kind=switch", "rate=1G,delay=5ms,kind=hub"}
	if got := lab.Measured(); !slices.Equal(got, want) {
		t.Fatalf("Measured() =\n%q\nwant\n%q", got, want)
	}
	if lab.Sweep == nil || len(lab.Sweep.Params) != 3 || lab.Sweep.Line != 17 {
		t.Fatalf("Sweep = %+v", lab.Sweep)
	}
	for i, p := range []topologies.Param{{Name: "rate", Key: "rate", Line: 17, Values: []string{"10M", "100M", "1G"}}, {Name: "delay", Key: "delay", Line: 18, Values: []string{"0s", "5ms"}}, {Name: "kind", Key: "kind", Line: 19, Values: []string{"switch", "hub"}}} {
		if got := lab.Sweep.Params[i]; got.Name != p.Name || got.Key != p.Key || got.Line != p.Line || !slices.Equal(got.Values, p.Values) {
			t.Errorf("param %d = %+v, want %+v", i, *got, p)
		}
	}
	if g := lab.GridOf("rate=100M,delay=5ms,kind=hub"); !slices.Equal(g, []string{"100M", "5ms", "hub"}) {
		t.Errorf("GridOf = %q", g)
	}
	if g := lab.GridOf("far"); g != nil {
		t.Errorf("GridOf(far) = %q, want nil", g)
	}
	// A point sets every target of each parameter.
	v := lab.Variants[slices.IndexFunc(lab.Variants, func(v *topologies.Variant) bool { return v.Name == "rate=100M,delay=5ms,kind=hub" })]
	if len(v.Set) != 4 || v.Set[0].Link != "h1:eth0" || v.Set[1].Link != "sw2:p1" || v.Set[1].Rate != 100*units.Mbps ||
		*v.Set[2].Delay != 5*time.Millisecond || v.Set[3].Node != "sw1" || v.Set[3].Kind != topologies.KindHub {
		t.Fatalf("Set = %+v", v.Set)
	}
}

// A grid point builds as its values say.
func TestSweepWithVariant(t *testing.T) {
	file := filepath.Join(t.TempDir(), "grid.yaml")
	if err := os.WriteFile(file, []byte(sweepLab), 0o644); err != nil {
		t.Fatal(err)
	}
	lab, err := Load(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range lab.Measured() {
		if _, err := lab.WithVariant(name); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	vl, err := lab.WithVariant("rate=10M,delay=5ms,kind=hub")
	if err != nil {
		t.Fatal(err)
	}
	l0, l1, l2 := vl.Links[0], vl.Links[1], vl.Links[2]
	if l0.AB.Rate != 10*units.Mbps || l0.BA.Rate != 10*units.Mbps || l1.AB.Rate != 10*units.Mbps || l2.AB.Rate != units.Gbps ||
		l2.AB.Impair.Delay != 5*time.Millisecond || l2.BA.Impair.Delay != 5*time.Millisecond || l0.AB.Impair.Delay != 0 ||
		vl.Node("sw1").Kind != topologies.KindHub || vl.Node("sw1").Repeater != "class2" {
		t.Fatalf("point built as %+v %+v %+v, sw1 %+v", l0, l1, l2, vl.Node("sw1"))
	}
}

// Jitter, a switch's buffer and a router's cost are variant keys too.
func TestSweepMoreKeys(t *testing.T) {
	src := labtest.Lab("two-hosts-switch", "more", `sweep:
  - {link: "h1:eth0", jitter: [1ms]}
  - {node: sw1, buffer: [16KiB, 64KiB]}
  - {node: h1, cpu: [{}, {per_packet: 30us, rate: 121M}]}
`)
	file := filepath.Join(t.TempDir(), "more.yaml")
	os.WriteFile(file, []byte(src), 0o644)
	lab, err := Load(file)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"jitter=1ms,buffer=16KiB,cpu=none", "jitter=1ms,buffer=16KiB,cpu=per_packet:30us;rate:121M",
		"jitter=1ms,buffer=64KiB,cpu=none", "jitter=1ms,buffer=64KiB,cpu=per_packet:30us;rate:121M"}
	if got := lab.Measured(); !slices.Equal(got, want) {
		t.Fatalf("Measured() = %q, want %q", got, want)
	}
	vl, err := lab.WithVariant(want[3])
	if err != nil {
		t.Fatal(err)
	}
	if vl.Links[0].AB.Impair.Jitter != time.Millisecond || vl.Node("sw1").Buffer != 64<<10 ||
		vl.Node("h1").CPU == nil || vl.Node("h1").CPU.PerPacket != 30*time.Microsecond {
		t.Fatalf("built %+v, buffer %d, cpu %+v", vl.Links[0].AB, vl.Node("sw1").Buffer, vl.Node("h1").CPU)
	}
}

// Every mistake in a sweep is found at load, with its file and line.
func TestSweepErrors(t *testing.T) {
	head := `name: bad
topology:
  nodes:
    h1: {kind: host, ipv4: 10.0.0.1/24}
    h2: {kind: host, ipv4: 10.0.0.2/24}
    sw1: {kind: switch}
    r1: {kind: router}
  links:
    - endpoints: ["h1:eth0", "sw1:p1"]
    - endpoints: ["h2:eth0", "sw1:p2"]
`
	many := make([]string, 11)
	for i := range many {
		many[i] = strconv.Itoa(i+1) + "ms"
	}
	for _, tc := range []struct{ name, sweep, want string }{
		{"not a list", "sweep: {rate: 10M}\n", "bad.yaml:11: sweep: want a list of parameters"},
		{"values not a list", "sweep:\n  - {link: \"h1:eth0\", rate: 10M}\n", "bad.yaml:12: sweep[0].rate: want a list of values"},
		{"bad value", "sweep:\n  - link: \"h1:eth0\"\n    rate:\n      - 10M\n      - 10X\n", "bad.yaml:15: sweep[0].rate[1].rate: bad rate"},
		{"no target", "sweep:\n  - {rate: [10M]}\n", "bad.yaml:12: sweep[0]: name the link:"},
		{"no key", "sweep:\n  - {link: \"h1:eth0\"}\n", "bad.yaml:12: sweep[0]: name a key to sweep"},
		{"two keys", "sweep:\n  - {link: \"h1:eth0\", rate: [10M], delay: [1ms]}\n", "sweep[0].delay: one parameter per entry"},
		{"unknown key", "sweep:\n  - {link: \"h1:eth0\", speed: [10M]}\n", "sweep[0].speed: unknown key"},
		{"unknown link", "sweep:\n  - {link: \"h9:eth0\", rate: [10M]}\n", "no link has endpoint \"h9:eth0\""},
		{"node key on a link", "sweep:\n  - {link: \"h1:eth0\", kind: [hub]}\n", "kind:, mpls:, cpu:, buffer: and cost: apply to a node:"},
		{"buffer of a host", "sweep:\n  - {node: h1, buffer: [64KiB]}\n", "buffer: is a switch's; h1 is a host"},
		{"cost of a switch", "sweep:\n  - {node: sw1, cost: [{ip: 1us}]}\n", "cost: is a router's; sw1 is a switch"},
		{"value twice", "sweep:\n  - {link: \"h1:eth0\", rate: [10M, 10M]}\n", "bad.yaml:12: sweep[0].rate[1]: \"10M\" is swept twice"},
		{"same name", "sweep:\n  - {link: \"h1:eth0\", rate: [10M]}\n  - {link: \"h2:eth0\", rate: [10M]}\n", "bad.yaml:13: sweep[1]: a second parameter named rate: give this one name:"},
		{"bad name", "sweep:\n  - {link: \"h1:eth0\", rate: [10M], name: Rate}\n", "sweep[0].name: \"Rate\": use 1-24 lowercase"},
		{"too many points", "sweep:\n  - {link: \"h1:eth0\", delay: [" + strings.Join(many, ", ") + "]}\n  - {link: \"h2:eth0\", delay: [" + strings.Join(many, ", ") + "], name: delay2}\n  - {link: \"h2:eth0\", loss: [0%, 1%, 2%, 3%, 4%, 5%, 6%, 7%, 8%]}\n",
			"bad.yaml:12: sweep: 11 delay × 11 delay2 × 9 loss make more than 1000 points, a grid's most: sweep fewer values, or split the grid over lab files"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("bad.yaml", []byte(head+tc.sweep))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Parse() error = %v, want it to contain %q", err, tc.want)
			}
		})
	}
	// A point that makes an invalid lab fails when the variant is resolved,
	// before anything is measured (lab run resolves every point first).
	file := filepath.Join(t.TempDir(), "hub.yaml")
	os.WriteFile(file, []byte(head+"sweep:\n  - {link: \"h1:eth0\", rate: [10M]}\n  - {node: sw1, kind: [hub]}\n"), 0o644)
	lab, err := Load(file)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lab.WithVariant("rate=10M,kind=hub"); err == nil || !strings.Contains(err.Error(), "variant rate=10M,kind=hub") {
		t.Fatalf("WithVariant of a hub with links of two rates: %v", err)
	}
}

// FuzzSweep: whatever sweep Parse accepts makes a grid of the product of
// its parameters' value counts, each point named once, and every point
// applies or is refused with an error, never a panic.
func FuzzSweep(f *testing.F) {
	f.Add([]byte(sweepLab))
	f.Add([]byte(strings.Replace(sweepLab, "kind: [switch, hub]", "buffer: [16KiB, 1MiB]", 1)))
	f.Add([]byte(strings.Replace(sweepLab, "delay: [0s, 5ms]", "jitter: [1ms], name: j", 1)))
	f.Fuzz(func(t *testing.T, data []byte) {
		lab, err := Parse("fuzz.yaml", data)
		if err != nil || lab.Sweep == nil {
			return
		}
		want := 1
		for _, p := range lab.Sweep.Params {
			want *= len(p.Values)
		}
		seen := map[string]bool{}
		grid := 0
		for _, v := range lab.Variants {
			if v.Grid == nil {
				continue
			}
			grid++
			if seen[v.Name] || len(v.Grid) != len(lab.Sweep.Params) {
				t.Fatalf("point %q twice or with %d values", v.Name, len(v.Grid))
			}
			seen[v.Name] = true
			fresh, err := Parse("fuzz.yaml", data)
			if err != nil {
				t.Fatal(err)
			}
			apply(fresh, v.Name)
		}
		if grid != want || want > MaxGridPoints {
			t.Fatalf("%d points, want %d", grid, want)
		}
	})
}
