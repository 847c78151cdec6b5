package study

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/atmlab/atmlab/topologies/labyaml"
)

// Experiment is one entry of a lab file's `experiments:`: a matrix of
// tests × sizes × socket buffers × repetitions between two hosts, measured
// with atmlab's own tool or iperf3, optionally under a background load.
type Experiment struct {
	Name     string
	Line     int
	From, To string // client and server hosts; the same host tests its loopback
	Tool     string // the tool that measures it (labrun's tools): atmlab unless given
	// Virtual is "atmlab" when an experiment whose tool has no virtual
	// side (iperf3, iperf) is to run as atmlab's own test in virtual time,
	// where no real binary runs; empty: such points are skipped there.
	Virtual     string
	Tests       []string
	Sizes       []int // message size (streams); request = response size (RR)
	SockBufs    []int // 0 = system default
	Repetitions int
	Duration    time.Duration
	Interval    time.Duration // interval reports (0: none), plotted as time series
	Background  *Background
	Confidence  *Confidence // repeat each point until its interval is narrow enough; nil: once
	Variants    []string    // the variants it runs in ("base" is the lab as written); none: all
	Quick       *Quick      // what --quick runs instead; nil: the default rule
}

// Quick replaces parts of an experiment in a quick run (lab run --quick);
// what it leaves unset the default rule shrinks.
type Quick struct {
	Tests       []string
	Sizes       []int
	SockBufs    []int
	Variants    []string
	Duration    time.Duration
	Repetitions int // runs of each point (0: one); a claim's median of three outvotes a stall of the machine
}

// Confidence is an experiment's confidence: netperf's -I LEVEL,WIDTH with
// -i MAX,MIN. Each point (each repetition) is measured again until the
// LEVEL % confidence interval of its main figure is no wider than Width
// (full width, a fraction of the mean: 0.05 is ±2.5 %), at least Min and
// at most Max times; its record holds their mean.
type Confidence struct {
	Level    int     // 95 or 99
	Width    float64 // fraction of the mean, full width
	Min, Max int     // iterations: 3 <= Min <= Max <= 30
	Line     int
}

// DefaultConfidence is netperf's -I 99,5 -i 10,3.
var DefaultConfidence = Confidence{Level: 99, Width: 0.05, Min: 3, Max: 10}

// RunsIn reports whether the experiment is measured in a variant.
func (e *Experiment) RunsIn(variant string) bool {
	return len(e.Variants) == 0 || slices.Contains(e.Variants, variant)
}

// Background is a load that runs while each point of an experiment is measured.
type Background struct {
	From, To string
	Test     string
	Size     int
	// SockBuf is the load's socket buffers, send and receive, in bytes
	// (0: the tool's, or the kernel's auto-tuned, default): a study's
	// background ran with the buffers its measured stream had.
	SockBuf int
}

// DefaultTool is the tool of an experiment, a reference or a selector
// that names none: atmlab perf. It is the one tool name the lab file
// knows; the others are the harness's (labrun's tools, a file each), which
// check every name the study gives (ToolUses) and what virtual: says.
const DefaultTool = "atmlab"

// A ToolUse is a tool: the study names, where it names it: the harness
// checks it against its tools (labrun.CheckTools).
type ToolUse struct {
	Name string
	Line int
	Key  string
}

// tool decodes a tool: value into into and records it for the harness's
// check.
func (d *decoder) tool(key string, v *yaml.Node, lab *Sections, into *string) {
	if s, ok := d.Scalar(key, v); ok {
		*into = s
		lab.ToolUses = append(lab.ToolUses, ToolUse{Name: s, Line: v.Line, Key: key})
	}
}

// experimentTests are the tests an experiment may name.
var experimentTests = []string{"TCP_STREAM", "TCP_MAERTS", "UDP_STREAM", "TCP_RR", "UDP_RR", "TCP_CRR",
	"SCTP_STREAM", "SCTP_RR",
	"AAL5_STREAM", "AAL5_RR", "AAL34_STREAM", "AAL34_RR"} // the native AAL API's (native.go)

