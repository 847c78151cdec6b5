package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/atmlab/atmlab/explorer"
	"github.com/atmlab/atmlab/harness/theory"
	"github.com/atmlab/atmlab/internal/clihelp"
	"github.com/atmlab/atmlab/internal/shellquote"
)

func newCalc(opts *options) *cobra.Command {
	var fl theory.CalcFlags
	var sawtooth bool
	var web, results string
	var public bool
	c := &cobra.Command{
		Use:   "calc [--rate R | --phy P [--aal A] [--encap E]] [--mtu N] [--proto udp|tcp|tcp-nots|sctp] PAYLOAD... | --sawtooth FROM TO | --web ADDR [--web-public] [--results DIR]",
		Short: "Theory: wire overhead, frames or cells, and the goodput ceiling per payload size; the sawtooth",
		Long:  clihelp.Text("calc"),
		Args: args(func(cmd *cobra.Command, a []string) error {
			if web != "" {
				return cobra.NoArgs(cmd, a)
			}
			return cobra.MinimumNArgs(1)(cmd, a)
		}),
		RunE: func(cmd *cobra.Command, a []string) error {
			if web != "" {
				return usage(explorer.ListenAndServe(cmd.Context(), web, public, results, cmd.OutOrStdout()))
			}
			if public {
				return usageError{fmt.Errorf("--web-public goes with --web: atmlab calc --web 0.0.0.0:8080 --web-public")}
			}
			if results != "" {
				return usageError{fmt.Errorf("--results goes with --web: atmlab calc --web 127.0.0.1:8080 --results %s", shellquote.Quote(results))}
			}
			fl.MTUGiven = cmd.Flags().Changed("mtu")
			p, err := theory.NewCalc(fl)
			if err != nil {
				return usage(err)
			}
			sizes, err := theory.ParseSizes(a)
			if err != nil {
				return usage(err)
			}
			if sawtooth {
				return usage(p.SawtoothSteps(cmd.OutOrStdout(), opts.output, sizes))
			}
			return usage(p.Ceilings(cmd.OutOrStdout(), opts.output, sizes))
		},
	}
	c.Flags().StringVar(&fl.Rate, "rate", "100M", "Ethernet line rate")
	c.Flags().StringVar(&fl.PHY, "phy", "", "ATM PHY instead of Ethernet: oc3, oc12, ds3, e3, atm25")
	c.Flags().StringVar(&fl.AAL, "aal", "aal5", "ATM adaptation layer: aal5 or aal34")
	c.Flags().StringVar(&fl.Encap, "encap", "llc", "RFC 2684 encapsulation: llc (LLC/SNAP) or vcmux")
	c.Flags().IntVar(&fl.MTU, "mtu", 1500, "IP MTU (9180 on ATM unless given)")
	c.Flags().IntVar(&fl.Labels, "labels", 0, "MPLS label stack entries on every packet (4 bytes each)")
	c.Flags().StringVar(&fl.Proto, "proto", "udp", "udp, tcp (with timestamps), tcp-nots or sctp")
	c.Flags().BoolVar(&sawtooth, "sawtooth", false, "list the cell steps between two UDP payload sizes (ATM)")
	c.Flags().StringVar(&web, "web", "", "serve the sawtooth explorer on HOST:PORT, such as 127.0.0.1:8080")
	c.Flags().BoolVar(&public, "web-public", false, "let --web bind an address other machines can reach")
	c.Flags().StringVar(&results, "results", "", "a lab run's results folder whose measured points --web draws")
	return c
}
