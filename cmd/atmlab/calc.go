package main

import (
	"encoding/csv"
	"fmt"
	"math"
	"strconv"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/atmlab/atmlab/cells"
	"github.com/atmlab/atmlab/emulator/atm"
	"github.com/atmlab/atmlab/emulator/units"
	"github.com/atmlab/atmlab/explorer"
	"github.com/atmlab/atmlab/harness/theory"
	"github.com/atmlab/atmlab/internal/shellquote"
	"github.com/atmlab/atmlab/internal/webguard"
	"github.com/atmlab/atmlab/topologies"
)

// calcPath is the medium `atmlab calc` works out (theory.Path), with its
// flags' text.
type calcPath struct {
	theory.Path
	rateStr, aalStr  string
	encapStr, phyStr string
}

// number prints a count: whole for UDP's frames and bytes, with decimals
// for a TCP message's share of a stream's segments.
func number(f float64) string {
	switch {
	case f == math.Trunc(f):
		return strconv.FormatFloat(f, 'f', 0, 64)
	case f >= 100:
		return strconv.FormatFloat(f, 'f', 1, 64)
	}
	return strconv.FormatFloat(f, 'g', 4, 64)
}

func (p *calcPath) String() string {
	if p.Proto != "udp" {
		return p.medium() + fmt.Sprintf(" (a stream of %d-byte segments: a message's frames and bytes are its share of them)", p.MSS())
	}
	return p.medium()
}

func (p *calcPath) medium() string {
	if p.PHY != nil {
		return fmt.Sprintf("ATM %s (%.1f cells/s), %v, %v, MTU %d, %s", p.PHY.Name, p.PHY.CellRate(), p.AAL, p.Encap, p.MTU, p.Proto)
	}
	if p.Labels > 0 {
		return fmt.Sprintf("Ethernet at %v, MTU %d, %d MPLS label(s), %s", p.Rate, p.MTU, p.Labels, p.Proto)
	}
	return fmt.Sprintf("Ethernet at %v, MTU %d, %s", p.Rate, p.MTU, p.Proto)
}

