package vhost

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"gvisor.dev/gvisor/pkg/tcpip"
	"gvisor.dev/gvisor/pkg/tcpip/stack"
	"gvisor.dev/gvisor/pkg/tcpip/transport/tcp"
)

// Settings are what shapes a virtual host's TCP: netstack's defaults,
// changed by the host's sysctls. A run records them with its results.
type Settings struct {
	CongestionControl string `json:"congestion_control"` // reno or cubic
	SACK              bool   `json:"sack"`
	ModerateRcvBuf    bool   `json:"moderate_rcvbuf"` // receive-buffer auto-tuning
	// Send and receive buffer sizes, octets: min, default, max.
	WMem [3]int `json:"tcp_wmem"`
	RMem [3]int `json:"tcp_rmem"`
	// RACK loss detection is off: netstack's RACK takes segments sent at
	// one instant as sent in the wrong order (rack.go's tie-break on equal
	// transmit times is reversed), and in model time a burst shares one
	// instant, so it marked every burst's later segments lost (3000
	// spurious retransmissions a 2-s 100M stream). Virtual hosts recover
	// with SACK and three duplicate ACKs, as Linux with tcp_recovery=0.
	RACK bool `json:"rack"`
	// Timestamps and window scaling are always on in netstack.
	Timestamps    bool `json:"timestamps"`
	WindowScaling bool `json:"window_scaling"`
	// Jitter is the host's processing jitter: each frame received enters
	// the stack after a delay drawn from [0, Jitter) (see the package
	// doc); 0: at once.
	Jitter time.Duration `json:"processing_jitter_ns"`
}

// DefaultJitter is a virtual host's processing jitter unless its lab
// says otherwise: of the order of a Linux host's receive path (interrupt,
// softirq, wake-up), and less than a 100M frame time.
const DefaultJitter = 20 * time.Microsecond

// Linux's default net.ipv4.tcp_wmem and tcp_rmem (min, default, max),
// what a real host of a lab starts from. Netstack's own defaults are 1 MiB
// for both and 4 MiB at most: a 1 MiB receive buffer opens a window of
// hundreds of segments from the first round trip, so slow start overshoots
// any switch queue by that much; Linux starts at 128 KiB and lets
// auto-tuning grow it.
var (
	linuxWMem = [3]int{4096, 16384, 4194304}
	linuxRMem = [3]int{4096, 131072, 6291456}
)

// Defaults are a virtual host's settings before its sysctls: netstack's
// own, but Linux's socket buffers (linuxWMem, linuxRMem); its congestion
// control default is reno, Linux's is cubic.
func Defaults() Settings {
	return Settings{
		CongestionControl: "reno",
		SACK:              true,
		ModerateRcvBuf:    true,
		WMem:              linuxWMem,
		RMem:              linuxRMem,
		Timestamps:        true,
		WindowScaling:     true,
		Jitter:            DefaultJitter,
	}
}

// Sysctl changes the settings by one of a host's sysctls. A sysctl
// netstack has no equivalent for is an error that says so, rather than a
// setting silently not applied.
func (s *Settings) Sysctl(key, value string) error {
	switch key {
	case "net.ipv4.tcp_congestion_control":
		if value != "reno" && value != "cubic" {
			return errors.New("virtual hosts have reno and cubic only (or run with --clock real)")
		}
		s.CongestionControl = value
	case "net.ipv4.tcp_sack":
		s.SACK = value != "0"
	case "net.ipv4.tcp_moderate_rcvbuf":
		s.ModerateRcvBuf = value != "0"
	case "net.ipv4.tcp_wmem", "net.ipv4.tcp_rmem":
		f := strings.Fields(value)
		var v [3]int
		ok := len(f) == 3
		for i := 0; ok && i < 3; i++ {
			n, err := strconv.Atoi(f[i])
			v[i], ok = n, err == nil && n > 0
		}
		if !ok || v[0] > v[1] || v[1] > v[2] {
			return errors.New(`write three sizes in octets, min default max, as "4096 131072 6291456"`)
		}
		if key == "net.ipv4.tcp_wmem" {
			s.WMem = v
		} else {
			s.RMem = v
		}
	case "net.ipv4.tcp_timestamps", "net.ipv4.tcp_window_scaling":
		if value == "0" {
			return errors.New("netstack always uses this option; virtual hosts cannot turn it off (run with --clock real)")
		}
	default:
		return errors.New("netstack has no equivalent: virtual hosts cannot honour it (remove it, or run with --clock real)")
	}
	return nil
}

// apply sets s on a stack's TCP.
func (s Settings) apply(st *stack.Stack) error {
	cc := tcpip.CongestionControlOption(s.CongestionControl)
	sack := tcpip.TCPSACKEnabled(s.SACK)
	mod := tcpip.TCPModerateReceiveBufferOption(s.ModerateRcvBuf)
	snd := tcpip.TCPSendBufferSizeRangeOption{Min: s.WMem[0], Default: s.WMem[1], Max: s.WMem[2]}
	rcv := tcpip.TCPReceiveBufferSizeRangeOption{Min: s.RMem[0], Default: s.RMem[1], Max: s.RMem[2]}
	var rec tcpip.TCPRecovery
	if s.RACK {
		rec = tcpip.TCPRACKLossDetection
	}
	for _, o := range []tcpip.SettableTransportProtocolOption{&cc, &sack, &mod, &snd, &rcv, &rec} {
		if err := st.SetTransportProtocolOption(tcp.ProtocolNumber, o); err != nil {
			return fmt.Errorf("netstack refused %T %v: %s", o, o, err)
		}
	}
	return nil
}
