package perf

import (
	"context"
	"math"
	"testing"
)

func TestWidth(t *testing.T) {
	// 100, 110, 90: mean 100, population variance 200/3, n = 3 → t95(2) = 4.303.
	want := 2 * 4.303 * math.Sqrt(200.0/3/2) / 100
	if got := Width(95, []float64{100, 110, 90}); math.Abs(got-want) > 1e-12 {
		t.Fatalf("Width = %v, want %v", got, want)
	}
	for _, v := range []float64{5, 25201.61290322581, 9.57038289292569e+07} { // Σv²/n − mean² gave 1.2e-7 for the second, about the mean 2e-15
		if got := Width(99, []float64{v, v, v}); got != 0 {
			t.Fatalf("identical values %v: width %v", v, got)
		}
	}
}

// A fake runner with known values: the loop stops exactly where netperf's
// rule says and reports the width it reached.
func TestIterate(t *testing.T) {
	for _, tc := range []struct {
		name   string
		c      Confidence
		values []float64
		runs   int
		met    bool
	}{
		// Identical results: confident after the minimum of 3.
		{"steady", Confidence{Level: 99, Width: 0.05, Min: 1, Max: 10}, []float64{100, 100, 100, 100}, 3, true},
		// 100, 104, 96 → W = 2·9.925·√(32/3/2)/100 = 0.458 > 5 %; the next
		// values pull it in: after 100,104,96,100,100,100,100 (n = 7,
		// t99(6) = 3.707) W = 2·3.707·√((32/7)/6)/100 = 0.0647; n = 8 gives
		// 2·3.499·√((32/8)/7)/100 = 0.0529; n = 9: 2·3.355·√((32/9)/8)/100 = 0.0447.
		{"converges", Confidence{Level: 99, Width: 0.05, Min: 3, Max: 30}, []float64{100, 104, 96, 100, 100, 100, 100, 100, 100, 100}, 9, true},
		// Never within 1 %: stops at max and says so.
		{"gives up at max", Confidence{Level: 95, Width: 0.01, Min: 3, Max: 5}, []float64{100, 150, 50, 150, 50, 100}, 5, false},
		// max above netperf's 30 is capped.
		{"caps at 30", Confidence{Level: 95, Width: 0.001, Min: 3, Max: 50}, nil, 30, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			r, err := Iterate(context.Background(), tc.c, func(i int) (float64, error) {
				calls++
				if tc.values == nil {
					return float64(100 + i%2*10), nil
				}
				return tc.values[i], nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if r.Iterations != tc.runs || calls != tc.runs || r.Met != tc.met {
				t.Fatalf("ran %d (calls %d), met %v; want %d, %v (widths %v)", r.Iterations, calls, r.Met, tc.runs, tc.met, r.Achieved)
			}
			if want := Width(tc.c.Level, r.Values); r.Achieved != want {
				t.Fatalf("achieved %v, want %v", r.Achieved, want)
			}
			if half := r.Achieved / 2 * r.Mean; r.Interval == nil || r.Interval[0] != r.Mean-half || r.Interval[1] != r.Mean+half {
				t.Fatalf("interval %v around mean %v, want ±%v", r.Interval, r.Mean, half)
			}
		})
	}
	if _, err := Iterate(context.Background(), Confidence{Level: 90, Width: 0.05}, nil); err == nil {
		t.Fatal("level 90 accepted")
	}
}

// Confident keeps the last run's result with the mean as its figure; a
// failed data point ends the iterations and keeps its error, with the
// confidence so far when earlier runs succeeded (and none when it was the
// first).
func TestConfident(t *testing.T) {
	c := Confidence{Level: 95, Width: 0.05, Min: 3, Max: 10}
	run := func(fail int) func(i int) (Result, error) {
		return func(i int) (Result, error) {
			r := Result{Test: TCPRR, TransactionsPerSec: float64(100 + 10*i), Transactions: 1}
			if i == fail {
				r.Error = "timed out"
			}
			return r, nil
		}
	}
	r, err := Confident(context.Background(), c, run(-1))
	// 100, 110, 120: mean 110, W = 2·4.303·√((200/3)/2)/110 = 0.4516 > 5 %,
	// and on: 100..190 (n = 10, t95(9) = 2.262, population variance 825)
	// W = 2·2.262·√(825/9)/145 = 0.2987.
	if err != nil || r.Confidence == nil || r.Confidence.Iterations != 10 || r.Confidence.Met || r.TransactionsPerSec != 145 ||
		math.Abs(r.Confidence.Achieved-2*2.262*math.Sqrt(825.0/9)/145) > 1e-12 {
		t.Fatalf("steady climb: %v %+v", err, r.Confidence)
	}
	r, err = Confident(context.Background(), c, run(2))
	if err != nil || r.Error != "timed out" || r.Confidence == nil || r.Confidence.Iterations != 2 || r.TransactionsPerSec != 105 || r.Confidence.Met {
		t.Fatalf("third run fails: %v %+v %+v", err, r, r.Confidence)
	}
	r, err = Confident(context.Background(), c, run(0))
	if err != nil || r.Error != "timed out" || r.Confidence != nil || r.TransactionsPerSec != 100 {
		t.Fatalf("first run fails: %v %+v", err, r)
	}
	if _, err := RunConfident(context.Background(), "127.0.0.1", 1, Spec{Test: TCPRR}, Confidence{Level: 90, Width: 0.05}); err == nil {
		t.Fatal("RunConfident accepted level 90")
	}
}
