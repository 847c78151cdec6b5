package virtual

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/atmlab/atmlab/harness/labrun"
	"github.com/atmlab/atmlab/harness/perf"
	"github.com/atmlab/atmlab/internal/labtest"
	"github.com/atmlab/atmlab/topologies/study"
)

// A split lab's point measured with each part on a goroutine of its own
// gives the bytes the lab run whole on one scheduler gives: a stream in
// one half with a load in the other, each way and for UDP, and a stream
// across the cut (which runs whole).
func TestSplitPointEqualsWhole(t *testing.T) {
	l := lab(t, labtest.Lab("split-two-switches", "s"))
	for _, tc := range []struct {
		p  labrun.Point
		bg *study.Background
	}{
		{labrun.Point{Test: perf.TCPStream, Size: 1448, From: "h1", To: "h2", Rep: 1}, &study.Background{From: "h3", To: "h4", Test: perf.TCPStream, Size: 1448}},
		{labrun.Point{Test: perf.UDPStream, Size: 1472, From: "h4", To: "h3", Rep: 1}, &study.Background{From: "h2", To: "h1", Test: perf.TCPStream, Size: 1448}},
		{labrun.Point{Test: perf.TCPRR, Size: 1, From: "h2", To: "h1", Rep: 1}, nil},
		{labrun.Point{Test: perf.TCPStream, Size: 1448, From: "h1", To: "h3", Rep: 1}, nil},
	} {
		e := &study.Experiment{Duration: 300 * time.Millisecond, Interval: 100 * time.Millisecond, Background: tc.bg}
		pl, err := buildPoint(l, 1, Auto, tc.p, tc.bg, nil)
		if err != nil {
			t.Fatal(err)
		}
		if across := tc.p.From == "h1" && tc.p.To == "h3"; (pl.split == nil) != across {
			t.Errorf("%s-%s: split %v, want %v", tc.p.From, tc.p.To, pl.split != nil, !across)
		}
		pl.close()
		got := map[Mode]string{}
		for _, mode := range []Mode{Whole, Auto} {
			res, load, err := MeasureSplit(context.Background(), l, tc.p, e, mode)
			if err != nil {
				t.Fatalf("%s %s-%s %q: %v", tc.p.Test, tc.p.From, tc.p.To, mode, err)
			}
			b, _ := json.Marshal(struct {
				R perf.Result
				L *labrun.BackgroundLoad
			}{res, load})
			got[mode] = string(b)
		}
		if got[Whole] != got[Auto] {
			t.Errorf("%s %s-%s: split\n%s\nwhole\n%s", tc.p.Test, tc.p.From, tc.p.To, got[Auto], got[Whole])
		}
	}
}

// BenchmarkSplitHalves: a 1-s 100M TCP stream in one half of a split lab
// with a TCP load in the other, whole (one scheduler) and split (a part a
// goroutine, GOMAXPROCS 2): wall seconds per point, what the split saves
// on two cores (scripts/split-bench.sh times whole lab runs).
func BenchmarkSplitHalves(b *testing.B) {
	l := lab(b, labtest.Lab("split-two-switches", "s"))
	p := labrun.Point{Test: perf.TCPStream, Size: 1448, From: "h1", To: "h2", Rep: 1}
	e := &study.Experiment{Duration: time.Second, Background: &study.Background{From: "h3", To: "h4", Test: perf.TCPStream, Size: 1448}}
	for _, mode := range []Mode{Whole, Auto} {
		name := map[Mode]string{Whole: "whole", Auto: "split"}[mode]
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if _, _, err := MeasureSplit(context.Background(), l, p, e, mode); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
