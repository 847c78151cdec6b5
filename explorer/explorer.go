// Package explorer serves the sawtooth explorer, a teaching page: for a UDP
// payload size, every ATM PHY, AAL and encapsulation's cells, efficiency
// and goodput ceiling, the PDU laid out in cells, the sawtooth's steps
// around the size, and a lab run's measured points over the theory line;
// beside them, Ethernet's frames and ceiling at each common rate.
//
// Every figure comes from harness/theory (the code behind `atmlab calc`)
// as JSON; the page (embedded, plain JavaScript and SVG, nothing from the
// network) only draws them.
package explorer

import (
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"slices"
	"strconv"

	"github.com/atmlab/atmlab/cells"
	"github.com/atmlab/atmlab/emulator/atm"
	"github.com/atmlab/atmlab/emulator/units"
	"github.com/atmlab/atmlab/harness/labrun"
	"github.com/atmlab/atmlab/harness/perf"
	"github.com/atmlab/atmlab/harness/theory"
)

//go:embed static
var static embed.FS

// Defaults of a figures request: ATM's usual MTU (RFC 2225) and Ethernet's,
// the window of sizes around the chosen one that the sawtooth is drawn over.
const (
	DefaultMTU      = 9180
	DefaultEtherMTU = 1500
	DefaultWindow   = 240
	MaxWindow       = 4096
)

// AALs and Encaps are the adaptation layers and encapsulations the page
// shows beside every PHY (atm.PHYNames).
var (
	AALs   = []atm.AAL{atm.AAL5, atm.AAL34}
	Encaps = []cells.Encap{cells.LLC, cells.VCMux}
	// EtherRates are the Ethernet line rates shown beside ATM's.
	EtherRates = []units.BitRate{10 * units.Mbps, 100 * units.Mbps, units.Gbps, 10 * units.Gbps}
)

// EtherRow is an Ethernet rate's figures at the chosen size: the UDP
// message's frames (IP fragments) and its wire octets with 802.3's framing.
type EtherRow struct {
	Rate    int64          `json:"rate_bps"`
	Ceiling theory.Ceiling `json:"ceiling"`
}

// Row is one PHY, AAL and encapsulation's figures at the chosen size.
type Row struct {
	PHY      string         `json:"phy"`
	AAL      string         `json:"aal"`
	Encap    string         `json:"encap"`
	LineRate int64          `json:"line_rate_bps"`
	CellRate float64        `json:"cells_per_sec"`
	Cells    float64        `json:"cells"`
	Ceiling  theory.Ceiling `json:"ceiling"`
}

// Point is one payload size's goodput ceiling on the sawtooth's line.
type Point struct {
	Size    int     `json:"size_bytes"`
	Cells   int     `json:"cells"`
	Goodput float64 `json:"goodput_bps"`
}

// Measured is a lab run's result: what a point's test carried, and the
// ceiling the run set beside it.
type Measured struct {
	Variant    string  `json:"variant"`
	Experiment string  `json:"experiment"`
	Test       string  `json:"test"`
	Size       int     `json:"size_bytes"`
	Throughput float64 `json:"throughput_bps"`
	Ceiling    float64 `json:"ceiling_bps,omitempty"`
	Curve      int     `json:"curve"` // its path's curve in Detail.Curves, -1 if its lab is not known
	rec        int     // its record, while the curves are made
}

// Figures answers a figures request: every row at the size, and the
// selected path in detail.
type Figures struct {
	Size     int        `json:"size_bytes"`
	MTU      int        `json:"mtu"`
	From     int        `json:"from"` // the window the line and steps cover
	To       int        `json:"to"`
	Rows     []Row      `json:"rows"`
	Detail   Detail     `json:"detail"`
	PHYs     []string   `json:"phys"`
	EtherMTU int        `json:"ether_mtu"`
	Ethernet []EtherRow `json:"ethernet"`
}

// Detail is the selected PHY, AAL and encapsulation: the message laid out
// in cells, the sawtooth's steps and line over the window, and the lab
// run's measured points (all of them; the page draws those in the window).
type Detail struct {
	Row
	Packets  []theory.Packet `json:"packets"`
	Steps    []theory.Step   `json:"steps"`
	Line     []Point         `json:"line"`
	Measured []Measured      `json:"measured"`
	Curves   []Curve         `json:"curves"`            // each measured path's ceiling over the window
	Results  string          `json:"results,omitempty"` // the results folder, or why it could not be read
	Axis     Axis            `json:"axis"`              // the sawtooth chart's range and ticks
}

// Query is what a figures request asks: the payload size, the MTU, the
// window and the path shown in detail.
type Query struct {
	Size, MTU, Window int
	EtherMTU          int // the Ethernet rows' MTU
	PHY               atm.PHY
	AAL               atm.AAL
	Encap             cells.Encap
}

