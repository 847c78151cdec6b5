package labfile

import (
	"strings"
	"testing"

	"github.com/atmlab/atmlab/topologies/settings"
)

// hostsLab is two hosts on a switch, h1 at h1Addr, with more appended
// from line 10.
func hostsLab(h1, more string) string {
	return `name: x
topology:
  nodes:
    h1: {kind: host, ` + h1 + `}
    h2: {kind: host, ipv4: 10.0.0.2/24}
    sw: {kind: switch}
  links:
    - {endpoints: ["h1:eth0", "sw:p1"]}
    - {endpoints: ["h2:eth0", "sw:p2"]}
` + more
}

// routerLab is a router whose two interfaces (lines 7 and 8) have the
// addresses given, each linked to a switch of its own.
func routerLab(eth0, eth1 string) string {
	return `name: x
topology:
  nodes:
    r1:
      kind: router
      interfaces:
        eth0: {ipv4: ` + eth0 + `}
        eth1: {ipv4: ` + eth1 + `}
    s1: {kind: switch}
    s2: {kind: switch}
  links:
    - {endpoints: ["r1:eth0", "s1:p1"]}
    - {endpoints: ["r1:eth1", "s2:p1"]}
`
}

const oneExperiment = "experiments:\n  - {name: s, from: h1, to: h2, tests: [TCP_STREAM]}\n"

