package labrun

import (
	"os/exec"
	"strings"

	"github.com/atmlab/atmlab/harness/perf"
)

// iperf 2's and iperf3's --sctp use the kernel's SCTP, which the lab's
// hosts share with the machine: where it has none, their SCTP_STREAM
// points are data points that say so, and atmlab perf's SCTP_STREAM
// (its userspace SCTP) is the way to measure. These are variables for
// tests.
var (
	kernelSCTP    = perf.KernelHasSCTP
	iperf2HasSCTP = func() bool {
		out, _ := exec.Command("iperf", "--help").CombinedOutput()
		return strings.Contains(string(out), "--sctp")
	}
)

// noSCTP is why tool cannot measure an SCTP_STREAM point here, "" if it
// can: the kernel's SCTP first, then the tool's own.
func noSCTP(tool string, toolHas func() bool) string {
	if !kernelSCTP() {
		return tool + " --sctp needs the kernel's SCTP, and this kernel has none (an SCTP socket gives EPROTONOSUPPORT; " +
			"a kernel with its sctp module loaded has it): measure SCTP_STREAM with tool: atmlab, whose SCTP runs in userspace"
	}
	if toolHas != nil && !toolHas() {
		return "this " + tool + " has no --sctp (its --help lists none): measure SCTP_STREAM with tool: iperf3 or atmlab"
	}
	return ""
}
