package main

import (
	"encoding/csv"
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

func newPerfClient(opts *options) *cobra.Command {
	var (
		host, test, length, rr    string
		confLevel, confIter       string
		interval                  time.Duration
		port, msg, sndbuf, rcvbuf int
		nodelay                   bool
	)
	c := &cobra.Command{
		Use:   "client -H HOST [-t TEST] [-l DURATION] [-m SIZE] [-r REQ,RESP] [-s BUF] [-S BUF] [-D]",
		Short: "Run one test against a perf server: " + strings.Join(perf.Tests, ", "),
		Long: "Run one of netperf's tests against `atmlab perf server`, with netperf's definitions: stream\n" +
			"throughput is what the receiver got over the sender's elapsed time including the final flush;\n" +
			"UDP_STREAM reports a send and a receive line; RR tests report transactions/s and latency\n" +
			"percentiles. -o json prints the result in a stable schema (schema_version 1).\n\n" +
			"Example:\n  atmlab exec sw100 h1 -- atmlab perf client -H 10.0.0.2 -t TCP_RR -l 10 -r 1,1",
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if host == "" {
				return usageError{fmt.Errorf("perf client: -H HOST is required")}
			}
			d, err := parseLength(length)
			if err != nil {
				return usageError{err}
			}
			spec := perf.Spec{Test: test, Duration: d, Message: msg, SendBuf: sndbuf, RecvBuf: rcvbuf, NoDelay: nodelay, Interval: interval}
			if rr != "" {
				req, resp, ok := strings.Cut(rr, ",")
				if !ok {
					resp = req
				}
				if spec.Request, err = strconv.Atoi(req); err == nil {
					spec.Response, err = strconv.Atoi(resp)
				}
				if err != nil {
					return usageError{fmt.Errorf("-r %q: write REQ,RESP in bytes, such as 1,1 or 128,16384", rr)}
				}
			}
			if err := spec.Validate(); err != nil {
				return usageError{err}
			}
			var res perf.Result
			if confLevel != "" || confIter != "" {
				c, err := parseConfidence(confLevel, confIter)
				if err != nil {
					return usageError{err}
				}
				res, err = perf.RunConfident(cmd.Context(), host, port, spec, c)
			} else {
				res, err = perf.Run(cmd.Context(), host, port, spec)
			}
			if res.Spec.Test != "" {
				switch opts.output {
				case "json":
					printJSON(cmd.OutOrStdout(), res)
				case "csv":
					printResultCSV(cmd, res)
				default:
					printResult(cmd, res)
				}
			}
			return err
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
	return c
}

// parseConfidence reads netperf's -I LEVEL,WIDTH and -i MAX,MIN (here
// --iterations, since -i is iperf3's interval); either
// alone turns the mode on with netperf's defaults for the other.
func parseConfidence(level, iter string) (perf.Confidence, error) {
	c := perf.Confidence{Level: 99, Width: 0.05, Min: 3, Max: 10}
	if level != "" {
		l, w, ok := strings.Cut(level, ",")
		lv, err1 := strconv.Atoi(l)
		wv, err2 := strconv.ParseFloat(w, 64)
		if !ok || err1 != nil || err2 != nil {
			return c, fmt.Errorf("-I %q: write LEVEL,WIDTH such as 99,5", level)
		}
		c.Level, c.Width = lv, wv/100
	}
	if iter != "" {
		mx, mn, ok := strings.Cut(iter, ",")
		a, err1 := strconv.Atoi(mx)
		b, err2 := strconv.Atoi(mn)
		if !ok || err1 != nil || err2 != nil {
			return c, fmt.Errorf("--iterations %q: write MAX,MIN such as 10,3", iter)
		}
		c.Max, c.Min = a, b
	}
	return c, c.Normalize()
}

// parseLength reads netperf's -l: seconds, or a Go duration.
func parseLength(s string) (time.Duration, error) {
	if v, err := strconv.ParseFloat(s, 64); err == nil && v > 0 {
		return time.Duration(v * float64(time.Second)), nil
	}
	if d, err := time.ParseDuration(s); err == nil && d > 0 {
		return d, nil
	}
	return 0, fmt.Errorf("-l %q: give seconds (10) or a duration (1.5s)", s)
}

func printResult(cmd *cobra.Command, r perf.Result) {
	w := cmd.OutOrStdout()
	s := r.Spec
	fmt.Fprintf(w, "%s to %s, %.2f s", r.Test, r.Host, r.Elapsed)
	switch r.Test {
	case perf.TCPStream, perf.TCPMaerts, perf.UDPStream:
		fmt.Fprintf(w, ", %d-byte messages\n", s.Message)
	default:
		fmt.Fprintf(w, ", %d-byte requests, %d-byte responses\n", s.Request, s.Response)
	}
	if r.Error != "" {
		fmt.Fprintf(w, "  data point: %s\n", r.Error)
	}
	switch r.Test {
	case perf.UDPStream:
		fmt.Fprintf(w, "  send     %10.2f Mbit/s  %d messages, %d send errors\n", r.SendBps/1e6, r.MessagesSent, r.SendErrors)
		fmt.Fprintf(w, "  receive  %10.2f Mbit/s  %d messages, %d lost, %d reordered, %d duplicates, jitter %.1f µs\n",
			r.ThroughputBps/1e6, r.MessagesReceived, r.Lost, r.Reordered, r.Duplicates, r.JitterUs)
	case perf.TCPStream, perf.TCPMaerts:
		fmt.Fprintf(w, "  throughput %.2f Mbit/s (%d bytes received)\n", r.ThroughputBps/1e6, r.BytesReceived)
	default:
		l := r.Latency
		fmt.Fprintf(w, "  %.1f transactions/s (%d, %d timeouts)\n", r.TransactionsPerSec, r.Transactions, r.Timeouts)
		if l != nil {
			fmt.Fprintf(w, "  latency µs: mean %.1f  p50 %.1f  p90 %.1f  p99 %.1f  max %.1f\n", l.Mean, l.P50, l.P90, l.P99, l.Max)
		}
	}
	for _, iv := range r.Intervals {
		if iv.TransactionsPerSec > 0 {
			fmt.Fprintf(w, "  [%6.2f-%6.2f s] %10.1f transactions/s\n", iv.Start, iv.End, iv.TransactionsPerSec)
		} else {
			fmt.Fprintf(w, "  [%6.2f-%6.2f s] %10.2f Mbit/s\n", iv.Start, iv.End, iv.Bps/1e6)
		}
	}
	if c := r.Confidence; c != nil {
		mark := "reached"
		if !c.Met {
			mark = "!!! NOT reached"
		}
		fmt.Fprintf(w, "  confidence %d%% within %.1f%%: %s after %d iterations; achieved width %.2f%% (±%.2f%%); figure is their mean\n",
			c.Level, 100*c.Width, mark, c.Iterations, 100*c.Achieved, 50*c.Achieved)
	}
	fmt.Fprintf(w, "  socket buffers: local %d/%d, remote %d/%d (send/recv, as Linux set them)\n",
		r.LocalSockBuf.Send, r.LocalSockBuf.Recv, r.RemoteSockBuf.Send, r.RemoteSockBuf.Recv)
	fmt.Fprintf(w, "  CPU: local %.0f%%, remote %.0f%% of a core; service demand %.3f / %.3f µs per %s\n",
		100*r.CPU.Local, 100*r.CPU.Remote, r.CPU.LocalServiceDemand, r.CPU.RemoteServiceDemand, map[bool]string{true: "transaction", false: "KB"}[r.Transactions > 0])
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
			d, err := parseLength(length)
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

// printResultCSV writes a header and one row, for spreadsheets.
func printResultCSV(cmd *cobra.Command, r perf.Result) {
	w := csv.NewWriter(cmd.OutOrStdout())
	w.Write([]string{"test", "host", "elapsed_s", "throughput_bps", "send_bps", "transactions_per_sec",
		"latency_p50_us", "latency_p90_us", "latency_p99_us", "latency_max_us", "lost", "local_cpu", "remote_cpu", "error"})
	var lat [4]string
	if l := r.Latency; l != nil {
		lat = [4]string{f(l.P50), f(l.P90), f(l.P99), f(l.Max)}
	}
	w.Write([]string{r.Test, r.Host, f(r.Elapsed), f(r.ThroughputBps), f(r.SendBps), f(r.TransactionsPerSec),
		lat[0], lat[1], lat[2], lat[3], strconv.FormatUint(r.Lost, 10), f(r.CPU.Local), f(r.CPU.Remote), r.Error})
	w.Flush()
}

func f(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