// TestParseRefusesUnusableValues: an address no interface can use, a
// router on one subnet twice, a background from a host to itself, a size
// no UDP message has, a reference figure no measurement gives, a YAML tag
// the decoder would ignore and a link from a port to itself are each an
// error at their line, with the key and the fix.
func TestParseRefusesUnusableValues(t *testing.T) {
	for _, tc := range []struct{ name, src, want string }{
		{"slash zero", hostsLab("ipv4: 0.0.0.0/0", ""), `bad.yaml:4: topology.nodes.h1.ipv4: 0.0.0.0/0: a /0 is every IPv4 address, not a subnet`},
		{"this network", hostsLab("ipv4: 0.0.0.5/24", ""), `bad.yaml:4: topology.nodes.h1.ipv4: 0.0.0.5/24: 0.0.0.0/8 is "this network"`},
		{"multicast", hostsLab("ipv4: 224.0.0.1/24", ""), `bad.yaml:4: topology.nodes.h1.ipv4: 224.0.0.1/24: 224.0.0.0/4 is multicast`},
		{"loopback", hostsLab("ipv4: 127.0.0.2/8", ""), `bad.yaml:4: topology.nodes.h1.ipv4: 127.0.0.2/8: 127.0.0.0/8 is loopback`},
		{"limited broadcast", hostsLab("ipv4: 255.255.255.255/32", ""), `bad.yaml:4: topology.nodes.h1.ipv4: 255.255.255.255/32: 255.255.255.255 is the limited broadcast address`},
		{"network address", hostsLab("ipv4: 10.0.0.0/24", ""), `bad.yaml:4: topology.nodes.h1.ipv4: 10.0.0.0/24: the network address of subnet 10.0.0.0/24, no interface's; give one from 10.0.0.1 to 10.0.0.254`},
		{"subnet broadcast", hostsLab("interfaces: {eth0: {ipv4: 10.0.0.255/24}}", ""), `bad.yaml:4: topology.nodes.h1.interfaces.eth0.ipv4: 10.0.0.255/24: the broadcast address of subnet 10.0.0.0/24`},
		{"slash 30 broadcast", hostsLab("ipv4: 10.0.0.3/30", ""), `bad.yaml:4: topology.nodes.h1.ipv4: 10.0.0.3/30: the broadcast address of subnet 10.0.0.0/30, no interface's; give one from 10.0.0.1 to 10.0.0.2`},
		{"router link-local", routerLab("169.254.0.1/16", "10.0.1.1/24"), `bad.yaml:7: topology.nodes.r1.interfaces.eth0.ipv4: 169.254.0.1/16: 169.254.0.0/16 is link-local, which routers do not forward`},
		{"router one subnet", routerLab("10.0.0.1/24", "10.0.0.2/24"), `bad.yaml:8: topology.nodes.r1.interfaces: eth0 (10.0.0.1/24) and eth1 (10.0.0.2/24) are on one subnet, 10.0.0.0/24: a router's interfaces each need a subnet of their own`},
		{"router overlapping subnets", routerLab("10.0.0.1/24", "10.0.1.1/16"), `bad.yaml:8: topology.nodes.r1.interfaces: eth0 (10.0.0.1/24) and eth1 (10.0.1.1/16) are on overlapping subnets, 10.0.0.0/24 and 10.0.0.0/16`},
		{"background to itself", hostsLab("ipv4: 10.0.0.1/24", "experiments:\n  - {name: s, from: h1, to: h2, tests: [TCP_STREAM], background: {from: h2, to: h2}}\n"),
			`bad.yaml:11: experiments[0].background: from and to are both h2: a background load runs over the lab's links`},
		{"background UDP size", hostsLab("ipv4: 10.0.0.1/24", "experiments:\n  - {name: s, from: h1, to: h2, tests: [TCP_STREAM], background: {from: h2, to: h1, size: 70000}}\n"),
			`bad.yaml:11: experiments[0].background.size: want a whole number from 1 to 65507, got "70000"`},
		{"UDP size", hostsLab("ipv4: 10.0.0.1/24", "experiments:\n  - name: s\n    from: h1\n    to: h2\n    tests: [TCP_STREAM, UDP_STREAM]\n    sizes:\n      - 1472\n      - 70000\n"),
			`bad.yaml:17: experiments[0].sizes: 70000 bytes with UDP_STREAM: a UDP message is at most 65535 bytes (65507 fit in an IPv4 datagram; larger ones up to 65535 are measured as "message too large", as netperf does); larger sizes for TCP tests go in an experiment of their own`},
		{"UDP size in quick", hostsLab("ipv4: 10.0.0.1/24", "experiments:\n  - {name: s, from: h1, to: h2, tests: [TCP_STREAM], quick: {tests: [UDP_RR], sizes: [100000]}}\n"),
			`bad.yaml:11: experiments[0].quick.sizes: 100000 bytes with UDP_RR: a UDP message is at most 65535 bytes`},
		{"quick UDP test meets the sizes", hostsLab("ipv4: 10.0.0.1/24", "experiments:\n  - {name: s, from: h1, to: h2, tests: [TCP_STREAM], sizes: [1024, 131072], quick: {tests: [UDP_STREAM]}}\n"),
			`bad.yaml:11: experiments[0].sizes: 131072 bytes with UDP_STREAM: a UDP message is at most 65535 bytes`},
		{"reference NaN", hostsLab("ipv4: 10.0.0.1/24", oneExperiment+"reference:\n  - {test: TCP_STREAM, value: NaN, unit: Mbit/s, source: x}\n"),
			`bad.yaml:13: reference[0].value: want a positive number, got "NaN"`},
		{"reference infinite", hostsLab("ipv4: 10.0.0.1/24", oneExperiment+"reference:\n  - {test: TCP_STREAM, value: +Inf, unit: Mbit/s, source: x}\n"),
			`bad.yaml:13: reference[0].value: want a positive number, got "+Inf"`},
		{"reference huge", hostsLab("ipv4: 10.0.0.1/24", oneExperiment+"reference:\n  - {test: TCP_STREAM, value: 1e308, unit: Gbit/s, source: x}\n"),
			`bad.yaml:13: reference[0].value: 1e+308 Gbit/s is beyond any measured figure: a reference is at most 1 Tbit/s (1000 Gbit/s); check the value and its unit`},
		{"reference just over", hostsLab("ipv4: 10.0.0.1/24", oneExperiment+"reference:\n  - {test: TCP_STREAM, value: 1000.001, unit: Gbit/s, source: x}\n"),
			`bad.yaml:13: reference[0].value: 1000.001 Gbit/s is beyond any measured figure`},
		{"reference transactions", hostsLab("ipv4: 10.0.0.1/24", oneExperiment+"reference:\n  - {test: TCP_RR, value: 2e9, unit: transactions/s, source: x}\n"),
			`bad.yaml:13: reference[0].value: 2e+09 transactions/s is beyond any measured figure: a reference is at most 1e9 transactions/s`},
		{"python tag", hostsLab("ipv4: 10.0.0.1/24", "notes: !!python/object/apply:os.system [id]\n"),
			`bad.yaml:10: notes: tag !!python/object/apply:os.system: a lab file holds plain values and would ignore it; remove the tag`},
		{"binary tag", hostsLab("ipv4: !!binary MTAuMC4wLjEvMjQ=", ""), `bad.yaml:4: topology.nodes.h1.ipv4: tag !!binary`},
		{"local tag on a node", strings.Replace(hostsLab("ipv4: 10.0.0.1/24", ""), "h2: {", "h2: !host {", 1), `bad.yaml:5: topology.nodes.h2: tag !host`},
		{"tag in a list", strings.Replace(hostsLab("ipv4: 10.0.0.1/24", ""), `["h2:eth0"`, `[!!timestamp "h2:eth0"`, 1), `bad.yaml:9: topology.links[1].endpoints[0]: tag !!timestamp`},
		{"link to its own port", "name: x\ntopology:\n  nodes: {s: {kind: switch}}\n  links: [{endpoints: [\"s:p3\", \"s:p3\"]}]\n",
			`bad.yaml:4: topology.links: a link cannot join a port to itself: both its ends are s:p3; join two different ports`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("bad.yaml", []byte(tc.src))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Parse() error = %v\nwant it to contain %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "already used") {
				t.Errorf("a link to its own port is reported as a port used twice: %v", err)
			}
		})
	}
}

