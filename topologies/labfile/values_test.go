package labfile

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/study"
)

// ethLab is a two-host lab on a switch whose second link takes extra keys.
func ethLab(link2, h1 string) string {
	return `name: x
topology:
  nodes:
    h1: {kind: host, ipv4: 10.0.0.1/24` + h1 + `}
    h2: {kind: host, ipv4: 10.0.0.2/24}
    sw1: {kind: switch}
  links:
    - endpoints: ["h1:eth0", "sw1:p1"]
    - {endpoints: ["h2:eth0", "sw1:p2"]` + link2 + `}
`
}

// atmLab is two hosts on an atm-switch, the second host's link with extra keys.
func atmLab(atm2, mappings string) string {
	return `name: x
topology:
  nodes:
    h1: {kind: host, ipv4: 10.0.0.1/24}
    h2: {kind: host, ipv4: 10.0.0.2/24}
    a1: {kind: atm-switch` + mappings + `}
  links:
    - {endpoints: ["h1:eth0", "a1:p1"], atm: {phy: oc3}}
    - {endpoints: ["h2:eth0", "a1:p2"], atm: {phy: oc3` + atm2 + `}}
`
}

// Every value has a range; what `up` would refuse (tc, the kernel, an
// adapter), Parse refuses, at the value's line. Before, each of these
// passed validation: some failed only in `up`, the rest silently became
// something else (NaN loss was no loss, 17179869185GiB was 1 GiB).
func TestValueRanges(t *testing.T) {
	for _, tc := range []struct{ name, src, want string }{
		{"rate 1 bit/s", ethLab(", ethernet: {rate: 1}", ""), "bad.yaml:9: topology.links[1].ethernet.rate: bad rate \"1\": a bit rate (k, M, G or a PHY name) from 1k to 1000G"},
		{"rate 9e18", ethLab(", ethernet: {rate: 9e18}", ""), "bad rate \"9e18\""},
		{"impair rate NaN", ethLab(", impair: {rate: NaN}", ""), "impair.rate: bad rate"},
		{"loss NaN", ethLab(", impair: {loss: NaN}", ""), "bad.yaml:9: topology.links[1].impair.loss: bad loss \"NaN\""},
		{"loss inf", ethLab(", impair: {loss: +Inf%}", ""), "bad loss"},
		{"cable NaN", ethLab(", ethernet: {cable: NaNm}", ""), "ethernet.cable: bad cable length \"NaNm\": metres from 0m to 100000000m"},
		{"cable 1e30", ethLab(", ethernet: {cable: 1e30m}", ""), "bad cable length \"1e30m\""},
		{"jitter 1281023h", ethLab(", impair: {jitter: 1281023h}", ""), "impair.jitter: bad jitter \"1281023h\": a duration in Go syntax from 0 to 24h"},
		{"delay 25h", ethLab(", impair: {delay: 25h}", ""), "impair.delay: bad delay \"25h\""},
		{"limit -1", ethLab(", impair: {limit: -1}", ""), "impair.limit: bad limit \"-1\": a whole number from 1 to 1048576 (0: the medium's default"},
		{"limit 2^30", ethLab(", impair: {limit: 1073741824}", ""), "impair.limit: bad limit \"1073741824\": a whole number from 1 to 1048576"},
		{"buffer overflow", strings.Replace(ethLab("", ""), "{kind: switch}", "{kind: switch, buffer: 17179869185GiB}", 1), "bad.yaml:6: topology.nodes.sw1.buffer: bad buffer \"17179869185GiB\""},
		{"buffer 2GiB", strings.Replace(ethLab("", ""), "{kind: switch}", "{kind: switch, buffer: 2GiB}", 1), "to 1GiB"},
		{"per_byte 1h", ethLab("", ", cpu: {per_byte: 1h}"), "cpu.per_byte: bad duration"},
		{"per_packet 2s", ethLab("", ", cpu: {per_packet: 2s}"), "cpu.per_packet: bad duration \"2s\": from 0 to 1s"},
		{"pcr NaN", atmLab(", pcr: NaN", ""), "bad.yaml:9: topology.links[1].atm.pcr: bad peak cell rate \"NaN\""},
		{"pcr 1e-300", atmLab(", pcr: 1e-300", ""), "bad peak cell rate \"1e-300\""},
		{"pcr above the line", atmLab(", pcr: 400000", ""), "peak cell rate 400000 is above oc3's 353207 cells/s"},
		{"host-wide sysctl", ethLab("", ", sysctls: {net.core.rmem_max: 8388608}"), "bad.yaml:4: topology.nodes.h1.sysctls.net.core.rmem_max: not a sysctl a host's own namespace can write"},
		{"no such interface", ethLab("", ", sysctls: {net.ipv4.conf.eth9.rp_filter: 0}"), "net.ipv4.conf.eth9.rp_filter: not a sysctl"},
		{"unknown sysctl", ethLab("", ", sysctls: {net.ipv4.tcp_rmemm: 4096}"), "not a sysctl"},
		{"unknown congestion control", ethLab("", ", sysctls: {net.ipv4.tcp_congestion_control: warp}"), "unknown congestion control \"warp\": use one of bbr,"},
		{"AAL mismatch on an automatic PVC", atmLab(", aal: aal34", ""), "bad.yaml:9: topology.links: h1:eth0 and h2:eth0 share a PVC but their links' aal/encap differ (aal5/llc on line 8, aal34/llc)"},
		{"encap mismatch on a mapped PVC", atmLab(", encap: vcmux, vci: 200", `, mappings: {"p1:0:100": "p2:0:200"}`), "h1:eth0 and h2:eth0 share a PVC but their links' aal/encap differ (aal5/llc on line 8, aal5/vcmux)"},
		{"non-UTF-8 at its line", "name: x\ntopology:\n  nodes: {h1: {kind: host}}\nnotes: caf\xe9\n", "bad.yaml:4: yaml: byte 0xe9 at column 11 is not UTF-8"},
		{"a second document", ethLab("", "") + "---\nname: y\n", "bad.yaml:11: yaml: a second YAML document"},
		{"a second document with a syntax error", ethLab("", "") + "---\nname: [\n", "bad.yaml:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("bad.yaml", []byte(tc.src))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Parse() error = %v, want it to contain %q", err, tc.want)
			}
		})
	}
	// In range, the same keys are fine: per-interface sysctls name the
	// host's own interfaces, all or default; pcr up to the cell rate.
	for _, src := range []string{
		ethLab(", ethernet: {rate: 1k, cable: 100000000m}, impair: {delay: 24h, jitter: 24h, loss: 100%, limit: 1048576}",
			", sysctls: {net.ipv4.conf.eth0.rp_filter: 0, net.ipv4.conf.all.rp_filter: 0, net.core.somaxconn: 1024, net.ipv4.tcp_congestion_control: reno}"),
		atmLab(", pcr: 353207", ""),
		ethLab(", impair: {delay: 1ms, limit: 0}", ""), // 0: the medium's default, as for atmlab set
		atmLab(", vci: 200", `, mappings: {"p1:0:100": "p2:0:200"}`),
	} {
		if _, err := Parse("ok.yaml", []byte(src)); err != nil {
			t.Errorf("Parse:\n%s\n%v", src, err)
		}
	}
}

