// Package perf is the test tool atmlab runs inside a lab's hosts
// (`atmlab perf`): netperf's tests with their exact definitions, confidence
// intervals and the memory-copy bound. It imports the standard library, the
// syscall wrappers of golang.org/x/sys, pion/sctp (the userspace SCTP for
// kernels without one) and the project's histogram only, so the binary
// that runs in a host carries no lab or model code. See
// docs/reference.md §8 for the semantics.
//
//	client ──control (TCP, JSON lines)──> server      request, then results
//	client ══data (TCP, UDP or SCTP)═══> server      the test itself
//
// Like netserver, the server answers a request with the data port and the
// socket buffers it actually got; nothing crosses the control connection
// during a test; afterwards the server reports what it counted.
package perf

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/atmlab/atmlab/emulator/hist"
)

// DefaultPort is netserver's control port.
const DefaultPort = 12865

// SchemaVersion is the version of Result's JSON form.
const SchemaVersion = 1

// Tests, by netperf's names.
const (
	TCPStream = "TCP_STREAM"
	TCPMaerts = "TCP_MAERTS"
	UDPStream = "UDP_STREAM"
	TCPRR     = "TCP_RR"
	UDPRR     = "UDP_RR"
	TCPCRR    = "TCP_CRR"
	// SCTP_STREAM and SCTP_RR are netperf's SCTP tests: one association,
	// messages of -m octets one way, or -r requests and responses.
	SCTPStream = "SCTP_STREAM"
	SCTPRR     = "SCTP_RR"
)

// Tests lists the tests the tool runs.
var Tests = []string{TCPStream, TCPMaerts, UDPStream, TCPRR, UDPRR, TCPCRR, SCTPStream, SCTPRR, AAL5Stream, AAL5RR, AAL34Stream, AAL34RR}

// MaxUDPPayload is the largest UDP payload IPv4 carries: 65535 − 20 − 8.
const MaxUDPPayload = 65507

// udpHeader is what atmlab puts at the front of each UDP_STREAM datagram:
// a sequence number and the send time, for loss, reordering and jitter.
// Shorter datagrams go without it: received ones are counted, nothing more.
const udpHeader = 16

// Spec is what a client asks for: netperf's options.
type Spec struct {
	Test     string        `json:"test"`
	Duration time.Duration `json:"duration_ns"`
	Message  int           `json:"message_size,omitempty"` // -m, stream tests
	Request  int           `json:"request_size,omitempty"` // -r REQ,RESP
	Response int           `json:"response_size,omitempty"`
	SendBuf  int           `json:"local_sockbuf,omitempty"`  // -s, requested (0: system default)
	RecvBuf  int           `json:"remote_sockbuf,omitempty"` // -S, requested
	NoDelay  bool          `json:"nodelay,omitempty"`        // -D
	Interval time.Duration `json:"interval_ns,omitempty"`    // -i: interval reports, as iperf3's
	// VC and PeerVC are a native AAL test's VC at the client and at the
	// server (--vc, --peer-vc): each end's own VPI/VCI of the one PVC.
	VC     *NativeVC `json:"vc,omitempty"`
	PeerVC *NativeVC `json:"peer_vc,omitempty"`
}

// Validate checks a spec and fills netperf's defaults.
func (s *Spec) Validate() error {
	s.Test = strings.ToUpper(s.Test)
	known := false
	for _, t := range Tests {
		known = known || t == s.Test
	}
	if !known {
		return fmt.Errorf("unknown test %q: use one of %s", s.Test, strings.Join(Tests, ", "))
	}
	if s.Duration <= 0 {
		s.Duration = 10 * time.Second
	}
	if s.Message == 0 {
		s.Message = 16384
		switch {
		case s.Test == UDPStream:
			s.Message = 1472
		case IsAAL(s.Test):
			s.Message = 9160 // n*48+40 for n = 190: 191 full cells of AAL5
		}
	}
	if IsAAL(s.Test) && (s.VC == nil || s.PeerVC == nil) {
		return fmt.Errorf("%s needs the VC at both ends: --vc IFACE:VPI/VCI and --peer-vc IFACE:VPI/VCI (atmlab inspect shows a lab's native PVCs)", s.Test)
	}
	if s.Request == 0 {
		s.Request = 1
	}
	if s.Response == 0 {
		s.Response = 1
	}
	if s.Message < 1 || s.Message > 1<<20 || s.Request < 1 || s.Response < 1 || s.Request > 1<<20 || s.Response > 1<<20 {
		return errors.New("sizes must be from 1 byte to 1 MiB")
	}
	return nil
}