func (d *decoder) experiments(n *yaml.Node, lab *Sections) {
	if n.Kind != yaml.SequenceNode {
		d.Errorf(n, "experiments", "want a list of experiments, each with name:, from:, to: and tests:")
		return
	}
	for i, v := range n.Content {
		path := fmt.Sprintf("experiments[%d]", i)
		e := &Experiment{Line: v.Line, Tool: DefaultTool, Repetitions: 1, Duration: 10 * time.Second, SockBufs: []int{0}}
		var sizes, quickSizes, bgNode *yaml.Node
		d.Mapping(v, path, []labyaml.Field{
			{Name: "name", Required: true, Decode: func(key string, v *yaml.Node) {
				if s, ok := d.Scalar(key, v); ok {
					e.Name = s
				}
			}},
			{Name: "from", Required: true, Decode: func(key string, v *yaml.Node) { e.From = d.hostRef(key, v, lab) }},
			{Name: "to", Required: true, Decode: func(key string, v *yaml.Node) { e.To = d.hostRef(key, v, lab) }},
			{Name: "tool", Required: false, Decode: func(key string, v *yaml.Node) { d.tool(key, v, lab, &e.Tool) }},
			{Name: "virtual", Required: false, Decode: func(key string, v *yaml.Node) { labyaml.OneOf(d.Decoder, key, v, &e.Virtual, DefaultTool) }},
			{Name: "tests", Required: true, Decode: func(key string, v *yaml.Node) { e.Tests = d.testList(key, v) }},
			{Name: "sizes", Required: false, Decode: func(key string, v *yaml.Node) { e.Sizes, sizes = d.intList(key, v, 1, 1<<20), v }},
			{Name: "sockbufs", Required: false, Decode: func(key string, v *yaml.Node) { e.SockBufs = d.intList(key, v, 0, 64<<20) }},
			{Name: "repetitions", Required: false, Decode: func(key string, v *yaml.Node) { d.IntIn(key, v, 1, 1000, &e.Repetitions) }},
			{Name: "duration", Required: false, Decode: func(key string, v *yaml.Node) { d.duration(key, v, &e.Duration) }},
			{Name: "interval", Required: false, Decode: func(key string, v *yaml.Node) { d.duration(key, v, &e.Interval) }},
			{Name: "variants", Required: false, Decode: func(key string, v *yaml.Node) { e.Variants = d.nameList(key, v) }},
			{Name: "quick", Required: false, Decode: func(key string, v *yaml.Node) {
				q := &Quick{}
				e.Quick = q
				d.Mapping(v, key, []labyaml.Field{
					{Name: "tests", Required: false, Decode: func(key string, v *yaml.Node) { q.Tests = d.testList(key, v) }},
					{Name: "sizes", Required: false, Decode: func(key string, v *yaml.Node) { q.Sizes, quickSizes = d.intList(key, v, 1, 1<<20), v }},
					{Name: "sockbufs", Required: false, Decode: func(key string, v *yaml.Node) { q.SockBufs = d.intList(key, v, 0, 64<<20) }},
					{Name: "variants", Required: false, Decode: func(key string, v *yaml.Node) { q.Variants = d.nameList(key, v) }},
					{Name: "duration", Required: false, Decode: func(key string, v *yaml.Node) { d.duration(key, v, &q.Duration) }},
					{Name: "repetitions", Required: false, Decode: func(key string, v *yaml.Node) { d.IntIn(key, v, 1, 1000, &q.Repetitions) }},
				})
			}},
			{Name: "confidence", Required: false, Decode: func(key string, v *yaml.Node) { e.Confidence = d.confidence(key, v) }},
			{Name: "background", Required: false, Decode: func(key string, v *yaml.Node) {
				b := &Background{Test: "UDP_STREAM", Size: 1472}
				e.Background, bgNode = b, v
				d.Mapping(v, key, []labyaml.Field{
					{Name: "from", Required: true, Decode: func(key string, v *yaml.Node) { b.From = d.hostRef(key, v, lab) }},
					{Name: "to", Required: true, Decode: func(key string, v *yaml.Node) { b.To = d.hostRef(key, v, lab) }},
					{Name: "test", Required: false, Decode: func(key string, v *yaml.Node) {
						if t := d.testList(key, &yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{v}}); len(t) == 1 {
							b.Test = t[0]
						}
					}},
					{Name: "size", Required: false, Decode: func(key string, v *yaml.Node) { d.IntIn(key, v, 1, 65507, &b.Size) }},
					{Name: "sockbuf", Required: false, Decode: func(key string, v *yaml.Node) { d.IntIn(key, v, 0, 64<<20, &b.SockBuf) }},
				})
			}},
		})
		if e.Duration <= 0 {
			d.Errorf(v, path+".duration", "must be positive")
		}
		// The sizes meet the tests; a quick run's tests without sizes of
		// their own meet the experiment's (lab run --quick).
		tests, quickTests := e.Tests, e.Tests
		if e.Quick != nil && len(e.Quick.Tests) > 0 {
			quickTests = e.Quick.Tests
			if quickSizes == nil {
				tests = append(slices.Clone(e.Tests), quickTests...)
			}
		}
		d.udpSizes(path+".sizes", sizes, e.Tool, tests, lab)
		d.udpSizes(path+".quick.sizes", quickSizes, e.Tool, quickTests, lab)
		if b := e.Background; b != nil && b.From != "" && b.From == b.To {
			d.Errorf(bgNode, path+".background", "from and to are both %s: a background load runs over the lab's links, and a host's own loopback carries none of it; give it two hosts", b.From)
		}
		if len(e.Sizes) == 0 {
			e.Sizes = []int{0} // the tool's default
		}
		d.experimentPoints(v, path, e)
		if slices.ContainsFunc(lab.Experiments, func(o *Experiment) bool { return o.Name == e.Name }) {
			d.Errorf(v, path+".name", "experiment %q is defined twice", e.Name)
		}
		lab.Experiments = append(lab.Experiments, e)
	}
}