// Compute works the figures out for q, and reads the measured points from
// the results folder dir (none when dir is empty).
func Compute(q Query, dir string) (Figures, error) {
	f := Figures{Size: q.Size, MTU: q.MTU, PHYs: atm.PHYNames(), EtherMTU: q.EtherMTU}
	for _, rate := range EtherRates {
		c, err := theory.Path{Rate: rate, MTU: q.EtherMTU, Proto: "udp"}.Ceiling(q.Size)
		if err != nil {
			return f, err
		}
		f.Ethernet = append(f.Ethernet, EtherRow{Rate: int64(rate), Ceiling: c})
	}
	for _, name := range f.PHYs {
		for _, aal := range AALs {
			for _, encap := range Encaps {
				r, err := row(atm.PHYs[name], aal, encap, q.MTU, q.Size)
				if err != nil {
					return f, err
				}
				f.Rows = append(f.Rows, r)
			}
		}
	}
	r, err := row(q.PHY, q.AAL, q.Encap, q.MTU, q.Size)
	if err != nil {
		return f, err
	}
	f.Detail.Row = r
	if f.Detail.Packets, err = theory.Layout(q.PHY, q.AAL, q.Encap, q.MTU, q.Size); err != nil {
		return f, err
	}
	f.From, f.To = max(1, q.Size-q.Window), min(perf.MaxUDPPayload-1, q.Size+q.Window)
	if f.Detail.Steps, err = theory.Sawtooth(q.PHY, q.AAL, q.Encap, q.MTU, f.From, f.To); err != nil {
		return f, err
	}
	path := theory.Path{PHY: &q.PHY, AAL: q.AAL, Encap: q.Encap, MTU: q.MTU, Proto: "udp"}
	for n := f.From; n <= f.To; n++ {
		c, err := path.Ceiling(n)
		if err != nil {
			return f, err
		}
		f.Detail.Line = append(f.Detail.Line, Point{n, int(path.Cells(c)), c.Goodput})
	}
	if f.Detail.Steps == nil {
		f.Detail.Steps = []theory.Step{}
	}
	f.Detail.Measured = []Measured{}
	if dir != "" {
		f.Detail.Results = dir
		recs, err := labrun.ReadRecords(dir)
		if err != nil {
			f.Detail.Results = fmt.Sprintf("%s: %v", dir, err)
		}
		for i, rec := range recs {
			if rec.Error != "" || rec.Result.Error != "" || rec.Result.ThroughputBps <= 0 || rec.Size <= 0 {
				continue
			}
			f.Detail.Measured = append(f.Detail.Measured, Measured{rec.Variant, rec.Experiment, rec.Test, rec.Size, rec.Result.ThroughputBps, rec.Ceiling, -1, i})
		}
		slices.SortStableFunc(f.Detail.Measured, func(a, b Measured) int { return a.Size - b.Size })
		f.Detail.Curves = curves(dir, recs, f.Detail.Measured, f.From, f.To)
	}
	if f.Detail.Curves == nil {
		f.Detail.Curves = []Curve{}
	}
	f.Detail.Axis = axis(&f)
	return f, nil
}

func row(phy atm.PHY, aal atm.AAL, encap cells.Encap, mtu, size int) (Row, error) {
	p := theory.Path{PHY: &phy, AAL: aal, Encap: encap, MTU: mtu, Proto: "udp"}
	c, err := p.Ceiling(size)
	if err != nil {
		return Row{}, err
	}
	return Row{PHY: phy.Name, AAL: aal.String(), Encap: encap.String(), LineRate: int64(phy.LineRate), CellRate: phy.CellRate(), Cells: p.Cells(c), Ceiling: c}, nil
}

// ParseQuery reads a figures request's parameters: size (default 1472),
// mtu (9180), window (240), phy (oc3), aal (aal5), encap (llc), ethmtu
// (1500).
func ParseQuery(get func(string) string) (Query, error) {
	q := Query{Size: 1472, MTU: DefaultMTU, EtherMTU: DefaultEtherMTU, Window: DefaultWindow, PHY: atm.PHYs["oc3"]}
	for _, n := range []struct {
		key      string
		v        *int
		min, max int
		what     string
	}{
		{"size", &q.Size, 1, perf.MaxUDPPayload - 1, "a UDP payload size in bytes"},
		{"mtu", &q.MTU, 68, 65535 - cells.LLCHeader, "an IP MTU in bytes"},
		{"window", &q.Window, 0, MaxWindow, "how many sizes either side to draw"},
		{"ethmtu", &q.EtherMTU, 68, 65535, "an Ethernet IP MTU in bytes"},
	} {
		s := get(n.key)
		if s == "" {
			continue
		}
		v, err := strconv.Atoi(s)
		if err != nil || v < n.min || v > n.max {
			return q, fmt.Errorf("%s %q: want %s from %d to %d", n.key, s, n.what, n.min, n.max)
		}
		*n.v = v
	}
	var err error
	if s := get("phy"); s != "" {
		if q.PHY, err = atm.LookupPHY(s); err != nil {
			return q, err
		}
	}
	if s := get("aal"); s != "" {
		if q.AAL, err = atm.ParseAAL(s); err != nil {
			return q, err
		}
	}
	if s := get("encap"); s != "" {
		if q.Encap, err = cells.ParseEncap(s); err != nil {
			return q, err
		}
	}
	return q, nil
}

// Handler serves the page at / and the figures at /figures (a JSON
// Figures; parameters as ParseQuery reads them), with measured points read
// afresh on every request from the results folder dir (a lab run may still
// be adding to it; none when empty). All URLs are relative: mount it under
// a prefix with http.StripPrefix, e.g. at /explorer/.
func Handler(dir string) http.Handler {
	mux := http.NewServeMux()
	sub, _ := fs.Sub(static, "static")
	mux.Handle("GET /", http.FileServerFS(sub))
	mux.HandleFunc("GET /figures", func(w http.ResponseWriter, r *http.Request) {
		q, err := ParseQuery(r.URL.Query().Get)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		f, err := Compute(q, dir)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		json.NewEncoder(w).Encode(f)
	})
	return mux
}

// CheckResults reports whether dir is a results folder the explorer can
// read, with the fix when it is not.
func CheckResults(dir string) error {
	if _, err := os.Stat(dir + "/results.jsonl"); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("--results %s: no results.jsonl there; give the folder `atmlab lab run` wrote", dir)
		}
		return fmt.Errorf("--results %s: %w", dir, err)
	}
	if _, err := labrun.ReadRecords(dir); err != nil {
		return fmt.Errorf("--results %s: %w", dir, err)
	}
	return nil
}
