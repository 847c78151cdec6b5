package labfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/atmlab/atmlab/emulator/units"
	"github.com/atmlab/atmlab/internal/labtest"
	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/defaults"
	"github.com/atmlab/atmlab/topologies/labyaml"
	"github.com/atmlab/atmlab/topologies/study"
)

func TestLoadShipped(t *testing.T) {
	lab, err := Load("../sw100.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if lab.Name != "sw100" || len(lab.Nodes) != 3 || len(lab.Links) != 2 {
		t.Fatalf("got %q with %d nodes, %d links", lab.Name, len(lab.Nodes), len(lab.Links))
	}
	h1 := lab.Node("h1")
	if eth0 := h1.Interface("eth0"); eth0 == nil || eth0.IPv4.String() != "10.0.0.1/24" || eth0.MTU != 1500 {
		t.Fatalf("h1 eth0 = %+v", eth0)
	}
	if lab.Node("sw1").Buffer != 128<<10 || lab.Links[0].AB.Rate != 100*units.Mbps {
		t.Fatal("buffer or rate not parsed")
	}
	if len(h1.Sysctls) != 1 || h1.Sysctls[0].Value != "cubic" {
		t.Fatalf("sysctls = %+v", h1.Sysctls)
	}
	if lab.Namespace("h1") != "sw100-h1" {
		t.Fatalf("Namespace(h1) = %q", lab.Namespace("h1"))
	}
}

func TestParseFull(t *testing.T) {
	lab, err := Parse("full.yaml", []byte(`
name: full
seed: 9
topology:
  nodes:
    a: {kind: host, interfaces: {eth0: {ipv4: 10.0.0.1/24}, eth1: {ipv4: 10.1.0.1/24, mtu: 9000}}, routes: [{to: default, via: 10.0.0.254}]}
    b: {kind: host, ipv4: 10.0.0.2/24, mtu: 9000}
    c: {kind: host, ipv4: 10.1.0.2/24}
  links:
    - endpoints: ["a:eth0", "b:eth0"]
      ethernet: {rate: 155.52M, cable: 100m}
      impair: {delay: 1ms, jitter: 100us, loss: 0.1%, limit: 1000, rate: 50M}
      directions:
        "b:eth0": {rate: 10M, impair: {delay: 5ms}}
    - endpoints: ["a:eth1", "c:eth0"]
`))
	if err != nil {
		t.Fatal(err)
	}
	l := lab.Links[0]
	if l.Propagation != 500*time.Nanosecond || l.AB.Rate != 155_520_000 || l.BA.Rate != 10*units.Mbps {
		t.Fatalf("link 0 = %+v", l)
	}
	if l.AB.Impair.Delay != time.Millisecond || l.AB.Impair.Loss != 0.001 || l.AB.Impair.Limit != 1000 || l.AB.Impair.Rate != 50*units.Mbps {
		t.Fatalf("AB impair = %+v", l.AB.Impair)
	}
	if l.BA.Impair.Delay != 5*time.Millisecond || l.BA.Impair.Loss != 0 {
		t.Fatalf("BA impair = %+v (a direction's impair replaces the link's)", l.BA.Impair)
	}
	if lab.Links[1].AB.Rate != defaults.Rate {
		t.Fatalf("default rate = %v", lab.Links[1].AB.Rate)
	}
	a := lab.Node("a")
	if len(a.Routes) != 1 || a.Routes[0].To.String() != "0.0.0.0/0" || a.Interface("eth1").MTU != 9000 || lab.Node("b").Interface("eth0").MTU != 9000 {
		t.Fatalf("node a = %+v", a)
	}
}

