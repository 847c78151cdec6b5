package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/atmlab/atmlab/backend/linux"
	"github.com/atmlab/atmlab/internal/clihelp"
	"github.com/atmlab/atmlab/wireshark"
)

func newCapture(opts *options) *cobra.Command {
	var file string
	var count int
	var cellMode bool
	var lua string
	c := &cobra.Command{
		Use:   "capture NAME ENDPOINT -w FILE | capture --lua-dissector PATH",
		Short: "Capture a running lab's link to a pcap file",
		Long:  clihelp.Text("capture"),
		Args: func(cmd *cobra.Command, a []string) error {
			if lua != "" {
				return args(cobra.NoArgs)(cmd, a)
			}
			return args(cobra.ExactArgs(2))(cmd, a)
		},
		RunE: func(cmd *cobra.Command, a []string) error {
			if lua != "" {
				return writeDissector(cmd, lua)
			}
			if file == "" {
				return usageError{fmt.Errorf("capture: -w FILE is required")}
			}
			return linux.CaptureFile(cmd.Context(), a[0], a[1], cellMode, file, count, cmd.ErrOrStderr())
		},
	}
	c.Flags().StringVarP(&file, "write", "w", "", "pcap file to write")
	c.Flags().IntVarP(&count, "count", "c", 0, "stop after this many frames, PDUs or cells (0: until SIGINT)")
	c.Flags().BoolVar(&cellMode, "cells", false, "on an ATM link, capture every cell instead of whole PDUs")
	c.Flags().StringVar(&lua, "lua-dissector", "", "write atmlab's Wireshark dissector for AAL3/4 captures to PATH and exit")
	return c
}

// writeDissector writes the AAL3/4 dissector to lua and says how to load it.
func writeDissector(cmd *cobra.Command, lua string) error {
	if err := wireshark.WriteDissector(lua); err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "wrote %s; load it with: tshark -X lua_script:%s -r FILE (or wireshark -X lua_script:%s FILE)\n", lua, lua, lua)
	return nil
}
