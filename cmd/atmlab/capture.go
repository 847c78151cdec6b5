package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/atmlab/atmlab/topologies/kernel"
)

func newCapture(opts *options) *cobra.Command {
	var file string
	var count int
	var cellMode bool
	c := &cobra.Command{
		Use:   "capture NAME ENDPOINT -w FILE",
		Short: "Capture a running lab's link to a pcap file",
		Long: "Capture both directions of the link that has ENDPOINT (h1:eth0, sw1:p2) as frames arrive,\n" +
			"until SIGINT or -c N frames. Wireshark and tshark read the file.\n\n" +
			"On an ATM link the file holds each AAL5 PDU as it arrived, pad and trailer included, as an\n" +
			"ERF record (pcap link type 197): Wireshark checks its CRC-32. With --cells it holds every\n" +
			"cell (without its HEC, which no pcap format carries); AAL3/4 links are always captured so.\n\n" +
			"Examples:\n  atmlab capture sw100 h1:eth0 -w h1.pcap -c 100\n  atmlab capture clip h1:eth0 --cells -w cells.pcap",
		Args: args(cobra.ExactArgs(2)),
		RunE: func(cmd *cobra.Command, a []string) error {
			if file == "" {
				return usageError{fmt.Errorf("capture: -w FILE is required")}
			}
			f, err := os.Create(file)
			if err != nil {
				return err
			}
			n, err := kernel.Capture(cmd.Context(), a[0], a[1], cellMode, f, count)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "%d records written to %s\n", n, file)
			return err
		},
	}
	c.Flags().StringVarP(&file, "write", "w", "", "pcap file to write")
	c.Flags().IntVarP(&count, "count", "c", 0, "stop after this many frames, PDUs or cells (0: until SIGINT)")
	c.Flags().BoolVar(&cellMode, "cells", false, "on an ATM link, capture every cell instead of whole PDUs")
	return c
}