// TestParseKeepsUsableEdgeValues: what the rules above leave alone stays
// valid: both addresses of a /31 (RFC 3021), a /32, a host's link-local
// and 240/4 addresses, an experiment on a host's loopback with the largest
// UDP message netperf sends, iperf3's own UDP bounds, a reference of
// 1 Tbit/s and YAML's core tags.
func TestParseKeepsUsableEdgeValues(t *testing.T) {
	two := func(a, b string) string {
		return "name: x\ntopology:\n  nodes:\n    h1: {kind: host, ipv4: " + a + "}\n    h2: {kind: host, ipv4: " + b + "}\n  links:\n    - {endpoints: [\"h1:eth0\", \"h2:eth0\"]}\n"
	}
	for _, tc := range []struct{ name, src string }{
		{"slash 31", two("10.0.0.0/31", "10.0.0.1/31")},
		{"slash 32", two("10.0.0.1/32", "10.0.0.2/32")},
		{"host link-local", two("169.254.0.1/16", "169.254.0.2/16")},
		{"class E", two("240.0.0.1/24", "240.0.0.2/24")},
		{"router on two subnets", routerLab("10.0.0.1/24", "10.0.1.1/24")},
		{"loopback experiment", hostsLab("ipv4: 10.0.0.1/24", "experiments:\n  - {name: s, from: h1, to: h1, tests: [TCP_STREAM, UDP_STREAM, UDP_RR], sizes: [1, 65507, 65535]}\n  - {name: t, from: h1, to: h2, tests: [TCP_STREAM], sizes: [1048576]}\n")},
		{"quick UDP test with sizes of its own", hostsLab("ipv4: 10.0.0.1/24", "experiments:\n  - {name: s, from: h1, to: h2, tests: [TCP_STREAM], sizes: [131072], quick: {tests: [UDP_STREAM], sizes: [1472]}}\n")},
		{"iperf3 UDP bounds", hostsLab("ipv4: 10.0.0.1/24", "experiments:\n  - {name: s, from: h1, to: h2, tool: iperf3, tests: [UDP_STREAM], sizes: [16, 65507]}\n")},
		{"reference at the bound", hostsLab("ipv4: 10.0.0.1/24", oneExperiment+"reference:\n  - {test: TCP_STREAM, value: 1000, unit: Gbit/s, source: x}\n  - {test: TCP_RR, value: 1e9, unit: transactions/s, source: y}\n")},
		{"core tags", "--- !!map\nname: !!str x\nseed: !!int 5\ntopology:\n  nodes: !!map\n    h1: {kind: host, ipv4: !!str 10.0.0.1/24}\n    h2: {kind: host, ipv4: 10.0.0.2/24}\n  links: !!seq\n    - {endpoints: [\"h1:eth0\", \"h2:eth0\"]}\nnotes: !!null\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Parse("ok.yaml", []byte(tc.src)); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// The lab file and atmlab set take and refuse the same values: both read
// them with the row's parser. Each value here is just inside or just
// outside a range.
func TestSettingsAreTheLabFilesRanges(t *testing.T) {
	for _, tc := range []struct {
		key, value string
		ok         bool
	}{
		{"rate", "1k", true}, {"rate", "999", false}, {"rate", "1000G", true}, {"rate", "1000.001G", false},
		{"delay", "0", true}, {"delay", "24h", true}, {"delay", "24h0m0.000000001s", false}, {"delay", "-1ns", false},
		{"jitter", "24h", true}, {"jitter", "25h", false},
		{"loss", "0%", true}, {"loss", "100%", true}, {"loss", "100.0001%", false}, {"loss", "-0.1%", false}, {"loss", "NaN", false}, {"loss", "Inf%", false},
		{"limit", "0", true}, {"limit", "1", true}, {"limit", "1048576", true}, {"limit", "1048577", false}, {"limit", "-1", false},
		{"buffer", "1518B", true}, {"buffer", "1517B", false}, {"buffer", "1GiB", true}, {"buffer", "1073741825B", false},
	} {
		_, setErr := settings.ParseChange([]string{tc.key + "=" + tc.value})
		src := ethLab(", impair: {"+tc.key+": "+tc.value+"}", "")
		if tc.key == "buffer" {
			src = strings.Replace(ethLab("", ""), "{kind: switch}", "{kind: switch, buffer: "+tc.value+"}", 1)
		}
		_, fileErr := Parse("lab.yaml", []byte(src))
		if (setErr == nil) != tc.ok || (fileErr == nil) != tc.ok {
			t.Errorf("%s=%s: set %v, lab file %v; want taken: %v", tc.key, tc.value, setErr, fileErr, tc.ok)
		}
		if setErr != nil && fileErr != nil && !strings.Contains(fileErr.Error(), setErr.Error()) {
			t.Errorf("%s=%s: set says %q, the lab file %q", tc.key, tc.value, setErr, fileErr)
		}
	}
}