// Every problem comes back at once, each with file, line and key.
func TestParseErrors(t *testing.T) {
	src := `name: Bad_Name
topology:
  nodes:
    h1: {kind: host, ipv4: 10.0.0.1/24, colour: red}
    h2: {kind: host, ipv4: 10.0.0.1/24}
    sw1: {kind: switch, buffer: lots}
    r1: {kind: toaster}
  links:
    - endpoints: ["h1:eth0", "sw1:p1"]
      ethernet: {rate: fast}
    - endpoints: ["h2:eth0", "sw9:p1"]
    - endpoints: ["h1:eth0", "sw1:p2"]
      impair: {loss: 200%}
`
	_, err := Parse("bad.yaml", []byte(src))
	if err == nil {
		t.Fatal("Parse succeeded on a malformed lab")
	}
	want := []string{
		"bad.yaml:1: name:",
		"bad.yaml:4: topology.nodes.h1.colour: unknown key",
		"bad.yaml:6: topology.nodes.sw1.buffer: bad buffer",
		"bad.yaml:7: topology.nodes.r1.kind: unknown kind",
		"bad.yaml:10: topology.links[0].ethernet.rate: bad rate",
		"bad.yaml:11: topology.links[1].endpoints[1]: \"sw9:p1\": no node named sw9",
		"bad.yaml:13: topology.links[2].impair.loss: bad loss",
		"bad.yaml:12: topology.links: endpoint h1:eth0 is already used by the link on line 9",
		"is also h1:eth0's",
		"interface eth0 has no link",
	}
	msg := err.Error()
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("errors lack %q; got:\n%s", w, msg)
		}
	}
	var e *labyaml.Error
	if !errors.As(err, &e) || e.File != "bad.yaml" || e.Line == 0 {
		t.Errorf("errors are not *labyaml.Error with a position: %#v", err)
	}
}

