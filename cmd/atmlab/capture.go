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
	c := &cobra.Command{
		Use:   "capture NAME ENDPOINT -w FILE",
		Short: "Capture a running lab's link to a pcap file",
		Long: "Capture both directions of the link that has ENDPOINT (h1:eth0, sw1:p2) as frames arrive,\n" +
			"until SIGINT or -c N frames. Wireshark and tshark read the file.\n\n" +
			"Example:\n  atmlab capture sw100 h1:eth0 -w h1.pcap -c 100",
		Args: args(cobra.ExactArgs(2)),
		RunE: func(cmd *cobra.Command, a []string) error {
			if file == "" {
				return usageError{fmt.Errorf("capture: -w FILE is required")}
			}
			f, err := os.Create(file)
			if err != nil {
				return err
			}
			n, err := kernel.Capture(cmd.Context(), a[0], a[1], f, count)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "%d frames written to %s\n", n, file)
			return err
		},
	}
	c.Flags().StringVarP(&file, "write", "w", "", "pcap file to write")
	c.Flags().IntVarP(&count, "count", "c", 0, "stop after this many frames (0: until SIGINT)")
	return c
}
