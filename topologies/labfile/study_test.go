package labfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/atmlab/atmlab/emulator/units"
	"github.com/atmlab/atmlab/internal/labtest"
	"github.com/atmlab/atmlab/topologies/study"
)

var twoHosts = labtest.Lab("two-hosts-switch", "x", `experiments:
  - {name: udp, from: h1, to: h2, tests: [UDP_STREAM], sizes: [64, 512, 1472]}
  - name: rr
    from: h1
    to: h2
    tests: [TCP_RR, UDP_RR]
    sizes: [1, 64, 1024]
    variants: [slow]
    quick: {tests: [TCP_RR], sizes: [1], variants: [slow], duration: 1s, repetitions: 3}
variants:
  - name: slow
    set: [{node: h1, cpu: {per_packet: 50us, rate: 64M}}]
  - name: fast
    set: [{node: h1, cpu: {}}]
`)

func TestFindings(t *testing.T) {
	lab, err := Parse("ok.yaml", []byte(twoHosts+`findings:
  - claim: "a slow sender makes fewer transactions"
    study: "NT: 2-3x fewer"
    measured: {variant: slow, experiment: rr, test: TCP_RR, size: 1}
    against: {experiment: udp, test: UDP_STREAM}
    change: [-70, -30]
    why: "a cost per packet"
  - claim: "UDP reaches the wire"
    measured: {experiment: udp, test: UDP_STREAM, size: 1472, sockbuf: 0, tool: iperf3}
    hardware: {value: 11.41, unit: MiB/s}
    change: [-2, 2]
    why: "the link is the bound"
`))
	if err != nil {
		t.Fatal(err)
	}
	f := lab.Findings[0]
	if f.Claim == "" || f.Study != "NT: 2-3x fewer" || f.Change != [2]float64{-70, -30} || f.Measured.Variant != "slow" ||
		f.Measured.Size != 1 || f.Measured.SockBuf != -1 || f.Against == nil || f.Against.Variant != "base" || f.Against.Tool != "atmlab" {
		t.Fatalf("finding 0 = %+v", f)
	}
	if g := lab.Findings[1]; g.Hardware == nil || g.Hardware.Normalized() != 11.41*8*(1<<20) || g.Measured.Tool != "iperf3" || g.Measured.SockBuf != 0 {
		t.Fatalf("finding 1 = %+v", g)
	}
	if s := f.Measured.String(); s != "rr TCP_RR 1 B (slow)" {
		t.Errorf("selector reads %q", s)
	}
	_, err = Parse("bad.yaml", []byte(twoHosts+`findings:
  - claim: "no check"
    measured: {experiment: nope, test: TCP_RR, variant: blue}
    change: [5, -5]
    why: "x"
  - {claim: "both", why: "x", measured: {experiment: udp, test: UDP_STREAM}, against: {experiment: udp, test: UDP_STREAM}, hardware: {value: 1, unit: Mbit/s}, change: [0, 1]}
`))
	for _, want := range []string{
		`findings[0].measured.experiment: no experiment named "nope"`,
		`findings[0].measured.variant: no variant named "blue"`,
		`findings[0].change: low 5 is above high -5`,
		`findings[0]: give against: (an emulated point) or hardware: (a figure), one of them`,
		`findings[1]: give against:`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("errors lack %q; got:\n%v", want, err)
		}
	}
}

