package main

import (
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/atmlab/atmlab/harness/perf"
	"github.com/atmlab/atmlab/internal/clihelp"
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
		Long:  clihelp.Text("perf-server"),
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

func newPerfClient(opts *options) *cobra.Command {
	var fl perf.ClientFlags
	c := &cobra.Command{
		Use:   "client -H HOST [-t TEST] [-l DURATION] [-m SIZE] [-r REQ,RESP] [-s BUF] [-S BUF] [-D]",
		Short: "Run one test against a perf server: " + strings.Join(perf.Tests, ", "),
		Long:  clihelp.Text("perf-client"),
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usage(fl.Run(cmd.Context(), cmd.OutOrStdout(), opts.output))
		},
	}
	f := c.Flags()
	f.StringVarP(&fl.Host, "host", "H", "", "the server's address")
	f.IntVarP(&fl.Port, "port", "p", perf.DefaultPort, "the server's control port")
	f.StringVarP(&fl.Test, "test", "t", perf.TCPStream, "test: "+strings.Join(perf.Tests, ", "))
	f.StringVarP(&fl.Length, "length", "l", "10", "test length: seconds (netperf) or a duration (10s)")
	f.IntVarP(&fl.Message, "message", "m", 0, "stream tests: message size in bytes (default 16384, UDP 1472)")
	f.StringVarP(&fl.RR, "request-response", "r", "", "RR tests: REQ,RESP sizes in bytes (default 1,1)")
	f.IntVarP(&fl.SndBuf, "local-sockbuf", "s", 0, "local socket buffers in bytes (Linux doubles it)")
	f.IntVarP(&fl.RcvBuf, "remote-sockbuf", "S", 0, "remote socket buffers in bytes")
	f.BoolVarP(&fl.NoDelay, "nodelay", "D", false, "set TCP_NODELAY")
	f.StringVarP(&fl.ConfLevel, "confidence", "I", "", "LEVEL,WIDTH: repeat until the LEVEL % confidence interval is within WIDTH % of the mean (netperf's -I; default 99,5)")
	f.StringVar(&fl.ConfIter, "iterations", "", "MAX,MIN: iterations for -I (netperf's -i; default 10,3; min at least 3, max at most 30)")
	f.DurationVarP(&fl.Interval, "interval", "i", 0, "interval reports every INTERVAL (1s), as iperf3's -i")
	f.StringVar(&fl.VC, "vc", "", "native AAL tests: the client's VC, IFACE:VPI/VCI (eth0:0/101)")
	f.StringVar(&fl.PeerVC, "peer-vc", "", "native AAL tests: the server's VC, IFACE:VPI/VCI")
	return c
}

func newPerfMemcpy(opts *options) *cobra.Command {
	var size int
	var length string
	c := &cobra.Command{
		Use:   "memcpy [-m SIZE] [-l DURATION]",
		Short: "The host's memory-to-memory copy rate: the end-system bound",
		Long:  clihelp.Text("perf-memcpy"),
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
