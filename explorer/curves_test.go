package explorer

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/atmlab/atmlab/emulator/atm"
	"github.com/atmlab/atmlab/harness/labrun"
	"github.com/atmlab/atmlab/harness/perf"
	"github.com/atmlab/atmlab/harness/theory"
	"github.com/atmlab/atmlab/internal/labtest"
	"github.com/atmlab/atmlab/topologies/labfile"
)

// Ticks are round: a step of 1, 2 or 5 times a power of ten, labels with
// no more decimals than the step has, all within the range, about as
// many as asked.
func TestNiceTicksAreRound(t *testing.T) {
	for _, c := range []struct {
		lo, hi float64
		n      int
		want   []string
	}{
		{118.2, 132.465, 5, []string{"120", "122", "124", "126", "128", "130", "132"}},
		{1232, 1712, 6, []string{"1300", "1400", "1500", "1600", "1700"}},
		{0.12, 0.98, 4, []string{"0.2", "0.4", "0.6", "0.8"}},
		{-3, 7, 5, []string{"-2", "0", "2", "4", "6"}},
		{1, 481, 6, []string{"100", "200", "300", "400"}},
	} {
		var got []string
		for _, tk := range NiceTicks(c.lo, c.hi, c.n) {
			got = append(got, tk.Label)
			if tk.Value < c.lo || tk.Value > c.hi {
				t.Errorf("%v..%v: tick %v outside", c.lo, c.hi, tk.Value)
			}
		}
		if strings.Join(got, " ") != strings.Join(c.want, " ") {
			t.Errorf("%v..%v in about %d: ticks %q, want %q", c.lo, c.hi, c.n, got, c.want)
		}
	}
	if NiceTicks(5, 5, 4) != nil || NiceTicks(math.Inf(-1), 5, 4) != nil {
		t.Error("ticks for an empty or infinite range")
	}
}

// The figures' sawtooth axis has round ticks: no label with more decimals
// than its step needs (132.465 was one).
func TestFiguresAxisTicksRound(t *testing.T) {
	f, err := Compute(Query{Size: 1472, MTU: DefaultMTU, EtherMTU: DefaultEtherMTU, Window: DefaultWindow, PHY: atm.PHYs["oc3"]}, "")
	if err != nil {
		t.Fatal(err)
	}
	a := f.Detail.Axis
	if len(a.YTicks) < 3 || len(a.XTicks) < 3 {
		t.Fatalf("axis %+v", a)
	}
	for _, tk := range append(a.YTicks, a.XTicks...) {
		if strings.Contains(tk.Label, ".") {
			t.Errorf("tick %q: this window's ticks are whole Mbit/s and bytes", tk.Label)
		}
	}
	for _, tk := range a.YTicks {
		if tk.Value < a.YMin || tk.Value > a.YMax {
			t.Errorf("tick %v outside %v..%v", tk.Value, a.YMin, a.YMax)
		}
	}
}

// Each variant's measured points come with their own path's ceiling: a
// run of an LLC/SNAP lab and its VC-mux variant gives two curves, the
// VC-mux one of theory for VC-mux (above LLC's at the same size), and each
// point names its own.
func TestEachVariantAgainstItsOwnCurve(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "lab.yaml"), []byte(labtest.Lab("two-hosts-atm", "enc", `variants:
  - name: vcmux
    set:
      - {link: "h1:eth0", encap: vcmux}
`)), 0o644)
	var lines []string
	for _, r := range []labrun.Record{
		{Point: labrun.Point{Variant: "base", Experiment: "e", Test: perf.UDPStream, Size: 1440, From: "h1", To: "h2"}, Result: perf.Result{ThroughputBps: 130e6}},
		{Point: labrun.Point{Variant: "vcmux", Experiment: "e", Test: perf.UDPStream, Size: 1440, From: "h1", To: "h2"}, Result: perf.Result{ThroughputBps: 134e6}},
		{Point: labrun.Point{Variant: "vcmux", Experiment: "e", Test: perf.UDPStream, Size: 1460, From: "h1", To: "h2"}, Result: perf.Result{ThroughputBps: 134e6}},
	} {
		b, _ := json.Marshal(r)
		lines = append(lines, string(b))
	}
	os.WriteFile(filepath.Join(dir, "results.jsonl"), []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	_, body := get(t, Handler(dir), "/figures?size=1440")
	var f Figures
	if err := json.Unmarshal([]byte(body), &f); err != nil {
		t.Fatal(err)
	}
	d := f.Detail
	if len(d.Curves) != 2 {
		t.Fatalf("%d curves, want one for each variant: %+v", len(d.Curves), d.Curves)
	}
	byVariant := map[string]int{}
	for i, c := range d.Curves {
		byVariant[c.Variant] = i
		if len(c.Line) != f.To-f.From+1 {
			t.Errorf("%s's curve has %d points over %d..%d", c.Variant, len(c.Line), f.From, f.To)
		}
	}
	lab, _ := labfile.Load(filepath.Join(dir, "lab.yaml"))
	for _, m := range d.Measured {
		want := byVariant[m.Variant]
		if m.Curve != want {
			t.Errorf("%s's point at %d on curve %d, want its own, %d", m.Variant, m.Size, m.Curve, want)
		}
		vlab, _ := lab.WithVariant(m.Variant)
		c := d.Curves[m.Curve]
		th, _ := theory.PathCeiling(vlab, "h1", "h2", perf.UDPStream, m.Size)
		if got := c.Line[m.Size-f.From]; got.Size != m.Size || got.Goodput != th {
			t.Errorf("%s at %d: curve %+v, theory %v", m.Variant, m.Size, got, th)
		}
	}
	llc, vc := d.Curves[byVariant["base"]], d.Curves[byVariant["vcmux"]]
	// 1450 bytes take 32 cells with LLC/SNAP's 8 octets, 31 without
	if at := 1450 - f.From; !(vc.Line[at].Goodput > 1.03*llc.Line[at].Goodput) {
		t.Errorf("at 1450 VC-mux's ceiling %v is not 3 %% above LLC's %v", vc.Line[at].Goodput, llc.Line[at].Goodput)
	}
	if !strings.Contains(vc.Path, "VC-mux") || !strings.Contains(llc.Path, "LLC/SNAP") {
		t.Errorf("curves named %q and %q", llc.Path, vc.Path)
	}
}