func TestParseSyntaxAndShape(t *testing.T) {
	for _, tc := range []struct{ name, src, want string }{
		{"yaml syntax", "name: x\ntopology: [\n", "bad.yaml:"},
		{"empty", "", "the lab file is empty"},
		{"missing topology", "name: x\n", "topology: missing"},
		{"nodes not a map", "name: x\ntopology: {nodes: [a, b]}\n", "want a mapping of node names"},
		{"route off-link", "name: x\ntopology:\n  nodes:\n    a: {kind: host, ipv4: 10.0.0.1/24, routes: [{to: 10.9.0.0/16, via: 10.5.0.1}]}\n  links:\n    - endpoints: [\"a:eth0\", \"s:p1\"]\n    - endpoints: [\"b:p1\", \"s:p2\"]\n", "gateway 10.5.0.1 is on none"},
		{"link to itself", "name: x\ntopology:\n  nodes: {s: {kind: switch}}\n  links: [{endpoints: [\"s:p1\", \"s:p1\"]}]\n", "bad.yaml:4: topology.links: a link cannot join a port to itself"},
		{"both media", "name: x\ntopology:\n  nodes: {s: {kind: switch}, t: {kind: switch}}\n  links: [{endpoints: [\"s:p1\", \"t:p1\"], ethernet: {rate: 1G}, atm: {phy: oc3}}]\n", "either ethernet: or atm:"},
		{"direction not an endpoint", "name: x\ntopology:\n  nodes: {s: {kind: switch}, t: {kind: switch}}\n  links: [{endpoints: [\"s:p1\", \"t:p1\"], directions: {\"u:p1\": {rate: 1M}}}]\n", "is not an endpoint of this link"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("bad.yaml", []byte(tc.src))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Parse() error = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("name: x\ntopology: {nodes: {a: {kind: host, ipv4: 10.0.0.1/24}}, links: [{endpoints: [\"a:eth0\", \"s:p1\"]}]}\n"))
	f.Add([]byte("name: y\ntopology: {nodes: {s: {kind: switch, buffer: 1KiB}}}\n"))
	f.Add([]byte("name: z\nnotes: !!python/object:x [a]\ntopology: {nodes: {r: {kind: router, interfaces: {e0: {ipv4: 10.0.0.1/24}, e1: {ipv4: 10.0.0.2/16}}}}}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		lab, err := Parse("fuzz.yaml", data)
		if err == nil && lab.Name == "" {
			t.Fatal("a lab without a name was accepted")
		}
	})
}

func TestExperiments(t *testing.T) {
	base := `name: x
topology:
  nodes:
    h1: {kind: host, ipv4: 10.0.0.1/24}
    h2: {kind: host, ipv4: 10.0.0.2/24}
    sw: {kind: switch}
  links:
    - {endpoints: ["h1:eth0", "sw:p1"]}
    - {endpoints: ["h2:eth0", "sw:p2"]}
`
	lab, err := Parse("ok.yaml", []byte(base+`experiments:
  - {name: sweep, from: h1, to: h2, tests: [tcp_stream, UDP_RR], sizes: [64, 1472], sockbufs: [0, 65536], repetitions: 3, duration: 2s,
     background: {from: h2, to: h1}}
`))
	if err != nil {
		t.Fatal(err)
	}
	e := lab.Experiments[0]
	if e.Tool != "atmlab" || len(e.Tests) != 2 || e.Tests[0] != "TCP_STREAM" || len(e.Sizes) != 2 || e.SockBufs[1] != 65536 ||
		e.Repetitions != 3 || e.Duration != 2*time.Second || e.Background == nil || e.Background.Test != "UDP_STREAM" {
		t.Fatalf("experiment = %+v", e)
	}
	lab, err = Parse("ok.yaml", []byte(base+"experiments:\n  - {name: i3, from: h1, to: h2, tool: iperf3, virtual: atmlab, tests: [UDP_STREAM]}\n"))
	if err != nil || lab.Experiments[0].Virtual != "atmlab" {
		t.Fatalf("virtual: atmlab: %v %+v", err, lab)
	}
	_, err = Parse("bad.yaml", []byte(base+`experiments:
  - name: a
    from: h9
    to: h2
    tests: [TCP_BLAST]
    sizes: [0]
    tool: netperf
    colour: red
  - {name: a, from: h1, to: h1, tests: [TCP_RR]}
  - {name: b, from: h1, to: h2, tests: [TCP_RR], virtual: atmlab}
  - {name: c, from: h1, to: h2, tool: iperf3, tests: [TCP_STREAM], virtual: netperf}
  - {name: d, from: h1, to: h2, tests: [TCP_RR], quick: {repetitions: 0}}
`))
	for _, want := range []string{
		`bad.yaml:20: experiments[3].virtual: "netperf": use one of atmlab`,
		`bad.yaml:12: experiments[0].from: "h9" is not a host of this lab`,
		`bad.yaml:14: experiments[0].tests: unknown test "TCP_BLAST"`,
		`bad.yaml:15: experiments[0].sizes: want a whole number from 1`,
		`bad.yaml:17: experiments[0].colour: unknown key`,
		`bad.yaml:18: experiments[1].name: experiment "a" is defined twice`,
		`bad.yaml:21: experiments[4].quick.repetitions: want a whole number from 1 to 1000, got "0"`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("errors lack %q; got:\n%v", want, err)
		}
	}
}

