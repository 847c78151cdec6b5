package main

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/atmlab/atmlab/harness/perf"
)

func newPerf(opts *options) *cobra.Command {
	perf := &cobra.Command{
		Use:   "perf",
		Short: "The built-in test tool: netperf's tests, exactly as netperf defines them",
	}
	perf.AddCommand(newPerfServer(), newPerfClient(opts), newPerfMemcpy(opts))
	return perf
}

func newPerfServer() *cobra.Command {
	var port int
	c := &cobra.Command{
		Use:   "server",
		Short: "Answer perf clients (like netserver), until SIGINT",
		Long:  "Answer perf clients on a control port, like netserver.\n\nExample:\n  atmlab exec sw100 h2 -- atmlab perf server &",
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := perf.Listen(net.JoinHostPort("", strconv.Itoa(port)))
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "perf server listening on %v\n", s.Addr())
			return s.Serve(cmd.Context())
		},
	}
	c.Flags().IntVarP(&port, "port", "p", perf.DefaultPort, "control port")
	return c
}

// perfClientHelp is newPerfClient's help.
const perfClientHelp = "Run one of netperf's tests against `atmlab perf server`, with netperf's definitions: stream\n" +
	"throughput is what the receiver got over the sender's elapsed time including the final flush;\n" +
	"UDP_STREAM reports a send and a receive line; RR tests report transactions/s and latency\n" +
	"percentiles. -o json prints the result in a stable schema (schema_version 1).\n\n" +
	"AAL5_STREAM, AAL5_RR, AAL34_STREAM and AAL34_RR send SDUs on a native AAL VC, with no IP\n" +
	"(docs/atm.md): --vc is the client's end of the PVC, --peer-vc the server's (atmlab inspect\n" +
	"lists a lab's native PVCs); the control connection to -H stays TCP/IP.\n\n" +
	"SCTP_STREAM and SCTP_RR run one SCTP association: over the kernel's SCTP where the kernel\n" +
	"has it, else over pion/sctp in userspace on a raw IP socket of protocol 132 (it needs\n" +
	"CAP_NET_RAW, as the hosts of a lab have); the result's implementation names which.\n\n" +
	"Example:\n  atmlab exec sw100 h1 -- atmlab perf client -H 10.0.0.2 -t TCP_RR -l 10 -r 1,1\n" +
	"  atmlab exec cernet-atm h1 -- atmlab perf client -H 10.0.0.2 -t AAL5_STREAM -m 9160 --vc eth0:0/101 --peer-vc eth0:0/101"