func TestExperimentVariantsAndCPUOverride(t *testing.T) {
	file := filepath.Join(t.TempDir(), "lab.yaml")
	os.WriteFile(file, []byte(twoHosts), 0o644)
	lab, err := Load(file)
	if err != nil {
		t.Fatal(err)
	}
	base, _ := lab.WithVariant("base")
	if len(base.Experiments) != 1 || base.Experiments[0].Name != "udp" {
		t.Fatalf("base runs %d experiments; want only udp", len(base.Experiments))
	}
	slow, err := lab.WithVariant("slow")
	if err != nil || len(slow.Experiments) != 2 {
		t.Fatalf("slow: %v, %d experiments", err, len(slow.Experiments))
	}
	c := slow.Node("h1").CPU
	if c == nil || c.PerPacket != 50*time.Microsecond || c.Copy != 64*units.Mbps {
		t.Fatalf("slow h1 cpu = %+v", c)
	}
	q := slow.Experiments[1].Quick
	if q == nil || q.Duration != time.Second || q.Tests[0] != "TCP_RR" || q.Variants[0] != "slow" || q.Repetitions != 3 {
		t.Fatalf("quick = %+v", q)
	}
	// An empty cpu: in a variant removes a host's limit.
	os.WriteFile(file, []byte(strings.Replace(twoHosts, "h1: {kind: host, ipv4: 10.0.0.1/24}", "h1: {kind: host, ipv4: 10.0.0.1/24, cpu: {rate: 77M}}", 1)), 0o644)
	lab, _ = Load(file)
	if fast, err := lab.WithVariant("fast"); err != nil || fast.Node("h1").CPU != nil || lab.Node("h1").CPU == nil {
		t.Fatalf("fast: %v %+v", err, fast.Node("h1").CPU)
	}
	bad := strings.Replace(twoHosts, "variants: [slow]", "variants: [slow, green]", 1)
	bad = strings.Replace(bad, "    sw1: {kind: switch}\n", "    sw1: {kind: switch}\n    r1: {kind: router}\n", 1)
	_, err = Parse("bad.yaml", []byte(bad+
		"  - {name: cpu-on-router, set: [{node: r1, cpu: {rate: 1M}}, {link: \"h1:eth0\", cpu: {rate: 1M}}]}\n"))
	for _, want := range []string{`experiments[1].variants: no variant named "green"`, "cpu: limits a host or a switch; r1 is a router", "kind:, mpls:, cpu:, buffer: and cost: apply to a node:"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("errors lack %q; got:\n%v", want, err)
		}
	}
}

func TestGrades(t *testing.T) {
	lab, err := Parse("ok.yaml", []byte(twoHosts+"grades: {bandwidth: [900, 800, 700, 600], cpu: [19, 39, 59, 79], study: [{name: iperf TCP, bandwidth: 952, cpu: 32}]}\n"))
	if err != nil || lab.Grades == nil || len(lab.Grades.Study) != 1 || lab.Grades.Study[0].CPU != 32 || lab.Grades.Bandwidth != [4]float64{900, 800, 700, 600} || lab.Grades.CPU[3] != 79 {
		t.Fatalf("grades: %v %+v", err, lab.Grades)
	}
	// The Sandia study's own rows: iperf TCP 952 Mb/s with 32 % CPU is A/B,
	// netperf 2.4.3 SCTP 629 Mb/s with 73 % is D/D, 2.4.6 SCTP 963 with 88 % A/F.
	g := lab.Grades
	for _, c := range []struct {
		mbps, cpu float64
		bw, cp    string
	}{{952, 32, "A", "B"}, {629, 73, "D", "D"}, {963, 88, "A", "F"}, {900, 19, "A", "A"}, {599, 80, "F", "F"}, {899.9, 39.5, "B", "C"}} {
		if b, p := study.Letter(c.mbps, g.Bandwidth, true), study.Letter(c.cpu, g.CPU, false); b != c.bw || p != c.cp {
			t.Errorf("%g Mb/s, %g %%: %s/%s, want %s/%s", c.mbps, c.cpu, b, p, c.bw, c.cp)
		}
	}
	_, err = Parse("bad.yaml", []byte(twoHosts+"grades: {bandwidth: [600, 700, 800, 900], cpu: [19, 39]}\n"))
	for _, want := range []string{"grades.bandwidth: thresholds must run from A to D, each lower", "grades.cpu: want the thresholds of A, B, C and D"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("errors lack %q; got:\n%v", want, err)
		}
	}
}

func TestFigures(t *testing.T) {
	lab, err := Parse("ok.yaml", []byte(twoHosts+"figures:\n  - {name: udp-vs-rr, title: \"UDP and RR\", experiments: [udp, rr], tests: [UDP_STREAM], variants: [base, slow]}\n  - {name: sweep, title: s, experiments: [rr], x: variant}\n"))
	if err != nil || len(lab.Figures) != 2 || lab.Figures[0].Name != "udp-vs-rr" || len(lab.Figures[0].Experiments) != 2 || lab.Figures[0].Variants[1] != "slow" ||
		lab.Figures[0].ByVariant || !lab.Figures[1].ByVariant {
		t.Fatalf("figures: %v %+v", err, lab.Figures)
	}
	_, err = Parse("bad.yaml", []byte(twoHosts+"figures:\n  - {name: \"Bad Name\", title: x, experiments: [nope], variants: [blue]}\n"))
	for _, want := range []string{`figures[0].name: "Bad Name"`, `figures[0].experiments: no experiment named "nope"`, `figures[0].variants: no variant named "blue"`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("errors lack %q; got:\n%v", want, err)
		}
	}
}