// TestConfidence decodes an experiment's confidence: netperf's defaults
// for what it leaves out, each bad value with its line and the fix.
func TestConfidence(t *testing.T) {
	base := `name: x
topology:
  nodes:
    h1: {kind: host, ipv4: 10.0.0.1/24}
    h2: {kind: host, ipv4: 10.0.0.2/24}
  links:
    - {endpoints: ["h1:eth0", "h2:eth0"]}
experiments:
`
	for _, c := range []struct {
		yaml string
		want study.Confidence
	}{
		{"{}", study.Confidence{Level: 99, Width: 0.05, Min: 3, Max: 10, Line: 9}},
		{"{level: 95, width: 2%, min: 4, max: 30}", study.Confidence{Level: 95, Width: 0.02, Min: 4, Max: 30, Line: 9}},
		{"{width: 10, max: 3}", study.Confidence{Level: 99, Width: 0.10, Min: 3, Max: 3, Line: 9}},
	} {
		lab, err := Parse("ok.yaml", []byte(base+"  - {name: a, from: h1, to: h2, tests: [TCP_RR], confidence: "+c.yaml+"}\n"))
		if err != nil {
			t.Fatalf("%s: %v", c.yaml, err)
		}
		if got := lab.Experiments[0].Confidence; got == nil || *got != c.want {
			t.Errorf("confidence: %s = %+v, want %+v", c.yaml, got, c.want)
		}
	}
	lab, err := Parse("ok.yaml", []byte(base+"  - {name: a, from: h1, to: h2, tests: [TCP_RR]}\n"))
	if err != nil || lab.Experiments[0].Confidence != nil {
		t.Fatalf("no confidence: %v %+v", err, lab.Experiments[0].Confidence)
	}
	_, err = Parse("bad.yaml", []byte(base+`  - {name: a, from: h1, to: h2, tests: [TCP_RR], confidence: {level: 90}}
  - {name: b, from: h1, to: h2, tests: [TCP_RR], confidence: {width: 0%}}
  - {name: c, from: h1, to: h2, tests: [TCP_RR], confidence: {width: 100}}
  - {name: d, from: h1, to: h2, tests: [TCP_RR], confidence: {min: 2}}
  - {name: e, from: h1, to: h2, tests: [TCP_RR], confidence: {max: 31}}
  - {name: f, from: h1, to: h2, tests: [TCP_RR], confidence: {min: 8, max: 5}}
  - {name: g, from: h1, to: h2, tests: [TCP_RR], confidence: {interval: 5}}
  - {name: h, from: h1, to: h2, tests: [TCP_RR], confidence: 99}
`))
	for _, want := range []string{
		`bad.yaml:9: experiments[0].confidence.level: "90": use 95 or 99 (per cent)`,
		`bad.yaml:10: experiments[1].confidence.width: bad width "0%": the interval's full width in per cent of the mean, above 0 and below 100, such as 5%`,
		`bad.yaml:11: experiments[2].confidence.width: bad width "100"`,
		`bad.yaml:12: experiments[3].confidence.min: want a whole number from 3 to 30, got "2"`,
		`bad.yaml:13: experiments[4].confidence.max: want a whole number from 3 to 30, got "31"`,
		`bad.yaml:14: experiments[5].confidence: min: 8 is more than max: 5 iterations; make min at most max`,
		`bad.yaml:15: experiments[6].confidence.interval: unknown key; allowed here: level, width, min, max`,
		`bad.yaml:16: experiments[7].confidence: want a mapping of keys, got "99"`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("errors lack %q; got:\n%v", want, err)
		}
	}
}

func TestReferences(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "hw.json"), []byte(`{"end": {"sum_received": {"bits_per_second": 9.4e7}}}`), 0o644)
	base := `name: x
topology:
  nodes:
    h1: {kind: host, ipv4: 10.0.0.1/24}
    h2: {kind: host, ipv4: 10.0.0.2/24}
  links:
    - {endpoints: ["h1:eth0", "h2:eth0"]}
experiments:
  - {name: s, from: h1, to: h2, tests: [UDP_STREAM]}
`
	lab, err := Parse(filepath.Join(dir, "ok.yaml"), []byte(base+`reference:
  - {experiment: s, test: UDP_STREAM, size: 1460, value: 11.41, unit: MiB/s, source: "praktikum Task II"}
  - {test: TCP_STREAM, file: hw.json, format: iperf3, source: "a real NIC"}
`))
	if err != nil {
		t.Fatal(err)
	}
	r := lab.References[0]
	if r.Normalized() != 11.41*8*(1<<20) || r.Size != 1460 || lab.References[1].File != filepath.Join(dir, "hw.json") {
		t.Fatalf("references = %+v %+v", r, lab.References[1])
	}
	_, err = Parse(filepath.Join(dir, "bad.yaml"), []byte(base+`reference:
  - {experiment: nope, test: UDP_STREAM, value: 11.41, unit: furlongs, source: x}
  - {test: TCP_STREAM, file: missing.json, source: y}
  - {test: TCP_STREAM, source: z}
`))
	for _, want := range []string{
		`bad.yaml:11: reference[0].experiment: no experiment named "nope"`,
		`bad.yaml:11: reference[0].unit: unknown unit "furlongs"`,
		`bad.yaml:12: reference[1].file: cannot read`,
		`bad.yaml:12: reference[1].format: missing`,
		`bad.yaml:13: reference[2]: give value: and unit:, or file: with format:`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("errors lack %q; got:\n%v", want, err)
		}
	}
}