// Result is one test's outcome: the schema of `atmlab perf client -o json`.
// Stream tests fill throughput_bps (what the receiver got, over the client's
// elapsed time including the final flush, as netperf); UDP_STREAM also
// send_bps; request/response tests fill transactions_per_sec and latency_us.
type Result struct {
	Schema  int     `json:"schema_version"`
	Spec    Spec    `json:"spec"`
	Test    string  `json:"test"`
	Host    string  `json:"host"`
	Error   string  `json:"error,omitempty"` // a data point that failed, e.g. message too large
	Elapsed float64 `json:"elapsed_s"`
	// Implementation names the SCTP stack that measured an SCTP test:
	// "kernel", or a userspace one with its version and transport, such
	// as "pion/sctp v1.12.1 (userspace, raw IP 132)".
	Implementation string `json:"implementation,omitempty"`

	// ThroughputBps is what the receiver got over the test's time: for
	// UDP_STREAM and the AAL streams the longer of Elapsed and
	// ReceiveElapsed.
	ThroughputBps float64 `json:"throughput_bps,omitempty"`
	SendBps       float64 `json:"send_bps,omitempty"`
	BytesSent     uint64  `json:"bytes_sent,omitempty"`
	BytesReceived uint64  `json:"bytes_received,omitempty"`
	// ReceiveElapsed is how long a datagram stream took to arrive at the
	// receiving socket, by the kernel's arrival times, at the median of
	// its rates over tenths of the test (server.go's arrivals). Elapsed
	// ends when the sender's host has let go of its last message
	// (flush_linux.go), but a path can still hold some then (an emulated
	// NIC's ring, a switch's queue): counted as sent in no time, they
	// made a stream at a link's capacity read above it.
	ReceiveElapsed float64 `json:"receive_elapsed_s,omitempty"`

	// UDP_STREAM, from the receiver's sequence numbers.
	MessagesSent     uint64  `json:"messages_sent,omitempty"`
	MessagesReceived uint64  `json:"messages_received,omitempty"`
	Lost             uint64  `json:"lost,omitempty"`
	Reordered        uint64  `json:"reordered,omitempty"`
	Duplicates       uint64  `json:"duplicates,omitempty"`
	JitterUs         float64 `json:"jitter_us,omitempty"` // RFC 3550 interarrival jitter
	SendErrors       uint64  `json:"send_errors,omitempty"`
	// ReceiverDrops are the SDUs a native AAL test's receiving packet
	// socket dropped for want of buffer (PACKET_STATISTICS): what of Lost
	// the receiver's socket, not the path, lost.
	ReceiverDrops uint64 `json:"receiver_drops,omitempty"`

	Transactions       uint64          `json:"transactions,omitempty"`
	TransactionsPerSec float64         `json:"transactions_per_sec,omitempty"`
	Timeouts           uint64          `json:"timeouts,omitempty"` // UDP_RR requests or responses lost
	Latency            *LatencySummary `json:"latency_us,omitempty"`

	LocalSockBuf  SockBuf `json:"local_sockbuf"`
	RemoteSockBuf SockBuf `json:"remote_sockbuf"`
	CPU           CPU     `json:"cpu"`

	// Intervals are the client's interval reports (-i): what it sent (or,
	// for TCP_MAERTS, received) in each interval, or its transactions.
	Intervals []Interval `json:"intervals,omitempty"`

	// Confidence is set when the test was repeated for a confidence
	// interval (-I, -i); the main figure is then the iterations' mean.
	Confidence *ConfidenceResult `json:"confidence,omitempty"`
}

// SockBuf records a requested socket buffer and what Linux gave (it doubles
// the request, and a request turns autotuning off).
type SockBuf struct {
	RequestedSend int `json:"requested_send,omitempty"`
	RequestedRecv int `json:"requested_recv,omitempty"`
	Send          int `json:"send"`
	Recv          int `json:"recv"`
}

// CPU is the CPU each role used during the test, as a fraction of one core
// (each side's own process, getrusage: on one machine a system-wide figure
// would mix the roles), and netperf's service demand from it.
type CPU struct {
	Local               float64 `json:"local"`
	Remote              float64 `json:"remote"`
	LocalServiceDemand  float64 `json:"local_service_demand"`  // µs of CPU per KB (stream) or per transaction (RR)
	RemoteServiceDemand float64 `json:"remote_service_demand"` // the same for the server
	// RemoteWaited is the share of the test the server's threads waited
	// runnable for a CPU (their run queue delay), where the harness could
	// read it: on cores the hosts share with each other and the emulator,
	// how far the receiver was from having one of its own.
	RemoteWaited float64 `json:"remote_waited,omitempty"`
}

// LatencySummary is a request/response latency distribution in µs.
type LatencySummary struct {
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
}

func summarize(h *hist.Histogram) *LatencySummary {
	us := func(d time.Duration) float64 { return float64(d) / 1e3 }
	s := h.Summary()
	return &LatencySummary{Mean: us(s.Mean), P50: us(s.P50), P90: us(s.P90), P99: us(s.P99), Max: us(s.Max)}
}

// serverReport is what the server counted, sent after the test.
type serverReport struct {
	Bytes      uint64        `json:"bytes"`
	Messages   uint64        `json:"messages"`
	Lost       uint64        `json:"lost"`
	Drops      uint64        `json:"socket_drops,omitempty"` // what the receiving packet socket dropped
	Reordered  uint64        `json:"reordered"`
	Duplicates uint64        `json:"duplicates"`
	Jitter     time.Duration `json:"jitter_ns"`
	CPU        time.Duration `json:"cpu_ns"`
	Elapsed    time.Duration `json:"elapsed_ns"`
	Error      string        `json:"error,omitempty"`
	// Arrival is how long a stream's messages took to arrive at the
	// receiving socket (arrivals.elapsed).
	Arrival time.Duration `json:"arrival_ns,omitempty"`
}

// setup is the server's answer to a request.
type setup struct {
	DataPort int    `json:"data_port"`
	SendBuf  int    `json:"send_buf"`
	RecvBuf  int    `json:"recv_buf"`
	Error    string `json:"error,omitempty"`
	// Implementation is the server's SCTP stack, for an SCTP test.
	Implementation string `json:"implementation,omitempty"`
}

// done is the client's word that a UDP test's sending has ended.
type done struct {
	Sent uint64 `json:"sent"`
}

// Interval is one interval report.
type Interval struct {
	Start              float64 `json:"start_s"`
	End                float64 `json:"end_s"`
	Bps                float64 `json:"bits_per_second,omitempty"`
	TransactionsPerSec float64 `json:"transactions_per_sec,omitempty"`
}