// A variant that changes one host link's AAL makes its PVC mismatched: up
// of that variant would refuse it, so WithVariant does.
func TestVariantAALMismatch(t *testing.T) {
	file := filepath.Join(t.TempDir(), "v.yaml")
	os.WriteFile(file, []byte(atmLab("", "")+"variants:\n  - {name: mixed, set: [{link: \"h2:eth0\", aal: aal34}]}\n"), 0o644)
	lab, err := Load(file)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lab.WithVariant("mixed"); err == nil || !strings.Contains(err.Error(), "variant mixed: "+file+":9: topology.links: h1:eth0 and h2:eth0 share a PVC") {
		t.Fatalf("WithVariant(mixed) = %v", err)
	}
}

// A lab file has size limits: bytes, nodes, links; Load stops reading at
// the byte limit (a 20 MB file of 752,952 nodes ran validate for over 12
// minutes; /dev/zero never ended).
func TestSizeLimits(t *testing.T) {
	var nodes, links strings.Builder
	for i := range MaxNodes + 1 {
		fmt.Fprintf(&nodes, "    s%d: {kind: switch}\n", i)
	}
	for i := range MaxLinks + 1 {
		fmt.Fprintf(&links, "    - {endpoints: [\"s%d:p1\", \"s%d:p2\"]}\n", i, i+1)
	}
	for _, tc := range []struct{ name, src, want string }{
		{"bytes", "name: x\nnotes: " + strings.Repeat("a", MaxFileBytes) + "\n", "big.yaml:1: file: 4194320 bytes: a lab file holds at most 4194304 (4 MiB)"},
		{"nodes", "name: x\ntopology:\n  nodes:\n" + nodes.String(), "big.yaml:4: topology.nodes: 4097 nodes: a lab holds at most 4096"},
		{"links", "name: x\ntopology:\n  nodes: {s0: {kind: switch}}\n  links:\n" + links.String(), "big.yaml:5: topology.links: 8193 links: a lab holds at most 8192"},
	} {
		if _, err := Parse("big.yaml", []byte(tc.src)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Parse() error = %.300v, want it to contain %q", tc.name, err, tc.want)
		}
	}
	if _, err := Load("/dev/zero"); err == nil || !strings.Contains(err.Error(), "/dev/zero:1: file: 4194305 bytes") {
		t.Errorf("Load(/dev/zero) = %v", err)
	}
}