func TestVariants(t *testing.T) {
	src := labtest.Lab("two-hosts-switch", "x", `variants:
  - name: slow
    set: [{link: "h1:eth0", rate: 10M, delay: 5ms, loss: 1%}]
  - name: hub
    set: [{node: sw1, kind: hub}]
`)
	file := filepath.Join(t.TempDir(), "lab.yaml")
	os.WriteFile(file, []byte(src), 0o644)
	lab, err := Load(file)
	if err != nil {
		t.Fatal(err)
	}
	slow, err := lab.WithVariant("slow")
	if err != nil {
		t.Fatal(err)
	}
	l := slow.Links[0]
	if l.AB.Rate != 10*units.Mbps || l.BA.Rate != 10*units.Mbps || l.AB.Impair.Delay != 5*time.Millisecond || l.BA.Impair.Loss != 0.01 {
		t.Fatalf("slow variant link = %+v", l)
	}
	if lab.Links[0].AB.Rate != 100*units.Mbps {
		t.Fatal("WithVariant changed the base lab")
	}
	hub, err := lab.WithVariant("hub")
	if err != nil || hub.Node("sw1").Kind != topologies.KindHub || hub.Node("sw1").Repeater != "class2" {
		t.Fatalf("hub variant: %v %+v", err, hub.Node("sw1"))
	}
	if base, err := lab.WithVariant("base"); err != nil || base.Node("sw1").Kind != topologies.KindSwitch {
		t.Fatalf("base: %v", err)
	}
	// A hub whose links disagree on the rate is no lab: the variant says so.
	os.WriteFile(file, []byte(strings.Replace(src, "kind: hub}]", "kind: hub}, {link: \"h1:eth0\", rate: 10M}]", 1)), 0o644)
	lab, _ = Load(file)
	if _, err := lab.WithVariant("hub"); err == nil || !strings.Contains(err.Error(), "runs at one rate") {
		t.Fatalf("inconsistent hub variant: %v", err)
	}
	_, err = Parse("bad.yaml", []byte(strings.Replace(src, "variants:", `variants:
  - {name: base, set: [{link: "h9:eth0", rate: 1G}]}
  - {name: odd, set: [{node: sw1, rate: 1G}, {node: h1, kind: router}]}`, 1)))
	for _, want := range []string{`"base" is taken`, `no link has endpoint "h9:eth0"`, "apply to a link:, not a node:", `"router": a variant can make a node a switch or a hub`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("errors lack %q; got:\n%v", want, err)
		}
	}
}

// A background's sockbuf: is its socket buffers in bytes, in the range of
// an experiment's sockbufs: values (0, the default, when absent); a value
// outside it is an error at its line.
func TestBackgroundSockBuf(t *testing.T) {
	bg := func(extra string) string {
		return hostsLab("ipv4: 10.0.0.1/24", "experiments:\n  - name: s\n    from: h1\n    to: h2\n    tests: [TCP_STREAM]\n    background:\n      from: h2\n      to: h1\n      test: TCP_STREAM\n"+extra)
	}
	for src, want := range map[string]int{bg(""): 0, bg("      sockbuf: 65535\n"): 65535, bg("      sockbuf: 0\n"): 0, bg("      sockbuf: 67108864\n"): 64 << 20} {
		lab, err := Parse("ok.yaml", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		if got := lab.Experiments[0].Background.SockBuf; got != want {
			t.Errorf("background sockbuf = %d, want %d", got, want)
		}
	}
	for v, want := range map[string]string{
		"-1":       "want a whole number from 0 to 67108864",
		"67108865": "want a whole number from 0 to 67108864",
		"64k":      "want a whole number from 0 to 67108864",
		"[65535]":  "want a single value",
	} {
		_, err := Parse("bad.yaml", []byte(bg("      sockbuf: "+v+"\n")))
		want = "bad.yaml:19: experiments[0].background.sockbuf: " + want
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("sockbuf: %s: error = %v, want it to contain %q", v, err, want)
		}
	}
}
