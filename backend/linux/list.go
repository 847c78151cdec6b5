package linux

// atmlab ls: the running labs as rows, and their table.

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/atmlab/atmlab/topologies"
)

// Listed is one line of atmlab ls.
type Listed struct {
	Name   string   `json:"name"`
	Owner  string   `json:"owner"`
	Nodes  []string `json:"nodes"`
	Uptime string   `json:"uptime"`
	Since  string   `json:"since"`
	Web    string   `json:"web,omitempty"`
}

// List is labs as atmlab ls shows them at now, by name, each with its
// nodes as topology answers for it (none when it does not).
func List(ctx context.Context, labs []RunningLab, topology func(context.Context, string) (*topologies.View, error), now time.Time) []Listed {
	slices.SortFunc(labs, func(a, b RunningLab) int { return cmp.Compare(a.Name, b.Name) })
	rows := []Listed{}
	for _, l := range labs {
		r := Listed{Name: l.Name, Owner: l.Owner, Nodes: []string{}, Web: l.Web,
			Uptime: now.Sub(l.Since).Round(time.Second).String(), Since: l.Since.UTC().Format(time.RFC3339)}
		if v, err := topology(ctx, l.Name); err == nil && v != nil {
			for _, n := range v.Nodes {
				r.Nodes = append(r.Nodes, n.Name)
			}
		}
		rows = append(rows, r)
	}
	return rows
}

// WriteList writes rows as atmlab ls's table, or says no lab runs.
func WriteList(w io.Writer, rows []Listed) error {
	if len(rows) == 0 {
		_, err := fmt.Fprintln(w, "no lab is running (atmlab up FILE starts one)")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tOWNER\tNODES\tUPTIME\tLIVE VIEW")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.Name, r.Owner, strings.Join(r.Nodes, ","), r.Uptime, cmp.Or(r.Web, "-"))
	}
	return tw.Flush()
}