func newPerfClient(opts *options) *cobra.Command {
	var (
		host, test, length, rr    string
		confLevel, confIter       string
		vc, peerVC                string
		interval                  time.Duration
		port, msg, sndbuf, rcvbuf int
		nodelay                   bool
	)
	c := &cobra.Command{
		Use:   "client -H HOST [-t TEST] [-l DURATION] [-m SIZE] [-r REQ,RESP] [-s BUF] [-S BUF] [-D]",
		Short: "Run one test against a perf server: " + strings.Join(perf.Tests, ", "),
		Long:  perfClientHelp,
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if host == "" {
				return usageError{fmt.Errorf("perf client: -H HOST is required")}
			}
			d, err := perf.ParseLength(length)
			if err != nil {
				return usageError{err}
			}
			spec := perf.Spec{Test: test, Duration: d, Message: msg, SendBuf: sndbuf, RecvBuf: rcvbuf, NoDelay: nodelay, Interval: interval}
			if rr != "" {
				if spec.Request, spec.Response, err = perf.ParseRR(rr); err != nil {
					return usageError{err}
				}
			}
			if err := spec.SetVCs(vc, peerVC); err != nil {
				return usageError{err}
			}
			if err := spec.Validate(); err != nil {
				return usageError{err}
			}
			return runPerfClient(cmd, opts, host, port, spec, confLevel, confIter)
		},
	}
	f := c.Flags()
	f.StringVarP(&host, "host", "H", "", "the server's address")
	f.IntVarP(&port, "port", "p", perf.DefaultPort, "the server's control port")
	f.StringVarP(&test, "test", "t", perf.TCPStream, "test: "+strings.Join(perf.Tests, ", "))
	f.StringVarP(&length, "length", "l", "10", "test length: seconds (netperf) or a duration (10s)")
	f.IntVarP(&msg, "message", "m", 0, "stream tests: message size in bytes (default 16384, UDP 1472)")
	f.StringVarP(&rr, "request-response", "r", "", "RR tests: REQ,RESP sizes in bytes (default 1,1)")
	f.IntVarP(&sndbuf, "local-sockbuf", "s", 0, "local socket buffers in bytes (Linux doubles it)")
	f.IntVarP(&rcvbuf, "remote-sockbuf", "S", 0, "remote socket buffers in bytes")
	f.BoolVarP(&nodelay, "nodelay", "D", false, "set TCP_NODELAY")
	f.StringVarP(&confLevel, "confidence", "I", "", "LEVEL,WIDTH: repeat until the LEVEL % confidence interval is within WIDTH % of the mean (netperf's -I; default 99,5)")
	f.StringVar(&confIter, "iterations", "", "MAX,MIN: iterations for -I (netperf's -i; default 10,3; min at least 3, max at most 30)")
	f.DurationVarP(&interval, "interval", "i", 0, "interval reports every INTERVAL (1s), as iperf3's -i")
	f.StringVar(&vc, "vc", "", "native AAL tests: the client's VC, IFACE:VPI/VCI (eth0:0/101)")
	f.StringVar(&peerVC, "peer-vc", "", "native AAL tests: the server's VC, IFACE:VPI/VCI")
	return c
}

func newPerfMemcpy(opts *options) *cobra.Command {
	var size int
	var length string
	c := &cobra.Command{
		Use:   "memcpy [-m SIZE] [-l DURATION]",
		Short: "The host's memory-to-memory copy rate: the end-system bound",
		Long:  "Copy a block between two buffers for the test's length and report the rate, the bound the\nCERNET study measured first (77 Mbit/s on its hosts).\n\nExample:\n  atmlab perf memcpy -m 8388608 -l 2",
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			d, err := perf.ParseLength(length)
			if err != nil || size < 1 {
				return usageError{fmt.Errorf("memcpy: need -m ≥ 1 byte and a length")}
			}
			r := perf.Memcpy(size, d)
			if opts.output == "json" {
				return printJSON(cmd.OutOrStdout(), r)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "memcpy of %d-byte blocks for %.2f s: %.0f Mbit/s (%.0f MB/s)\n", size, r.Elapsed, r.ThroughputBps/1e6, r.ThroughputBps/8e6)
			return nil
		},
	}
	c.Flags().IntVarP(&size, "message", "m", 8<<20, "block size in bytes")
	c.Flags().StringVarP(&length, "length", "l", "2", "test length: seconds or a duration")
	return c
}

// runPerfClient runs the test, with confidence intervals when -I or -i
// asks for them, and prints the result as -o says.
func runPerfClient(cmd *cobra.Command, opts *options, host string, port int, spec perf.Spec, confLevel, confIter string) error {
	var res perf.Result
	var err error
	if confLevel != "" || confIter != "" {
		c, cerr := perf.ParseConfidence(confLevel, confIter)
		if cerr != nil {
			return usageError{cerr}
		}
		res, err = perf.RunConfident(cmd.Context(), host, port, spec, c)
	} else {
		res, err = perf.Run(cmd.Context(), host, port, spec)
	}
	if res.Spec.Test != "" {
		if werr := perf.WriteResult(cmd.OutOrStdout(), opts.output, res); err == nil {
			err = werr
		}
	}
	return err
}
