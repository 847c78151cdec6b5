package theory

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"text/tabwriter"

	"github.com/atmlab/atmlab/cells"
	"github.com/atmlab/atmlab/emulator/atm"
	"github.com/atmlab/atmlab/emulator/units"
	"github.com/atmlab/atmlab/topologies/defaults"
)

// InputError is a question calc cannot answer as asked (a flag's value,
// a size that does not fit): the command line's mistake, not the
// machine's.
type InputError struct{ Err error }

func (e InputError) Error() string { return e.Err.Error() }
func (e InputError) Unwrap() error { return e.Err }

// BadInput marks the error as the caller's mistake.
func (InputError) BadInput() {}

// CalcFlags is atmlab calc's medium as its flags give it.
type CalcFlags struct {
	Rate, PHY, AAL, Encap string
	MTU                   int
	MTUGiven              bool // --mtu was given: ATM's default MTU does not apply
	Labels                int
	Proto                 string
}

// Calc is the medium atmlab calc works out: a Path from CalcFlags.
type Calc struct{ Path }

// NewCalc works out the path the flags describe.
func NewCalc(fl CalcFlags) (*Calc, error) {
	c := &Calc{Path{MTU: fl.MTU, Labels: fl.Labels, Proto: fl.Proto}}
	if err := c.resolve(fl); err != nil {
		return nil, InputError{err}
	}
	return c, nil
}

func (c *Calc) resolve(fl CalcFlags) error {
	r, err := units.ParseRate(fl.Rate)
	if err != nil {
		return fmt.Errorf("--rate: %w", err)
	}
	c.Rate = r
	if fl.PHY == "" {
		return nil
	}
	phy, err := atm.LookupPHY(fl.PHY)
	if err != nil {
		return fmt.Errorf("--phy: %w", err)
	}
	c.PHY = &phy
	if c.AAL, err = atm.ParseAAL(fl.AAL); err != nil {
		return fmt.Errorf("--aal: %w", err)
	}
	if c.Encap, err = cells.ParseEncap(fl.Encap); err != nil {
		return fmt.Errorf("--encap: %w", err)
	}
	if !fl.MTUGiven {
		c.MTU = defaults.ATMMTU
	}
	if sdu := c.MTU + c.Encap.Overhead(); sdu > 65535 {
		return fmt.Errorf("--mtu %d does not fit: with %v an AAL SDU of %d bytes is over 65535; give --mtu %d or less", c.MTU, c.Encap, sdu, 65535-c.Encap.Overhead())
	}
	return nil
}

// FormatCount prints a count: whole for UDP's frames and bytes, with decimals
// for a TCP message's share of a stream's segments.
func FormatCount(f float64) string {
	switch {
	case f == math.Trunc(f):
		return strconv.FormatFloat(f, 'f', 0, 64)
	case f >= 100:
		return strconv.FormatFloat(f, 'f', 1, 64)
	}
	return strconv.FormatFloat(f, 'g', 4, 64)
}

// exact prints a figure with every digit it has, for CSV.
func exact(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// writeJSON writes v indented, as every -o json of atmlab.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func (c *Calc) String() string {
	switch c.Proto {
	case "udp":
	case "sctp":
		return c.medium() + fmt.Sprintf(" (each message its own DATA chunks of at most %d octets, one to a packet)", SCTPData(c.MTU))
	default:
		return c.medium() + fmt.Sprintf(" (a stream of %d-byte segments: a message's frames and bytes are its share of them)", c.MSS())
	}
	return c.medium()
}

func (c *Calc) medium() string {
	if c.PHY != nil && c.Labels > 0 {
		return fmt.Sprintf("ATM %s (%.1f cells/s), %v, %v, MTU %d, %d MPLS label(s), %s", c.PHY.Name, c.PHY.CellRate(), c.AAL, c.Encap, c.MTU, c.Labels, c.Proto)
	}
	if c.PHY != nil {
		return fmt.Sprintf("ATM %s (%.1f cells/s), %v, %v, MTU %d, %s", c.PHY.Name, c.PHY.CellRate(), c.AAL, c.Encap, c.MTU, c.Proto)
	}
	if c.Labels > 0 {
		return fmt.Sprintf("Ethernet at %v, MTU %d, %d MPLS label(s), %s", c.Rate, c.MTU, c.Labels, c.Proto)
	}
	return fmt.Sprintf("Ethernet at %v, MTU %d, %s", c.Rate, c.MTU, c.Proto)
}

// Ceilings writes the ceiling of each payload size as format says
// (table, json or csv). A size that does not fit is an InputError.
func (c *Calc) Ceilings(w io.Writer, format string, sizes []int) error {
	var rows []Ceiling
	for _, n := range sizes {
		r, err := c.Ceiling(n)
		if err != nil {
			return InputError{err}
		}
		rows = append(rows, r)
	}
	switch format {
	case "json":
		return writeJSON(w, c.jsonOf(rows))
	case "csv":
		return c.csv(w, rows)
	}
	return c.table(w, rows)
}

