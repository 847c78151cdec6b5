package main

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/atmlab/atmlab/backend/linux"
	"github.com/atmlab/atmlab/internal/clihelp"
)

// lsRow is one line of atmlab ls.
type lsRow struct {
	Name   string   `json:"name"`
	Owner  string   `json:"owner"`
	Nodes  []string `json:"nodes"`
	Uptime string   `json:"uptime"`
	Since  string   `json:"since"`
	Web    string   `json:"web,omitempty"`
}

// now is the clock ls measures uptimes by; tests fix it.
var now = time.Now

func newLs(opts *options) *cobra.Command {
	return &cobra.Command{
		Use:     "ls",
		Aliases: []string{"list"},
		Short:   "List the running labs: name, owner, nodes, uptime, live-view address",
		Long:    clihelp.Text("ls"),
		Args:    args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			labs, err := runningLabs()
			if err != nil {
				return err
			}
			slices.SortFunc(labs, func(a, b linux.RunningLab) int { return cmp.Compare(a.Name, b.Name) })
			rows := []lsRow{}
			for _, l := range labs {
				r := lsRow{Name: l.Name, Owner: l.Owner, Nodes: []string{}, Web: l.Web,
					Uptime: now().Sub(l.Since).Round(time.Second).String(), Since: l.Since.UTC().Format(time.RFC3339)}
				if v, err := labTopology(cmd.Context(), l.Name); err == nil && v != nil {
					for _, n := range v.Nodes {
						r.Nodes = append(r.Nodes, n.Name)
					}
				}
				rows = append(rows, r)
			}
			if opts.output == "json" {
				return printJSON(cmd.OutOrStdout(), rows)
			}
			if len(rows) == 0 {
				fmt.Fprintln(cmd.OutOrStdout(), "no lab is running (atmlab up FILE starts one)")
				return nil
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "NAME\tOWNER\tNODES\tUPTIME\tLIVE VIEW")
			for _, r := range rows {
				web := r.Web
				if web == "" {
					web = "-"
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", r.Name, r.Owner, strings.Join(r.Nodes, ","), r.Uptime, web)
			}
			return w.Flush()
		},
	}
}

// labTopology asks a running lab for its topology, and runningLabs
// lists the running labs; tests replace them.
var labTopology, runningLabs = linux.Topology, linux.Running