func newCalc(opts *options) *cobra.Command {
	p := &calcPath{}
	var sawtooth bool
	var web, results string
	var public bool
	c := &cobra.Command{
		Use:   "calc [--rate R | --phy P [--aal A] [--encap E]] [--mtu N] [--proto udp|tcp|tcp-nots] PAYLOAD... | --sawtooth FROM TO | --web ADDR [--web-public] [--results DIR]",
		Short: "Theory: wire overhead, frames or cells, and the goodput ceiling per payload size; the sawtooth",
		Long: "Print the goodput ceiling of a path for each payload size.\n\n" +
			"Ethernet (--rate): frames (IP fragments or TCP segments), wire bytes with 802.3 framing\n" +
			"(preamble, FCS, minimum frame, gap), efficiency.\n" +
			"ATM (--phy oc3|oc12|ds3|e3|atm25): Classical IP over ATM, each IP packet in RFC 2684\n" +
			"encapsulation (llc or vcmux) and AAL5 or AAL3/4 (aal34), cells per message, octets on the line.\n" +
			"The MTU is 1500 on Ethernet and 9180 on ATM unless --mtu says otherwise.\n" +
			"tcp assumes Linux's timestamp option (MSS 1448 at MTU 1500); a TCP stream is full segments.\n\n" +
			"--sawtooth FROM TO lists the UDP payload sizes between FROM and TO after which one byte more\n" +
			"costs a cell, with the goodput before and after the step.\n\n" +
			"--web ADDR serves the sawtooth explorer, a page with a payload-size slider that shows every\n" +
			"PHY, AAL and encapsulation's cells and ceiling and the PDU laid out in cells (read-only; ADDR\n" +
			"must be a loopback address unless --web-public says other machines may reach it);\n" +
			"--results DIR adds a lab run's measured points.\n\n" +
			"--labels N adds N MPLS label stack entries (4 bytes each) to every Ethernet frame; labelled\n" +
			"packets must fit the routers' MTU, the larger of 1500 and --mtu (give --mtu 1496 for one label).\n" +
			"A size that does not fit (a UDP payload over 65507, a labelled packet over the MTU) is an error.\n\n" +
			"Examples:\n  atmlab calc --rate 100M --proto udp 18 512 1472 8192\n" +
			"  atmlab calc --rate 100M --labels 1 --mtu 1496 1468\n" +
			"  atmlab calc --phy oc3 1444 1445 9152\n  atmlab calc --phy oc3 --aal aal34 --sawtooth 900 1100\n" +
			"  atmlab calc --web 127.0.0.1:8080 --results results/sw100",
		Args: args(func(cmd *cobra.Command, a []string) error {
			if web != "" {
				return cobra.NoArgs(cmd, a)
			}
			return cobra.MinimumNArgs(1)(cmd, a)
		}),
		RunE: func(cmd *cobra.Command, a []string) error {
			if web != "" {
				return serveExplorer(cmd, web, public, results)
			}
			if public {
				return usageError{fmt.Errorf("--web-public goes with --web: atmlab calc --web 0.0.0.0:8080 --web-public")}
			}
			if results != "" {
				return usageError{fmt.Errorf("--results goes with --web: atmlab calc --web 127.0.0.1:8080 --results %s", shellquote.Quote(results))}
			}
			if err := p.resolve(cmd.Flags().Changed("mtu")); err != nil {
				return usageError{err}
			}
			var sizes []int
			for _, s := range a {
				n, err := strconv.Atoi(s)
				if err != nil {
					return usageError{fmt.Errorf("payload %q: want a size in bytes", s)}
				}
				sizes = append(sizes, n)
			}
			if sawtooth {
				return p.sawtooth(cmd, opts, sizes)
			}
			var rows []theory.Ceiling
			for _, n := range sizes {
				c, err := p.Ceiling(n)
				if err != nil {
					return usageError{err}
				}
				rows = append(rows, c)
			}
			return p.print(cmd, opts, rows)
		},
	}
	c.Flags().StringVar(&p.rateStr, "rate", "100M", "Ethernet line rate")
	c.Flags().StringVar(&p.phyStr, "phy", "", "ATM PHY instead of Ethernet: oc3, oc12, ds3, e3, atm25")
	c.Flags().StringVar(&p.aalStr, "aal", "aal5", "ATM adaptation layer: aal5 or aal34")
	c.Flags().StringVar(&p.encapStr, "encap", "llc", "RFC 2684 encapsulation: llc (LLC/SNAP) or vcmux")
	c.Flags().IntVar(&p.MTU, "mtu", 1500, "IP MTU (9180 on ATM unless given)")
	c.Flags().IntVar(&p.Labels, "labels", 0, "MPLS label stack entries on every Ethernet frame (4 bytes each)")
	c.Flags().StringVar(&p.Proto, "proto", "udp", "udp, tcp (with timestamps) or tcp-nots")
	c.Flags().BoolVar(&sawtooth, "sawtooth", false, "list the cell steps between two UDP payload sizes (ATM)")
	c.Flags().StringVar(&web, "web", "", "serve the sawtooth explorer on HOST:PORT, such as 127.0.0.1:8080")
	c.Flags().BoolVar(&public, "web-public", false, "let --web bind an address other machines can reach")
	c.Flags().StringVar(&results, "results", "", "a lab run's results folder whose measured points --web draws")
	return c
}

// resolve parses the flags into a path.
func (p *calcPath) resolve(mtuGiven bool) error {
	r, err := units.ParseRate(p.rateStr)
	if err != nil {
		return fmt.Errorf("--rate: %w", err)
	}
	p.Rate = r
	if p.phyStr == "" {
		return nil
	}
	phy, err := atm.LookupPHY(p.phyStr)
	if err != nil {
		return fmt.Errorf("--phy: %w", err)
	}
	p.PHY = &phy
	if p.AAL, err = atm.ParseAAL(p.aalStr); err != nil {
		return fmt.Errorf("--aal: %w", err)
	}
	if p.Encap, err = cells.ParseEncap(p.encapStr); err != nil {
		return fmt.Errorf("--encap: %w", err)
	}
	if !mtuGiven {
		p.MTU = topologies.DefaultATMMTU
	}
	if sdu := p.MTU + p.Encap.Overhead(); sdu > 65535 {
		return fmt.Errorf("--mtu %d does not fit: with %v an AAL SDU of %d bytes is over 65535; give --mtu %d or less", p.MTU, p.Encap, sdu, 65535-p.Encap.Overhead())
	}
	return nil
}

