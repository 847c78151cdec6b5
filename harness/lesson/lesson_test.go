package lesson

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/atmlab/atmlab/cells"
	"github.com/atmlab/atmlab/emulator/atm/phy"
	"github.com/atmlab/atmlab/harness/labrun"
	"github.com/atmlab/atmlab/harness/perf"
	"github.com/atmlab/atmlab/harness/theory"
	"github.com/atmlab/atmlab/topologies/labfile"
)

// measured485 and measured484 are what the fixture student's lab run
// measured (Mbit/s): a little under the ceilings, as a real run is.
const measured485, measured484 = 112.9, 122.7

// writeResults writes a results folder with labrun's records of the test
// lab's points, goodputs in Mbit/s by size.
func writeResults(t testing.TB, dir string, goodput map[int]float64) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for size, mbps := range goodput {
		from, to, exp := "h1", "h2", "sawtooth"
		if size == 1472 {
			from, to, exp = "h3", "h4", "ethernet"
		}
		r := labrun.Record{
			Point:  labrun.Point{Variant: "base", Experiment: exp, Tool: "atmlab", Test: perf.UDPStream, Size: size, From: from, To: to},
			Result: perf.Result{Test: perf.UDPStream, ThroughputBps: mbps * 1e6, Elapsed: 2},
			Clock:  "virtual", At: "2026-12-05T00:00:00Z",
		}
		line, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(append(line, '\n'))
	}
	if err := os.WriteFile(filepath.Join(dir, labrun.RecordsFile), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// rightAnswers are a worksheet's answers that are all right.
var rightAnswers = map[string]string{
	"q1": "114.2 Mbit/s",
	"q2": "12 cells",
	"q3": "124.33",
	"q4": "116.09 Mbit/s",
	"q5": fmt.Sprint(measured485, " Mbit/s"),
	"q6": "95.7 Mbit/s",
	"q7": `"485 octets and the 8-octet trailer, the LLC header and the IP/UDP headers make 529 octets: one more than 11 cells of 48 hold"`,
}

// worksheet writes a worksheet with answers (rightAnswers, changed by
// change) into dir beside a results folder and returns its path.
func worksheet(t testing.TB, dir, student string, change map[string]string) string {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "lesson: sawtooth-test\nstudent: %q\nresults: results/\nanswers:\n", student)
	for _, id := range []string{"q1", "q2", "q3", "q4", "q5", "q6", "q7"} {
		a, ok := change[id]
		if !ok {
			a = rightAnswers[id]
		}
		if a != "-" {
			fmt.Fprintf(&b, "  %s: %s\n", id, a)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(dir, "worksheet.yaml")
	if err := os.WriteFile(f, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

func checkOne(t *testing.T, change map[string]string) map[string]Verdict {
	t.Helper()
	dir := t.TempDir()
	writeResults(t, filepath.Join(dir, "results"), map[int]float64{485: measured485, 484: measured484, 1472: 95.6})
	r, err := CheckFile(worksheet(t, dir, "Ada", change), Options{Lesson: "testdata/lesson.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]Verdict{}
	for _, v := range r.Verdicts {
		out[v.ID] = v
		t.Log(v)
	}
	return out
}

func TestRightAnswersAreAllRight(t *testing.T) {
	for id, v := range checkOne(t, nil) {
		if !v.Right {
			t.Errorf("%s: %v, want right", id, v)
		}
	}
}

// wrongWith checks that question id's answer is wrong for a reason that
// says each of says, and none of not.
func wrongWith(t *testing.T, answer map[string]string, id string, says []string, not ...string) {
	t.Helper()
	v := checkOne(t, answer)[id]
	if v.Right {
		t.Fatalf("%s: %v, want wrong", id, v)
	}
	for _, s := range says {
		if !strings.Contains(v.Reason, s) {
			t.Errorf("%s: reason %q, want it to say %q", id, v.Reason, s)
		}
	}
	for _, s := range not {
		if strings.Contains(v.Reason, s) {
			t.Errorf("%s: reason %q should not say %q", id, v.Reason, s)
		}
	}
}

// Without the trailer a 493-octet datagram fits 11 cells on VC-mux: 126.64
// Mbit/s instead of 116.09.
func TestPredictionWithoutTrailerIsNamed(t *testing.T) {
	wrongWith(t, map[string]string{"q4": "126.6 Mbit/s"}, "q4", []string{"AAL5 trailer"}, "LLC")
}

// Without the LLC/SNAP header 485 octets fit 11 cells: 124.59 Mbit/s. The
// trailer is 8 octets too, so both slips give that figure and are named.
func TestPredictionWithoutLLCHeaderIsNamed(t *testing.T) {
	wrongWith(t, map[string]string{"q1": "124.59 Mbit/s"}, "q1", []string{"LLC/SNAP header", "124.59"})
}

// 114.2 Mbit/s is 13.61 MiB/s: the number in MiB/s, the unit Mbit/s.
func TestUnitSlipMbitMiBIsNamed(t *testing.T) {
	wrongWith(t, map[string]string{"q1": "13.61 Mbit/s"}, "q1", []string{"Mbit vs MiB", "MiB/s"})
	wrongWith(t, map[string]string{"q1": "14.27 Mbit/s"}, "q1", []string{"bits vs bytes", "MB/s"})
}

func TestPredictionOtherSlipsAreNamed(t *testing.T) {
	// 12 cells of 48 octets, the header not counted: 149.76*485/576.
	wrongWith(t, map[string]string{"q1": "126.1 Mbit/s"}, "q1", []string{"53-octet cell as 48"})
	// SONET's 155.52 Mbit/s for the cells' rate.
	wrongWith(t, map[string]string{"q1": "118.6 Mbit/s"}, "q1", []string{"SONET/SDH line rate"})
	// 1472 octets of 1538: without preamble and gap, 1518.
	wrongWith(t, map[string]string{"q6": "96.97 Mbit/s"}, "q6", []string{"preamble and inter-frame gap"})
	wrongWith(t, map[string]string{"q2": "11 cells"}, "q2", []string{"8-octet"})
	wrongWith(t, map[string]string{"q1": "100 Mbit/s"}, "q1", []string{"none of the usual slips"})
}

// The handout's example figure is not what the student measured.
func TestMeasurementCopiedFromHandoutIsWrong(t *testing.T) {
	wrongWith(t, map[string]string{"q5": "101.3 Mbit/s"}, "q5", []string{"handout's example", "112.9"})
	wrongWith(t, map[string]string{"q5": "114.2 Mbit/s"}, "q5", []string{"theory's ceiling", "112.9"})
}

func TestUnansweredAndExplanationWithoutKeywordsAreWrong(t *testing.T) {
	wrongWith(t, map[string]string{"q3": "-"}, "q3", []string{"not answered"})
	wrongWith(t, map[string]string{"q7": `"it is just bigger"`}, "q7", []string{"trailer or 8", "cell or 48"})
	wrongWith(t, map[string]string{"q2": "12 octets"}, "q2", []string{"asks for cells"})
}

func TestMeasurementWithoutResultsIsWrongNotAnError(t *testing.T) {
	dir := t.TempDir()
	r, err := CheckFile(worksheet(t, dir, "Bo", nil), Options{Lesson: "testdata/lesson.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range r.Verdicts {
		if v.ID == "q5" && (v.Right || !strings.Contains(v.Reason, "no results")) {
			t.Errorf("%v: want wrong for want of results", v)
		}
	}
}

// The model the slips change gives, unchanged, theory.PathCeiling's
// figures: the ceilings lab run records and atmlab calc prints.
func TestFiguresWithoutSlipAreTheCeilings(t *testing.T) {
	l, err := Load("testdata/lesson.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, variant := range []string{"base", "vcmux"} {
		lab, err := l.Lab.WithVariant(variant)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []Point{{"h1", "h2", perf.UDPStream, 1, -1}, {"h1", "h2", perf.UDPStream, 484, -1}, {"h1", "h2", perf.UDPStream, 485, -1},
			{"h1", "h2", perf.UDPStream, 20000, -1}, {"h1", "h2", perf.TCPStream, 1000, -1}, {"h3", "h4", perf.UDPStream, 1, -1},
			{"h3", "h4", perf.UDPStream, 1472, -1}, {"h3", "h4", perf.UDPStream, 3000, -1}, {"h3", "h4", perf.TCPStream, 128, -1}} {
			want, ok := theory.PathCeiling(lab, p.From, p.To, p.Test, p.Size)
			// a named slip that changes nothing works the figure out by
			// the model the slips change, not by theory.PathCeiling
			got, err := Expected(lab, &Question{Point: p, Quantity: "goodput"}, slip{name: "none"})
			if !ok || err != nil || math.Abs(got-want) > 1e-12*want {
				t.Errorf("%s %s: %v (%v), theory %v", variant, p, got, err, want)
			}
		}
	}
}

func TestCellsAndPadding(t *testing.T) {
	l, err := Load("testdata/lesson.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		size     int
		quantity string
		want     float64
	}{
		{484, "cells_per_pdu", 11}, {485, "cells_per_pdu", 12}, {484, "padding_octets", 0}, {485, "padding_octets", 47},
		{485, "pdu_octets", 576},
	} {
		got, err := Expected(l.Lab, &Question{Point: Point{"h1", "h2", perf.UDPStream, c.size, -1}, Quantity: c.quantity}, slip{})
		if err != nil || got != c.want {
			t.Errorf("%s at %d: %v (%v), want %v", c.quantity, c.size, got, err, c.want)
		}
	}
	// and as theory.Layout lays a datagram out in cells
	for _, size := range []int{1, 484, 485, 1000, 9152, 9153, 20000} {
		pkts, err := theory.Layout(phy.PHYs["oc3"], cells.AAL5, cells.LLC, 9180, size)
		if err != nil {
			t.Fatal(err)
		}
		n, pad := 0, 0
		for _, p := range pkts {
			n += len(p.Cells)
			for _, c := range p.Cells {
				for _, part := range c {
					if part.Kind == "pad" {
						pad += part.Bytes
					}
				}
			}
		}
		q := &Question{Point: Point{"h1", "h2", perf.UDPStream, size, -1}}
		q.Quantity = "cells_per_pdu"
		gotN, _ := Expected(l.Lab, q, slip{})
		q.Quantity = "padding_octets"
		gotPad, _ := Expected(l.Lab, q, slip{})
		if gotN != float64(n) || gotPad != float64(pad) {
			t.Errorf("%d octets: %v cells, %v padding; theory.Layout %d, %d", size, gotN, gotPad, n, pad)
		}
	}
}

// A round trip is every hop's delay both ways and each packet's time on
// every link; the bandwidth-delay product the slowest link's rate times
// the delays' round trip.
func TestRoundTripAndBandwidthDelayProduct(t *testing.T) {
	l, err := Load("testdata/lesson.yaml")
	if err != nil {
		t.Fatal(err)
	}
	lab, err := l.Lab.WithVariant("far")
	if err != nil {
		t.Fatal(err)
	}
	rr := Point{"h3", "h4", perf.TCPRR, 1, -1}
	// a 53-octet IP packet: a 67-octet frame, 91 octet times at 100 Mbit/s,
	// on two links both ways
	serial := 4 * 91 * 8 / 100e6
	for _, c := range []struct {
		quantity string
		p        Point
		s        slip
		want     float64
	}{
		{"rtt", rr, slip{}, 0.040 + serial},
		{"rtt", rr, slip{oneWay: true}, (0.040 + serial) / 2},
		{"transactions_per_s", rr, slip{}, 1 / (0.040 + serial)},
		{"bdp_octets", Point{"h3", "h4", perf.TCPStream, 1448, -1}, slip{}, 100e6 * 0.040 / 8},
	} {
		got, err := Expected(lab, &Question{Point: c.p, Quantity: c.quantity}, c.s)
		if err != nil || math.Abs(got-c.want) > 1e-9*c.want {
			t.Errorf("%s: %v (%v), want %v", c.quantity, got, err, c.want)
		}
	}
	q := &Question{ID: "q", Kind: Prediction, Point: rr, Variant: "far", Quantity: "rtt", Unit: "ms", Tol: Tolerance{Percent: 1}}
	if r := predictionSlip(lab, q, 0.020); !strings.Contains(r, "one way") {
		t.Errorf("20 ms for a 40 ms round trip: %q", r)
	}
}

// An 18-octet datagram's frame is 64 octets bare and 68 with a label: a
// goodput of 21.43 Mbit/s for 20.45 leaves the label out (or the FCS,
// which is as long: both are named).
func TestPredictionWithoutMPLSLabelIsNamed(t *testing.T) {
	lab, err := labfile.Load("testdata/mpls.yaml")
	if err != nil {
		t.Fatal(err)
	}
	q := &Question{ID: "q", Kind: Prediction, Point: Point{"h1", "h2", perf.UDPStream, 18, -1}, Quantity: "goodput", Unit: "Mbit/s", Tol: Tolerance{Percent: 0.5}}
	if got, err := Expected(lab, q, slip{}); err != nil || math.Abs(got-100e6*18/88) > 1 {
		t.Errorf("ceiling %v (%v), want %v", got, err, 100e6*18/88)
	}
	if r := predictionSlip(lab, q, 21.43e6); !strings.Contains(r, "MPLS label") {
		t.Errorf("21.43 Mbit/s: %q, want the label named", r)
	}
}

// A worksheet names its lesson; check finds it in lessons/NN-NAME.
func TestFindLessonInLessonsFolder(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	os.MkdirAll("lessons/02-sawtooth-test", 0o755)
	os.WriteFile("lessons/02-sawtooth-test/lesson.yaml", []byte("lesson: sawtooth-test\n"), 0o644)
	got, err := FindLesson("sawtooth-test", filepath.Join(dir, "elsewhere", "worksheet.yaml"))
	if err != nil || got != filepath.Join("lessons", "02-sawtooth-test", "lesson.yaml") {
		t.Errorf("found %q (%v)", got, err)
	}
	if _, err := FindLesson("nothing-here", "w.yaml"); err == nil || !strings.Contains(err.Error(), "--lesson FILE") {
		t.Errorf("missing lesson: %v", err)
	}
}
