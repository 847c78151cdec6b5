package labrun

import (
	"fmt"
	"strings"
	"time"

	"github.com/atmlab/atmlab/harness/perf"
	"github.com/atmlab/atmlab/netstat"
)

// The causes a real-time point that fell short of its ceiling by more than
// 1 % is checked for, each measured during the point (Record.ShortBy).
const (
	ShortReceiver = "receiver_socket"   // the receiving socket was full: UDP RcvbufErrors, TCP receive-memory drops, a native AAL packet socket's drops
	ShortQdisc    = "sender_qdisc"      // the sender's qdisc in front of its TAP dropped or requeued frames
	ShortTAP      = "host_taps"         // the hosts' TAPs dropped frames the emulator did not read in time
	ShortLateness = "emulator_lateness" // the emulator released frames late (p99 above LateP99), held frames back to stay in time, or used most of a core
	ShortSteal    = "hypervisor_steal"  // the hypervisor took more than StealShort of the machine
	ShortLoad     = "other_load"        // work outside the lab's processes used more than OtherLoadShort of a core
	ShortHostRate = "host_frame_rate"   // the ceiling needs more datagrams a second than a bare veth pair on the machine carried with the same tool (VethFrameRate)
	ShortStackCPU = "stack_cpu"         // a userspace SCTP in the tool's own processes used more than StackCPUShort of a core (the result's CPU)
	ShortNone     = "none_measured"     // short, with none of the above seen
)

// LateP99 is the release lateness (p99 over the point) above which the
// emulator's timing counts as a cause of a shortfall.
const LateP99 = time.Millisecond

// StealShort is the hypervisor's share of the machine above which its
// steal counts as a cause of a shortfall (MaxSteal is where a point is
// measured again).
const StealShort = 0.01

// OtherLoadShort is how much of a core the machine's other work may use
// during a point before it counts as a cause of a shortfall.
const OtherLoadShort = 0.25

// StackCPUShort is how much of a core the two ends of a test over a
// userspace SCTP (pion, in the tool's own processes) may use together
// before their CPU counts as a cause of a shortfall: the stack then
// competes with the emulator and the other end for the machine's cores.
const StackCPUShort = 0.5

// shortfall lists what a real-time point more than 1 % short of its
// ceiling was held back by, from what was measured during it; nil when it
// was not short, was measured in virtual time or has no ceiling.
func (rec *Record) shortfall() []string {
	if rec.Clock != "" || !rec.below(0.99) || rec.Result.ThroughputBps <= 0 {
		return nil
	}
	var by []string
	if rec.stackCPUBound() {
		by = append(by, ShortStackCPU)
	}
	if rec.hostRateBound() {
		by = append(by, ShortHostRate)
	}
	if k := rec.HostKernel; k != nil && k.UDPRcvbufErrors+k.TCPRcvDrops > 0 || rec.Result.ReceiverDrops > 0 {
		by = append(by, ShortReceiver)
	}
	if rec.QdiscDrops+rec.QdiscRequeues > 0 {
		by = append(by, ShortQdisc)
	}
	if rec.HostDrops > 0 {
		by = append(by, ShortTAP)
	}
	if rec.Lateness != nil && rec.Lateness.P99 > LateP99 || rec.LateHeld+rec.LateDropped > 0 || rec.EmulatorCPU > 0.9 {
		by = append(by, ShortLateness)
	}
	if rec.Steal > StealShort {
		by = append(by, ShortSteal)
	}
	if rec.OtherLoad > OtherLoadShort {
		by = append(by, ShortLoad)
	}
	if len(by) == 0 {
		by = []string{ShortNone}
	}
	return by
}

// stackCPUBound reports whether the point measured over a userspace SCTP
// whose two ends, the tool's processes (their getrusage over the test),
// used more than StackCPUShort of a core together.
func (rec *Record) stackCPUBound() bool {
	c := rec.Result.CPU
	return perf.UserspaceSCTP(rec.Result.Implementation) && c.Local+c.Remote > StackCPUShort
}

// hostRateBound reports whether the point's ceiling asks for more
// datagrams a second than a bare veth pair on the machine carried with the
// same tool, size and buffers: the hosts' own frame rate, not the link,
// is then the limit.
func (rec *Record) hostRateBound() bool {
	return rec.VethFrameRate > 0 && rec.Size > 0 && rec.Ceiling/float64(8*rec.Size) > rec.VethFrameRate
}