// UDP message sizes: an IPv4 datagram carries at most MaxUDPPayload
// octets (65535 less the IP and UDP headers; harness/perf's
// MaxUDPPayload). atmlab's tool, as netperf, records a larger message up
// to MaxUDPMessage (the largest the praktikum's netperf sent) as a
// "message too large" data point. A tool with narrower limits says them
// in its own file (labrun's tools), checked against UDPSizeUses.
const (
	MaxUDPPayload = 65535 - 20 - 8
	MaxUDPMessage = 65535
)

// A UDPSizeUse is a size an experiment's UDP tests send, where the lab
// file gives it: the harness checks it against its tool's limits
// (labrun.CheckTools).
type UDPSizeUse struct {
	Tool  string
	Tests string // the UDP tests it meets, "UDP_STREAM and UDP_RR"
	Size  int
	Line  int
	Key   string
}

// udpSizes checks an experiment's sizes (v, its sizes: list, or nil) against
// its UDP tests: each size must be one a UDP message can have. Those that
// can are recorded for the harness to check against the tool.
func (d *decoder) udpSizes(key string, v *yaml.Node, tool string, tests []string, lab *Sections) {
	if v == nil || v.Kind != yaml.SequenceNode {
		return
	}
	var udp []string
	for _, t := range tests {
		if strings.HasPrefix(t, "UDP_") && !slices.Contains(udp, t) {
			udp = append(udp, t)
		}
	}
	if len(udp) == 0 {
		return
	}
	for _, x := range v.Content {
		n, err := strconv.Atoi(x.Value)
		if err != nil || n < 1 {
			continue // not a size (intList said so)
		}
		if n <= MaxUDPMessage {
			lab.UDPSizeUses = append(lab.UDPSizeUses, UDPSizeUse{Tool: tool, Tests: strings.Join(udp, " and "), Size: n, Line: x.Line, Key: key})
			continue
		}
		d.Errorf(x, key, "%d bytes with %s: a UDP message is at most %d bytes (%d fit in an IPv4 datagram; larger ones up to %d are measured as \"message too large\", as netperf does)%s",
			n, strings.Join(udp, " and "), MaxUDPMessage, MaxUDPPayload, MaxUDPMessage, LargerForTCP)
	}
}

// LargerForTCP is what a size too large for a UDP test is told to do.
const LargerForTCP = "; larger sizes for TCP tests go in an experiment of their own"

// MaxExperimentPoints bounds an experiment's matrix as MaxGridPoints
// bounds a grid: each point is a measurement of its duration, in every
// variant.
const MaxExperimentPoints = 10000

// experimentPoints checks that the experiment's matrix (tests × sizes ×
// socket buffers × repetitions), and its quick one, are at most
// MaxExperimentPoints.
func (d *decoder) experimentPoints(n *yaml.Node, path string, e *Experiment) {
	check := func(path string, tests, sizes, bufs, reps int) {
		points := 1
		for _, f := range []int{tests, sizes, bufs, reps} {
			points = min(points*f, MaxExperimentPoints+1) // no overflow
		}
		if points > MaxExperimentPoints {
			d.Errorf(n, path, "%d tests × %d sizes × %d sockbufs × %d repetitions make more than %d points, an experiment's most: measure fewer, or split the experiment", tests, sizes, bufs, reps, MaxExperimentPoints)
		}
	}
	check(path, len(e.Tests), len(e.Sizes), len(e.SockBufs), e.Repetitions)
	if q := e.Quick; q != nil { // what a list it leaves out shrinks to is at most the experiment's
		check(path+".quick", cmp.Or(len(q.Tests), len(e.Tests)), cmp.Or(len(q.Sizes), len(e.Sizes)), cmp.Or(len(q.SockBufs), len(e.SockBufs)), cmp.Or(q.Repetitions, 1))
	}
}

