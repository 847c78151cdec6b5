package main

import (
	"encoding/csv"
	"fmt"
	"strconv"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/atmlab/atmlab/emulator/units"
	"github.com/atmlab/atmlab/harness"
)

func newCalc(opts *options) *cobra.Command {
	var rate, proto string
	var mtu int
	c := &cobra.Command{
		Use:   "calc [--rate R] [--mtu N] [--proto udp|tcp|tcp-nots] PAYLOAD...",
		Short: "Theory: wire overhead, frames and the goodput ceiling of a path per payload size",
		Long: "Print the goodput ceiling of an Ethernet path for each payload size: frames (IP fragments\n" +
			"or TCP segments), wire bytes with 802.3 framing (preamble, FCS, minimum frame, gap), efficiency.\n" +
			"tcp assumes Linux's timestamp option (MSS 1448 at MTU 1500); a TCP stream is full segments.\n\n" +
			"Example:\n  atmlab calc --rate 100M --proto udp 18 512 1472 8192",
		Args: args(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			r, err := units.ParseRate(rate)
			if err != nil {
				return usageError{fmt.Errorf("--rate: %w", err)}
			}
			var rows []harness.Ceiling
			for _, p := range a {
				n, err := strconv.Atoi(p)
				if err != nil {
					return usageError{fmt.Errorf("payload %q: want a size in bytes", p)}
				}
				c, err := harness.EthernetCeiling(r, mtu, n, proto)
				if err != nil {
					return usageError{err}
				}
				rows = append(rows, c)
			}
			switch opts.output {
			case "json":
				return printJSON(cmd.OutOrStdout(), map[string]any{"rate_bps": int64(r), "mtu": mtu, "medium": "ethernet", "ceilings": rows})
			case "csv":
				w := csv.NewWriter(cmd.OutOrStdout())
				w.Write([]string{"rate_bps", "mtu", "proto", "payload_bytes", "frames", "wire_bytes", "efficiency", "goodput_bps"})
				for _, c := range rows {
					w.Write([]string{strconv.FormatInt(int64(r), 10), strconv.Itoa(mtu), c.Proto, strconv.Itoa(c.Payload), strconv.Itoa(c.Frames),
						strconv.Itoa(c.WireBytes), f(c.Efficiency), f(c.Goodput)})
				}
				w.Flush()
				return w.Error()
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Ethernet at %v, MTU %d, %s\n", r, mtu, proto)
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', tabwriter.AlignRight)
			fmt.Fprintln(w, "payload B\tframes\twire B\tefficiency\tgoodput Mbit/s\t")
			for _, c := range rows {
				fmt.Fprintf(w, "%d\t%d\t%d\t%.4f\t%.3f\t\n", c.Payload, c.Frames, c.WireBytes, c.Efficiency, c.Goodput/1e6)
			}
			return w.Flush()
		},
	}
	c.Flags().StringVar(&rate, "rate", "100M", "line rate")
	c.Flags().IntVar(&mtu, "mtu", 1500, "IP MTU")
	c.Flags().StringVar(&proto, "proto", "udp", "udp, tcp (with timestamps) or tcp-nots")
	return c
}