// ShortfallWords says in plain words how far a point fell short of its
// ceiling and why (Record.ShortBy, each cause with its figure); "" if it
// was not short.
func (rec *Record) ShortfallWords() string {
	if len(rec.ShortBy) == 0 || rec.Ceiling <= 0 {
		return ""
	}
	var why []string
	for _, c := range rec.ShortBy {
		switch c {
		case ShortHostRate:
			why = append(why, fmt.Sprintf("the hosts' own frame rate: the ceiling needs %.1f k datagrams/s of %d B, and a bare veth pair on this machine carried %.1f k/s with the same tool and buffers (the lab %.1f k/s)",
				rec.Ceiling/float64(8*rec.Size)/1e3, rec.Size, rec.VethFrameRate/1e3, rec.Result.ThroughputBps/float64(8*rec.Size)/1e3))
		case ShortStackCPU:
			c := rec.Result.CPU
			why = append(why, fmt.Sprintf("the userspace SCTP (%s) runs in the tool's own processes and used %.2f of a core at the client and %.2f at the server (%.1f and %.1f µs of CPU a KB): its CPU, on the cores the emulator shares, held the rate",
				rec.Result.Implementation, c.Local, c.Remote, c.LocalServiceDemand, c.RemoteServiceDemand))
		case ShortReceiver:
			k, lost := rec.HostKernel, ""
			if k == nil {
				k = &netstat.Counters{}
			}
			switch {
			case rec.Result.ReceiverDrops > 0:
				lost = fmt.Sprintf("%d SDUs at its packet socket", rec.Result.ReceiverDrops)
			case k.UDPRcvbufErrors > 0 && k.TCPRcvDrops > 0:
				lost = fmt.Sprintf("%d datagrams and %d TCP segments", k.UDPRcvbufErrors, k.TCPRcvDrops)
			case k.UDPRcvbufErrors > 0:
				lost = fmt.Sprintf("%d datagrams", k.UDPRcvbufErrors)
			default:
				lost = fmt.Sprintf("%d TCP segments", k.TCPRcvDrops)
			}
			w := fmt.Sprintf("the receiving host's socket buffer was full and dropped %s: the receiver, which shares the machine's CPUs with the sender and the emulator, did not read in time", lost)
			if c := rec.Result.CPU; c.RemoteWaited > 0 {
				w += fmt.Sprintf(" (it ran %.2f of a core and waited runnable for a CPU %.0f %% of the time: a host with a core of its own would not have waited)", c.Remote, 100*c.RemoteWaited)
			}
			if rec.SockBuf == 0 && k.UDPRcvbufErrors > 0 {
				w += "; a UDP socket's default buffer is the machine's net.core.rmem_default, which a host's namespace cannot set: ask the tool for a buffer (-w, -s) or raise it on the machine"
				if rec.ReceiverBufferNeeded > 0 {
					w += fmt.Sprintf(" (%d B holds 10 ms of the link's smallest frames)", rec.ReceiverBufferNeeded)
				}
			}
			why = append(why, w)
		case ShortQdisc:
			why = append(why, fmt.Sprintf("the sender's queue in front of its link dropped %d frames and took back %d", rec.QdiscDrops, rec.QdiscRequeues))
		case ShortTAP:
			why = append(why, fmt.Sprintf("the hosts dropped %d frames at their TAPs: the emulator did not read them in time", rec.HostDrops))
		case ShortLateness:
			late := "unknown"
			if rec.Lateness != nil {
				late = fmt.Sprintf("p99 %v, max %v", rec.Lateness.P99.Round(time.Microsecond), rec.Lateness.Max.Round(time.Microsecond))
			}
			dropped := ""
			if rec.LateHeld > 0 {
				dropped = fmt.Sprintf(", and held back %d frames from the hosts rather than carry them later still", rec.LateHeld)
			}
			if rec.LateDropped > 0 {
				dropped += fmt.Sprintf(", and dropped %d frames rather than hand them to a host later than its bound", rec.LateDropped)
			}
			if s := rec.LoopStall; s != nil {
				dropped += fmt.Sprintf("; its loop stalled %d times over %v, the longest %v", rec.LoopStalls, netstat.StallMin, s)
			}
			if rec.EmulatorGCs > 0 {
				dropped += fmt.Sprintf("; its process collected garbage %d times", rec.EmulatorGCs)
			}
			why = append(why, fmt.Sprintf("the emulator fell behind its model (release lateness %s, %.0f %% of a core%s)", late, 100*rec.EmulatorCPU, dropped))
		case ShortSteal:
			why = append(why, fmt.Sprintf("the hypervisor took %.1f %% of the machine (steal)", 100*rec.Steal))
		case ShortLoad:
			why = append(why, fmt.Sprintf("other work on the machine used %.2f of a core beside the lab", rec.OtherLoad))
		case ShortNone:
			why = append(why, "none of the causes atmlab measures (a userspace stack's CPU, the receiver's socket, the sender's queue, the TAPs, the emulator's timing, the hypervisor, other work on the machine) was seen")
		}
	}
	return fmt.Sprintf("%.1f %% of the ceiling, %.1f %% short: %s", 100*rec.Result.ThroughputBps/rec.Ceiling, 100*(1-rec.Result.ThroughputBps/rec.Ceiling), strings.Join(why, "; "))
}