// confidence decodes an experiment's confidence: with netperf's defaults
// (99 %, 5 %, 3 to 10 iterations) for what it leaves out.
func (d *decoder) confidence(key string, v *yaml.Node) *Confidence {
	c := DefaultConfidence
	c.Line = v.Line
	d.Mapping(v, key, []labyaml.Field{
		{Name: "level", Required: false, Decode: func(key string, v *yaml.Node) {
			if s, ok := d.Scalar(key, v); ok {
				if s != "95" && s != "99" {
					d.Errorf(v, key, "%q: use 95 or 99 (per cent)", s)
					return
				}
				c.Level, _ = strconv.Atoi(s)
			}
		}},
		{Name: "width", Required: false, Decode: func(key string, v *yaml.Node) {
			if s, ok := d.Scalar(key, v); ok {
				p, ok := labyaml.FloatIn(strings.TrimSuffix(strings.TrimSpace(s), "%"), 0, 100)
				if !ok || p <= 0 || p >= 100 {
					d.Errorf(v, key, "bad width %q: the interval's full width in per cent of the mean, above 0 and below 100, such as 5%%", s)
					return
				}
				c.Width = p / 100
			}
		}},
		{Name: "min", Required: false, Decode: func(key string, v *yaml.Node) { d.IntIn(key, v, 3, 30, &c.Min) }},
		{Name: "max", Required: false, Decode: func(key string, v *yaml.Node) { d.IntIn(key, v, 3, 30, &c.Max) }},
	})
	if c.Min > c.Max {
		d.Errorf(v, key, "min: %d is more than max: %d iterations; make min at most max", c.Min, c.Max)
	}
	return &c
}

// experimentVariants checks that the variants experiments name exist; it
// runs once variants: is read.
func (d *decoder) experimentVariants(lab *Sections) {
	for i, e := range lab.Experiments {
		names := e.Variants
		if e.Quick != nil {
			names = append(slices.Clone(names), e.Quick.Variants...)
		}
		for _, name := range names {
			d.variantRef(fmt.Sprintf("experiments[%d].variants", i), &yaml.Node{Line: e.Line}, name, lab)
		}
	}
}

// nameList decodes a list of names.
func (d *decoder) nameList(key string, v *yaml.Node) []string {
	if v.Kind != yaml.SequenceNode {
		d.Errorf(v, key, "want a list of names such as [base, hub]")
		return nil
	}
	var out []string
	for _, x := range v.Content {
		if s, ok := d.Scalar(key, x); ok {
			out = append(out, s)
		}
	}
	return out
}

// hostRef checks that a name is a host of the lab with an address.
func (d *decoder) hostRef(key string, v *yaml.Node, lab *Sections) string {
	s, ok := d.Scalar(key, v)
	if !ok {
		return ""
	}
	addr, host := lab.Host(s)
	if !host {
		d.Errorf(v, key, "%q is not a host of this lab", s)
		return ""
	}
	if addr == "" {
		d.Errorf(v, key, "host %s has no IPv4 address to test against", s)
	}
	return s
}

func (d *decoder) testList(key string, v *yaml.Node) []string {
	if v.Kind != yaml.SequenceNode {
		d.Errorf(v, key, "want a list such as [TCP_STREAM, UDP_STREAM, TCP_RR]")
		return nil
	}
	var out []string
	for _, t := range v.Content {
		s := strings.ToUpper(t.Value)
		if !slices.Contains(experimentTests, s) {
			d.Errorf(t, key, "unknown test %q: use %s", t.Value, strings.Join(experimentTests, ", "))
			continue
		}
		out = append(out, s)
	}
	return out
}

func (d *decoder) intList(key string, v *yaml.Node, lo, hi int) []int {
	if v.Kind != yaml.SequenceNode {
		d.Errorf(v, key, "want a list of whole numbers such as [64, 512, 1472]")
		return nil
	}
	var out []int
	for _, x := range v.Content {
		var n int
		d.IntIn(key, x, lo, hi, &n)
		out = append(out, n)
	}
	return out
}

// Clone returns a copy of the experiment that shares nothing with it.
func (e *Experiment) Clone() *Experiment {
	c := *e
	c.Tests, c.Sizes, c.SockBufs, c.Variants = slices.Clone(e.Tests), slices.Clone(e.Sizes), slices.Clone(e.SockBufs), slices.Clone(e.Variants)
	c.Background, c.Confidence = clonePtr(e.Background), clonePtr(e.Confidence)
	if q := clonePtr(e.Quick); q != nil {
		q.Tests, q.Sizes, q.SockBufs, q.Variants = slices.Clone(q.Tests), slices.Clone(q.Sizes), slices.Clone(q.SockBufs), slices.Clone(q.Variants)
		c.Quick = q
	}
	return &c
}

// clonePtr returns a copy of *p, or nil.
func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	c := *p
	return &c
}