func (c *Calc) cellsOf(r Ceiling) string {
	if c.PHY == nil {
		return ""
	}
	return FormatCount(c.Cells(r))
}

func (c *Calc) jsonOf(rows []Ceiling) map[string]any {
	out := map[string]any{"mtu": c.MTU, "medium": "ethernet", "rate_bps": int64(c.Rate), "ceilings": rows}
	if c.PHY != nil {
		delete(out, "rate_bps")
		out["medium"], out["phy"], out["aal"], out["encap"], out["cells_per_sec"] = "atm", c.PHY.Name, c.AAL.String(), c.Encap.String(), c.PHY.CellRate()
	}
	return out
}

func (c *Calc) csv(out io.Writer, rows []Ceiling) error {
	w := csv.NewWriter(out)
	w.Write([]string{"rate_bps", "mtu", "proto", "payload_bytes", "frames", "wire_bytes", "efficiency", "goodput_bps", "medium", "cells"})
	medium, rate := "ethernet", int64(c.Rate)
	if c.PHY != nil {
		medium, rate = c.PHY.Name+"/"+c.AAL.String()+"/"+c.Encap.String(), int64(c.PHY.LineRate)
	}
	for _, r := range rows {
		w.Write([]string{strconv.FormatInt(rate, 10), strconv.Itoa(c.MTU), r.Proto, strconv.Itoa(r.Payload), FormatCount(r.Frames),
			FormatCount(r.WireBytes), exact(r.Efficiency), exact(r.Goodput), medium, c.cellsOf(r)})
	}
	w.Flush()
	return w.Error()
}

func (c *Calc) table(out io.Writer, rows []Ceiling) error {
	fmt.Fprintln(out, c)
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', tabwriter.AlignRight)
	if c.PHY != nil {
		fmt.Fprintln(w, "payload B\tpackets\tcells\tline B\tefficiency\tgoodput Mbit/s\t")
		for _, r := range rows {
			fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%.4f\t%.3f\t\n", r.Payload, FormatCount(r.Frames), c.cellsOf(r), FormatCount(r.WireBytes), r.Efficiency, r.Goodput/1e6)
		}
		return w.Flush()
	}
	fmt.Fprintln(w, "payload B\tframes\twire B\tefficiency\tgoodput Mbit/s\t")
	for _, r := range rows {
		fmt.Fprintf(w, "%d\t%s\t%s\t%.4f\t%.3f\t\n", r.Payload, FormatCount(r.Frames), FormatCount(r.WireBytes), r.Efficiency, r.Goodput/1e6)
	}
	return w.Flush()
}

// SawtoothSteps writes the cell steps between two UDP payload sizes
// (sizes: FROM and TO) as format says.
func (c *Calc) SawtoothSteps(out io.Writer, format string, sizes []int) error {
	if c.PHY == nil || len(sizes) != 2 || sizes[0] < 1 || sizes[1] < sizes[0] {
		return InputError{fmt.Errorf("--sawtooth FROM TO: give an ATM --phy and two UDP payload sizes, FROM ≤ TO")}
	}
	steps, err := Sawtooth(*c.PHY, c.AAL, c.Encap, c.MTU, sizes[0], sizes[1])
	if err != nil {
		return InputError{err}
	}
	switch format {
	case "json":
		return writeJSON(out, map[string]any{"phy": c.PHY.Name, "aal": c.AAL.String(), "encap": c.Encap.String(), "mtu": c.MTU, "steps": steps})
	case "csv":
		w := csv.NewWriter(out)
		w.Write([]string{"size_bytes", "cells", "goodput_bps", "next_goodput_bps", "drop"})
		for _, s := range steps {
			w.Write([]string{strconv.Itoa(s.Size), strconv.Itoa(s.Cells), exact(s.Goodput), exact(s.Next), exact(s.Drop)})
		}
		w.Flush()
		return w.Error()
	}
	c.Proto = "udp"
	fmt.Fprintf(out, "sawtooth of %s: the last UDP payload before each extra cell\n", c)
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "payload B\tcells\tgoodput Mbit/s\t+1 byte: cells\tgoodput Mbit/s\tdrop\t")
	for _, s := range steps {
		fmt.Fprintf(w, "%d\t%d\t%.3f\t%d\t%.3f\t%.1f%%\t\n", s.Size, s.Cells, s.Goodput/1e6, s.Cells+1, s.Next/1e6, 100*s.Drop)
	}
	return w.Flush()
}

// ParseSizes reads calc's payload sizes, in bytes.
func ParseSizes(args []string) ([]int, error) {
	var sizes []int
	for _, s := range args {
		n, err := strconv.Atoi(s)
		if err != nil {
			return nil, InputError{fmt.Errorf("payload %q: want a size in bytes", s)}
		}
		sizes = append(sizes, n)
	}
	return sizes, nil
}
