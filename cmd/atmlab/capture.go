package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/atmlab/atmlab/backend/linux"
	"github.com/atmlab/atmlab/control"
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
			if err := linux.NeedsKernel("capture"); err != nil {
				return err // before the file is made
			}
			// The file would be root's, in root's directory: the user's
			// capture is theirs to write.
			if err := linux.RefuseUserLab(a[0]); err != nil {
				return err
			}
			f, err := control.NewReplacement(file)
			if err != nil {
				return err
			}
			n, aal34, err := linux.Capture(cmd.Context(), a[0], a[1], cellMode, f, count)
			// Records captured are kept, with the error that ended the
			// capture; a capture that got nothing leaves file as it was.
			if cerr := f.Finish(err == nil || n > 0); err == nil {
				err = cerr
			}
			if err != nil && n == 0 {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "%d records written to %s\n", n, file)
			if aal34 {
				fmt.Fprintf(cmd.ErrOrStderr(), "AAL3/4 cells: decode them with atmlab's dissector (`atmlab capture --lua-dissector aal34.lua` writes it):\n"+
					"  tshark -X lua_script:aal34.lua -r %s\n", file)
			}
			return err
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
