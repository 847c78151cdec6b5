package main

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/atmlab/atmlab/campaign"
	"github.com/atmlab/atmlab/harness/clock"
	"github.com/atmlab/atmlab/internal/clihelp"
	"github.com/atmlab/atmlab/internal/shellquote"
)

func newCampaign(opts *options) *cobra.Command {
	var engine, out, clockFlag, bin, image string
	var shards int
	var quick bool
	c := &cobra.Command{
		Use:   "campaign FILE --engine slurm|kubernetes|local --shards N --out DIR",
		Short: "Cut a lab's campaign into shards for Slurm, Kubernetes or this machine, and merge them",
		Long:  clihelp.Text("campaign"),
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			if engine == "" {
				return usageError{fmt.Errorf("campaign needs --engine slurm, kubernetes or local")}
			}
			eng, err := campaign.ParseEngine(engine)
			if err != nil {
				return usageError{err}
			}
			if out == "" {
				return usageError{fmt.Errorf("campaign needs --out DIR: the folder for the engine's files and the results")}
			}
			p, src, err := campaign.NewPlan(a[0], out, bin)
			if err != nil {
				return err
			}
			p.Shards, p.Quick, p.Image = shards, quick, image
			if p.Clock, err = campaign.ParseClock(clockFlag); err != nil {
				return usageError{err}
			}
			if err := p.Check(); err != nil {
				return usageError{err}
			}
			if eng == campaign.Local {
				return campaign.RunLocal(cmd.Context(), p, nil, cmd.ErrOrStderr())
			}
			paths, err := p.Write(eng, src)
			for _, path := range paths {
				fmt.Fprintf(cmd.OutOrStdout(), "wrote %s\n", path)
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "submit: %s\n", shellquote.Quote(filepath.Join(p.Out, "submit.sh"))) // a command to paste
			return nil
		},
	}
	c.Flags().StringVar(&engine, "engine", "", "slurm, kubernetes or local")
	c.Flags().IntVar(&shards, "shards", 1, "how many shards to cut the campaign into (N; shard K of N runs a stable 1/N of its points)")
	c.Flags().StringVar(&out, "out", "", "folder for the engine's files and the results (shard-K/ each, the merged report)")
	c.Flags().StringVar(&clockFlag, "clock", clock.Real.String(), "real (namespaces, root or a rootless lab) or virtual (model time, no privileges)")
	c.Flags().BoolVar(&quick, "quick", false, "each shard runs lab run --quick")
	c.Flags().StringVar(&bin, "atmlab", "", "the atmlab the Slurm tasks and local shards run (default: this one; on a cluster, a path every node sees)")
	c.Flags().StringVar(&image, "image", campaign.DefaultImage, "the container image the Kubernetes pods run, with atmlab (and for real time iperf3) on its PATH")
	return c
}