// BenchmarkParseNodes shows validation linear in the node count: hosts in
// pairs on switches in a chain, and routers (the default routes and the
// endpoint and name lookups were quadratic).
func BenchmarkParseNodes(b *testing.B) {
	for _, n := range []int{1000, 4000} {
		data := nodesLab(n, "")
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for range b.N {
				if _, err := Parse("big.yaml", data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// nodesLab is n nodes: hosts in pairs on switches in a chain, and routers;
// more is appended (variants:).
func nodesLab(n int, more string) []byte {
	var src strings.Builder
	src.WriteString("name: x\ntopology:\n  nodes:\n")
	for i := range n / 4 {
		fmt.Fprintf(&src, "    h%d: {kind: host, ipv4: 10.%d.%d.1/24}\n    g%d: {kind: host, ipv4: 10.%d.%d.2/24}\n    s%d: {kind: switch}\n    r%d: {kind: router, interfaces: {e0: {ipv4: 10.%d.%d.254/24}}}\n",
			i, i/256, i%256, i, i/256, i%256, i, i, i/256, i%256)
	}
	src.WriteString("  links:\n")
	for i := range n / 4 {
		fmt.Fprintf(&src, "    - {endpoints: [\"h%d:eth0\", \"s%d:p1\"]}\n    - {endpoints: [\"g%d:eth0\", \"s%d:p2\"]}\n    - {endpoints: [\"r%d:e0\", \"s%d:p3\"]}\n", i, i, i, i, i, i)
		if i > 0 {
			fmt.Fprintf(&src, "    - {endpoints: [\"s%d:p4\", \"s%d:p5\"]}\n", i-1, i)
		}
	}
	src.WriteString(more)
	return []byte(src.String())
}

// Loops of switches and hubs are valid but warned about, naming the loop.
func TestLoopWarnings(t *testing.T) {
	lab := func(links string) *topologies.Lab {
		t.Helper()
		l, err := Parse("loop.yaml", []byte("name: x\ntopology:\n  nodes:\n    h1: {kind: host, ipv4: 10.0.0.1/24}\n    sw1: {kind: switch}\n    sw2: {kind: switch}\n    sw3: {kind: switch}\n    hub1: {kind: hub}\n  links:\n    - {endpoints: [\"h1:eth0\", \"sw1:p1\"]}\n"+links))
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	for _, tc := range []struct{ name, links string }{
		{"a tree", "    - {endpoints: [\"sw1:p2\", \"sw2:p1\"]}\n    - {endpoints: [\"sw2:p2\", \"sw3:p1\"]}\n    - {endpoints: [\"sw3:p2\", \"hub1:p1\"]}\n"},
	} {
		if w := lab(tc.links).Warnings; len(w) != 0 {
			t.Errorf("%s: warnings %v", tc.name, w)
		}
	}
	for _, tc := range []struct{ name, links, want string }{
		{"a switch to itself", "    - {endpoints: [\"sw1:p3\", \"sw1:p4\"]}\n", "loop.yaml:11: topology.links: loop: link sw1:p3-sw1:p4 joins sw1 to itself: one broadcast circles it forever"},
		{"parallel links", "    - {endpoints: [\"sw1:p2\", \"sw2:p1\"]}\n    - {endpoints: [\"sw2:p2\", \"sw1:p3\"]}\n", "loop.yaml:12: topology.links: loop: links on lines 11 and 12 both join sw2 and sw1"},
		{"a ring of three", "    - {endpoints: [\"sw1:p2\", \"sw2:p1\"]}\n    - {endpoints: [\"sw2:p2\", \"sw3:p1\"]}\n    - {endpoints: [\"sw3:p2\", \"sw1:p3\"]}\n", "loop.yaml:13: topology.links: loop: sw3:p2-sw1:p3 closes a ring sw1-sw2-sw3-sw1 (links on lines 11, 12, 13)"},
		{"through a hub", "    - {endpoints: [\"sw1:p2\", \"hub1:p1\"]}\n    - {endpoints: [\"sw2:p1\", \"hub1:p2\"]}\n    - {endpoints: [\"sw2:p2\", \"sw1:p3\"]}\n", "closes a ring sw1-hub1-sw2-sw1"},
	} {
		w := lab(tc.links).Warnings
		if len(w) != 1 || !strings.Contains(w[0].Error(), tc.want) {
			t.Errorf("%s: warnings %v, want one containing %q", tc.name, w, tc.want)
		}
	}
}

// A reference's result file is a regular file under the lab file's
// directory, of bounded size: /dev/zero exhausted memory in `lab run`,
// /etc/shadow was read as root.
func TestReferenceFiles(t *testing.T) {
	dir := t.TempDir()
	os.Symlink("/etc/passwd", filepath.Join(dir, "passwd.json"))
	syscall.Mkfifo(filepath.Join(dir, "fifo.json"), 0o644)
	big, _ := os.Create(filepath.Join(dir, "big.json"))
	big.Truncate(study.MaxReferenceBytes + 1)
	big.Close()
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	os.WriteFile(filepath.Join(dir, "sub", "ok.json"), []byte("{}"), 0o644)
	base := "name: x\ntopology:\n  nodes: {h1: {kind: host, ipv4: 10.0.0.1/24}, h2: {kind: host, ipv4: 10.0.0.2/24}}\n  links: [{endpoints: [\"h1:eth0\", \"h2:eth0\"]}]\nreference:\n"
	for _, tc := range []struct{ file, want string }{
		{"/dev/zero", "/dev/zero is outside the lab file's directory"},
		{"../../etc/shadow", "cannot read"},
		{"/etc/passwd", "/etc/passwd is outside the lab file's directory " + dir + ": copy the result file next to the lab file"},
		{"passwd.json", "passwd.json is outside the lab file's directory"},
		{"fifo.json", "fifo.json is not a regular file"},
		{"big.json", "big.json is 16777217 bytes: a result file holds at most 16777216"},
		{"sub", "sub is not a regular file"},
	} {
		_, err := Parse(filepath.Join(dir, "lab.yaml"), []byte(base+"  - {test: TCP_STREAM, file: \""+tc.file+"\", format: iperf3, source: x}\n"))
		if err == nil || !strings.Contains(err.Error(), "reference[0].file: "+tc.want) && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("file %s: %v, want %q", tc.file, err, tc.want)
		}
	}
	lab, err := Parse(filepath.Join(dir, "lab.yaml"), []byte(base+"  - {test: TCP_STREAM, file: sub/ok.json, format: iperf3, source: x}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if data, err := lab.References[0].Read(); err != nil || string(data) != "{}" {
		t.Fatalf("Read() = %q, %v", data, err)
	}
	// Swapped for a link out of the directory after validation: Read refuses.
	os.Remove(filepath.Join(dir, "sub", "ok.json"))
	os.Symlink("/etc/passwd", filepath.Join(dir, "sub", "ok.json"))
	if _, err := lab.References[0].Read(); err == nil || !strings.Contains(err.Error(), "outside") {
		t.Fatalf("Read() of a swapped file = %v", err)
	}
}

// validate and lab run resolve every variant before anything runs: a
// variant that mismatches one host's PVC fails with the file, the line and
// the variant's name, with every other problem of every variant; what only
// Build finds (here a link out of VCIs for its automatic PVCs) fails too.
func TestResolveVariants(t *testing.T) {
	lab, err := Parse("v.yaml", []byte(atmLab("", "")+"variants:\n  - {name: mixed, set: [{link: \"h2:eth0\", aal: aal34}]}\n  - {name: fine, set: [{link: \"h2:eth0\", phy: oc12}]}\n  - {name: hub, set: [{node: h1, kind: hub}]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = lab.ResolveVariants(lab.Measured())
	var problems []string
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		problems = append(problems, e.Error())
	}
	want := []string{
		"v.yaml:9: topology.links: variant mixed: h1:eth0 and h2:eth0 share a PVC but their links' aal/encap differ (aal5/llc on line 8, aal34/llc); make them equal",
		"v.yaml:13: variants: variant hub: h1 is a host; only a switch and a hub stand in for each other",
	}
	if !slices.Equal(problems, want) {
		t.Fatalf("ResolveVariants:\n%s\nwant\n%s", strings.Join(problems, "\n"), strings.Join(want, "\n"))
	}

	lab, err = Parse("v.yaml", []byte(atmLab("", "")+"variants:\n  - {name: fine, set: [{link: \"h2:eth0\", phy: oc12}]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	labs, err := lab.ResolveVariants(lab.Measured())
	if err != nil || len(labs) != 2 || labs[0].LinkOf(topologies.Endpoint{Node: "h2", Port: "eth0"}).ATM.PHY != "oc3" || labs[1].LinkOf(topologies.Endpoint{Node: "h2", Port: "eth0"}).ATM.PHY != "oc12" {
		t.Fatalf("ResolveVariants of a good lab: %v %v", labs, err)
	}

	three := strings.Replace(atmLab("", ""), "    a1:", "    h3: {kind: host, ipv4: 10.0.0.3/24}\n    a1:", 1) +
		"    - {endpoints: [\"h3:eth0\", \"a1:p3\"], atm: {phy: oc3}}\n"
	three = strings.Replace(three, `atm: {phy: oc3}}`, `atm: {phy: oc3, vci: 65535}}`, 1)
	// Resolve plans the PVCs, so a link out of VCIs fails at Parse (it
	// failed at ResolveVariants when Build planned them).
	if _, err = Parse("vci.yaml", []byte(three)); err == nil || !strings.Contains(err.Error(), "vci.yaml:9: topology.links: link h1:eth0-a1:p1 has run out of VCIs") {
		t.Fatalf("Parse of a lab whose link runs out of VCIs: %v", err)
	}
}

// WithVariant decodes the lab file's tree kept in memory: the file may be
// gone, or changed, since Load.
func TestWithVariantInMemory(t *testing.T) {
	file := filepath.Join(t.TempDir(), "v.yaml")
	os.WriteFile(file, []byte(atmLab("", "")+"variants:\n  - {name: fast, set: [{link: \"h2:eth0\", phy: oc12}]}\n"), 0o644)
	lab, err := Load(file)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(file, []byte("not: a lab\n"), 0o644)
	v, err := lab.WithVariant("fast")
	if err != nil || v.File != file || v.LinkOf(topologies.Endpoint{Node: "h2", Port: "eth0"}).ATM.PHY != "oc12" || lab.LinkOf(topologies.Endpoint{Node: "h2", Port: "eth0"}).ATM.PHY != "oc3" {
		t.Fatalf("WithVariant after the file changed: %v", err)
	}
	if _, err := (&topologies.Lab{Name: "code"}).WithVariant("base"); err == nil || !strings.Contains(err.Error(), "not read from a lab file") {
		t.Errorf("WithVariant of a lab made in code: %v", err)
	}
}

// The names users write for a PHY (oc3c, stm1, oc12c, stm4) are its
// table's name in the resolved lab, in links and variants alike; a name
// that is neither is refused with the table's names.
func TestPHYAliases(t *testing.T) {
	src := strings.Replace(atmLab("", ""), "atm: {phy: oc3}}", "atm: {phy: oc3c}}", 1) +
		"variants:\n  - {name: stm4, set: [{link: \"h2:eth0\", phy: stm4}]}\n"
	lab, err := Parse("a.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	labs, err := lab.ResolveVariants(lab.Measured())
	if err != nil || len(labs) != 2 {
		t.Fatalf("ResolveVariants: %v %v", labs, err)
	}
	h1, h2 := topologies.Endpoint{Node: "h1", Port: "eth0"}, topologies.Endpoint{Node: "h2", Port: "eth0"}
	if got := []topologies.PHY{labs[0].LinkOf(h1).ATM.PHY, labs[0].LinkOf(h2).ATM.PHY, labs[1].LinkOf(h2).ATM.PHY}; !slices.Equal(got, []topologies.PHY{"oc3", "oc3", "oc12"}) {
		t.Errorf("PHYs %v, want [oc3 oc3 oc12]", got)
	}
	_, err = Parse("a.yaml", []byte(strings.Replace(atmLab("", ""), "atm: {phy: oc3}}", "atm: {phy: oc48c}}", 1)))
	if err == nil || !strings.Contains(err.Error(), `a.yaml:8: topology.links[0].atm.phy: "oc48c": use one of atm25, ds3, e3, oc12, oc3`) {
		t.Errorf("Parse of phy: oc48c: %v", err)
	}
}

// Resolve touches no file system: a lab whose reference file is missing
// resolves, and only Parse, which checks the references too, refuses it,
// with the lab's own problems in the same error.
func TestResolveReadsNoFiles(t *testing.T) {
	src := "name: x\ntopology:\n  nodes: {h1: {kind: host, ipv4: 10.0.0.1/24}, h2: {kind: host, ipv4: 10.0.0.2/24}}\n  links: [{endpoints: [\"h1:eth0\", \"h2:eth0\"]}]\nreference:\n  - {test: TCP_STREAM, file: missing.json, format: iperf3, source: x}\n"
	file := filepath.Join(t.TempDir(), "lab.yaml")
	raw, err := Decode(file, []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if lab, err := Resolve(raw, ""); err != nil || len(lab.References) != 1 {
		t.Fatalf("Resolve: %v, %v", lab, err)
	}
	if _, err := Parse(file, []byte(src)); err == nil || !strings.Contains(err.Error(), "missing.json") {
		t.Errorf("Parse of a lab whose reference file is missing: %v", err)
	}
	bad := strings.Replace(src, "ipv4: 10.0.0.2/24", "ipv4: 10.0.0.2/33", 1)
	if _, err := Parse(file, []byte(bad)); err == nil || !strings.Contains(err.Error(), "missing.json") || !strings.Contains(err.Error(), "10.0.0.2/33") {
		t.Errorf("Parse of a lab with a bad address and a missing reference: %v, want both", err)
	}
}
