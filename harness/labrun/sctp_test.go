package labrun

import (
	"context"
	"strings"
	"testing"

	"github.com/atmlab/atmlab/harness/perf"
	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/labfile"
)

// sctpToolsLab asks iperf3 and iperf 2 for SCTP_STREAM.
func sctpToolsLab(t *testing.T) *topologies.Lab {
	t.Helper()
	lab, err := labfile.Parse("s.yaml", []byte("name: s\ntopology:\n  nodes:\n    h1: {kind: host, ipv4: 10.0.0.1/24}\n    h2: {kind: host, ipv4: 10.0.0.2/24}\n  links:\n    - endpoints: [\"h1:eth0\", \"h2:eth0\"]\n"+
		"experiments:\n  - {name: i3, from: h1, to: h2, tool: iperf3, tests: [SCTP_STREAM], duration: 1s}\n  - {name: i2, from: h1, to: h2, tool: iperf, tests: [SCTP_STREAM], duration: 1s}\n"))
	if err != nil {
		t.Fatal(err)
	}
	return lab
}

// TestIperfSCTPSaysWhyWithoutTheKernelsSCTP: on a kernel without SCTP
// (this machine's kind), iperf3's and iperf 2's SCTP_STREAM points run
// nothing in the hosts and are data points that say why, pointing to
// atmlab perf's userspace SCTP; an iperf 2 without --sctp says that.
func TestIperfSCTPSaysWhyWithoutTheKernelsSCTP(t *testing.T) {
	lab := sctpToolsLab(t)
	defer func(k, i func() bool) { kernelSCTP, iperf2HasSCTP = k, i }(kernelSCTP, iperf2HasSCTP)
	for _, tc := range []struct {
		kernel, iperf2 bool
		tool           Tool
		want           string
	}{
		{false, true, iperf3Tool{}, "iperf3 --sctp needs the kernel's SCTP, and this kernel has none"},
		{false, true, iperf2Tool{}, "iperf --sctp needs the kernel's SCTP, and this kernel has none"},
		{true, false, iperf2Tool{}, "this iperf has no --sctp"},
	} {
		kernelSCTP, iperf2HasSCTP = func() bool { return tc.kernel }, func() bool { return tc.iperf2 }
		env := &fakeEnv{}
		r := &Runner{Lab: lab}
		var p Point
		for _, q := range Points(lab) {
			if q.Tool == tc.tool.Name() {
				p = q
			}
		}
		res, err := tc.tool.Real(context.Background(), &HostsEnv{Hosts: env, Lab: lab, Self: "atmlab"}, p, r.experiment(p.Experiment))
		if err != nil || !strings.HasPrefix(res.Error, tc.want) || len(env.commands) != 0 || res.Test != perf.SCTPStream {
			t.Errorf("%s, kernel SCTP %v: error %v, data point %q, ran %v; want %q and nothing run", tc.tool.Name(), tc.kernel, err, res.Error, env.commands, tc.want)
		}
		if !tc.kernel && !strings.Contains(res.Error, "tool: atmlab") {
			t.Errorf("%s: %q does not point to atmlab perf's SCTP_STREAM", tc.tool.Name(), res.Error)
		}
	}
}