func (p *calcPath) print(cmd *cobra.Command, opts *options, rows []theory.Ceiling) error {
	cellsOf := func(c theory.Ceiling) string {
		if p.PHY == nil {
			return ""
		}
		return number(p.Cells(c))
	}
	switch opts.output {
	case "json":
		out := map[string]any{"mtu": p.MTU, "medium": "ethernet", "rate_bps": int64(p.Rate), "ceilings": rows}
		if p.PHY != nil {
			delete(out, "rate_bps")
			out["medium"], out["phy"], out["aal"], out["encap"], out["cells_per_sec"] = "atm", p.PHY.Name, p.AAL.String(), p.Encap.String(), p.PHY.CellRate()
		}
		return printJSON(cmd.OutOrStdout(), out)
	case "csv":
		w := csv.NewWriter(cmd.OutOrStdout())
		w.Write([]string{"rate_bps", "mtu", "proto", "payload_bytes", "frames", "wire_bytes", "efficiency", "goodput_bps", "medium", "cells"})
		medium, rate := "ethernet", int64(p.Rate)
		if p.PHY != nil {
			medium, rate = p.PHY.Name+"/"+p.AAL.String()+"/"+p.Encap.String(), int64(p.PHY.LineRate)
		}
		for _, c := range rows {
			w.Write([]string{strconv.FormatInt(rate, 10), strconv.Itoa(p.MTU), c.Proto, strconv.Itoa(c.Payload), number(c.Frames),
				number(c.WireBytes), f(c.Efficiency), f(c.Goodput), medium, cellsOf(c)})
		}
		w.Flush()
		return w.Error()
	}
	fmt.Fprintln(cmd.OutOrStdout(), p)
	w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', tabwriter.AlignRight)
	if p.PHY != nil {
		fmt.Fprintln(w, "payload B\tpackets\tcells\tline B\tefficiency\tgoodput Mbit/s\t")
		for _, c := range rows {
			fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%.4f\t%.3f\t\n", c.Payload, number(c.Frames), cellsOf(c), number(c.WireBytes), c.Efficiency, c.Goodput/1e6)
		}
		return w.Flush()
	}
	fmt.Fprintln(w, "payload B\tframes\twire B\tefficiency\tgoodput Mbit/s\t")
	for _, c := range rows {
		fmt.Fprintf(w, "%d\t%s\t%s\t%.4f\t%.3f\t\n", c.Payload, number(c.Frames), number(c.WireBytes), c.Efficiency, c.Goodput/1e6)
	}
	return w.Flush()
}

func (p *calcPath) sawtooth(cmd *cobra.Command, opts *options, sizes []int) error {
	if p.PHY == nil || len(sizes) != 2 || sizes[0] < 1 || sizes[1] < sizes[0] {
		return usageError{fmt.Errorf("--sawtooth FROM TO: give an ATM --phy and two UDP payload sizes, FROM ≤ TO")}
	}
	steps, err := theory.Sawtooth(*p.PHY, p.AAL, p.Encap, p.MTU, sizes[0], sizes[1])
	if err != nil {
		return usageError{err}
	}
	switch opts.output {
	case "json":
		return printJSON(cmd.OutOrStdout(), map[string]any{"phy": p.PHY.Name, "aal": p.AAL.String(), "encap": p.Encap.String(), "mtu": p.MTU, "steps": steps})
	case "csv":
		w := csv.NewWriter(cmd.OutOrStdout())
		w.Write([]string{"size_bytes", "cells", "goodput_bps", "next_goodput_bps", "drop"})
		for _, s := range steps {
			w.Write([]string{strconv.Itoa(s.Size), strconv.Itoa(s.Cells), f(s.Goodput), f(s.Next), f(s.Drop)})
		}
		w.Flush()
		return w.Error()
	}
	p.Proto = "udp"
	fmt.Fprintf(cmd.OutOrStdout(), "sawtooth of %s: the last UDP payload before each extra cell\n", p)
	w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "payload B\tcells\tgoodput Mbit/s\t+1 byte: cells\tgoodput Mbit/s\tdrop\t")
	for _, s := range steps {
		fmt.Fprintf(w, "%d\t%d\t%.3f\t%d\t%.3f\t%.1f%%\t\n", s.Size, s.Cells, s.Goodput/1e6, s.Cells+1, s.Next/1e6, 100*s.Drop)
	}
	return w.Flush()
}

// serveExplorer serves the sawtooth explorer until SIGINT or SIGTERM.
func serveExplorer(cmd *cobra.Command, addr string, public bool, results string) error {
	if results != "" {
		if err := explorer.CheckResults(results); err != nil {
			return usageError{err}
		}
	}
	l, err := webguard.Listen(addr, public)
	if err != nil {
		return usageError{err}
	}
	return explorer.Serve(cmd.Context(), l, results, cmd.OutOrStdout())
}
