// Package inspect is atmlab inspect: a lab's nodes, addresses, links,
// PVCs and MPLS labels as tables, from its lab file (nothing built) or as
// a running lab answers.
package inspect

import (
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/atmlab/atmlab/devices"
	"github.com/atmlab/atmlab/emulator/sched"
	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/labfile"
)

// File is the lab file at path as a running lab would show it, its MPLS
// labels bound, without building anything in the kernel.
func File(path string) (*topologies.View, error) {
	lab, err := labfile.Load(path)
	if err != nil {
		return nil, err
	}
	view := lab.View()
	view.SetLabels(devices.Build(lab, sched.New()).Labels())
	return &view, nil
}

// IsFile says whether arg names a lab file rather than a running lab.
func IsFile(arg string) bool {
	if strings.HasSuffix(arg, ".yaml") || strings.HasSuffix(arg, ".yml") {
		return true
	}
	fi, err := os.Stat(arg)
	return err == nil && fi.Mode().IsRegular()
}

// Write writes a lab's topology as tables: nodes, links, and the PVCs and
// MPLS labels where the lab has any.
func Write(out io.Writer, v *topologies.View) {
	fmt.Fprintf(out, "lab %s: %d nodes, %d links\n\n", v.Lab, len(v.Nodes), len(v.Links))
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "NODE\tKIND\tINTERFACES")
	for _, n := range v.Nodes {
		ifs := strings.Join(n.Interfaces, ", ")
		if ifs == "" {
			ifs = "-"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\n", n.Name, n.Kind, ifs)
	}
	w.Flush()
	fmt.Fprintln(out)
	w = tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "LINK\tA→B\tB→A\tATM")
	for _, l := range v.Links {
		atm := "-"
		if l.PHY != "" {
			atm = strings.Join([]string{l.PHY, l.AAL, l.Enc}, " ")
		}
		fmt.Fprintf(w, "%s — %s\t%s\t%s\t%s\n", l.A, l.B, dirText(l.AB, l.Prop), dirText(l.BA, l.Prop), atm)
	}
	w.Flush()
	table(out, v, "PVC", func(n topologies.ViewNode) []string { return n.PVCs })
	table(out, v, "MPLS LABELS", func(n topologies.ViewNode) []string { return n.Labels })
}

// table writes one line per node and item of what, if any node has one.
func table(out io.Writer, v *topologies.View, title string, what func(topologies.ViewNode) []string) {
	var w *tabwriter.Writer
	for _, n := range v.Nodes {
		for _, p := range what(n) {
			if w == nil {
				fmt.Fprintln(out)
				w = tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
				fmt.Fprintf(w, "NODE\t%s\n", title)
			}
			fmt.Fprintf(w, "%s\t%s\n", n.Name, p)
		}
	}
	if w != nil {
		w.Flush()
	}
}

// dirText is one direction of a link: its rate and impairments.
func dirText(d topologies.ViewDir, prop float64) string {
	s := d.Text
	if d.Delay+prop > 0 {
		s += fmt.Sprintf(" delay %gms", d.Delay+prop)
	}
	if d.Jitter > 0 {
		s += fmt.Sprintf(" jitter %gms", d.Jitter)
	}
	if d.Loss > 0 {
		s += fmt.Sprintf(" loss %g%%", 100*d.Loss)
	}
	return s
}
