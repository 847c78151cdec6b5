package labrun

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/atmlab/atmlab/harness/clock"
	"github.com/atmlab/atmlab/harness/perf"
	"github.com/atmlab/atmlab/topologies/labfile"
	"github.com/atmlab/atmlab/topologies/study"
)

// virtualCampaign plans campaignLab without --quick (base: 10 points, slow:
// 12) and measures it in virtual time, jobs at a time, each point by f.
func virtualCampaign(t *testing.T, jobs int, f modelFunc) (*Campaign, *strings.Builder, *strings.Builder) {
	t.Helper()
	lab, err := labfile.Parse("c.yaml", []byte(campaignLab))
	if err != nil {
		t.Fatal(err)
	}
	vs, err := Plan(lab, false)
	if err != nil {
		t.Fatal(err)
	}
	var jsonl, log strings.Builder
	c := &Campaign{Variants: vs, Clocks: clock.Choice{clock.Virtual}, JSONL: &jsonl, Log: &log, Out: "out", Jobs: jobs,
		Measure: func(ctx context.Context, _ clock.Clock, r *Runner) (int, error) {
			r.Env = f.env()
			recs, err := r.Run(ctx)
			return len(recs), err
		}}
	return c, &jsonl, &log
}

// sizeFigure is a point's figure: its size.
func sizeFigure(ctx context.Context, p Point, _ *study.Experiment) (perf.Result, *BackgroundLoad, error) {
	return perf.Result{Test: p.Test, ThroughputBps: float64(p.Size) * 1e4}, nil, nil
}

// TestVirtualVariantsOverlapWriteInOrder: with two jobs the next
// variant's points start while the last of the one before still runs (no
// lane idles at a variant's end), and results.jsonl and the log are the
// same, timestamps aside, as one point at a time.
func TestVirtualVariantsOverlapWriteInOrder(t *testing.T) {
	c1, one, log1 := virtualCampaign(t, 1, sizeFigure)
	n1, err := c1.Run(context.Background())
	if err != nil || n1 != 22 {
		t.Fatalf("one at a time: Run() = %d, %v", n1, err)
	}
	// base's last point (size 800, repetition 2) waits until a point of
	// slow has ended: it can only end if slow's points start beside it.
	slowEnded := make(chan struct{})
	var once sync.Once
	var mu sync.Mutex
	var order []string
	c2, two, log2 := virtualCampaign(t, 2, sizeFigure)
	c2.Measure = func(ctx context.Context, _ clock.Clock, r *Runner) (int, error) {
		variant := r.Variant
		r.Env = modelFunc(func(ctx context.Context, p Point, e *study.Experiment) (perf.Result, *BackgroundLoad, error) {
			if variant == "base" && p.Size == 800 && p.Rep == 2 {
				select {
				case <-slowEnded:
				case <-time.After(10 * time.Second):
					return perf.Result{}, nil, errors.New("no point of slow ended beside base's last")
				}
			}
			mu.Lock()
			order = append(order, fmt.Sprintf("%s %d #%d", variant, p.Size, p.Rep))
			mu.Unlock()
			if variant == "slow" {
				once.Do(func() { close(slowEnded) })
			}
			return sizeFigure(ctx, p, e)
		}).env()
		recs, err := r.Run(ctx)
		return len(recs), err
	}
	n2, err := c2.Run(context.Background())
	if err != nil || n2 != 22 {
		t.Fatalf("two at a time: Run() = %d, %v", n2, err)
	}
	if a, b := atField.ReplaceAllString(one.String(), ""), atField.ReplaceAllString(two.String(), ""); a != b {
		t.Errorf("two at a time wrote\n%s\none at a time\n%s", b, a)
	}
	if log1.String() != log2.String() {
		t.Errorf("two at a time logged %q, one at a time %q", log2, log1)
	}
	if i := indexOf(order, "base 800 #2"); i < 0 || i == 0 || !strings.HasPrefix(order[i-1], "slow") {
		t.Errorf("points ended in order %v: base's last should have ended after one of slow's", order)
	}
}

func indexOf(s []string, v string) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}

// TestVirtualVariantsOverlapStopAtFailure: when a variant fails, the run
// returns its error, and what came after it, though measured beside it,
// is not written: the same records as one variant at a time.
func TestVirtualVariantsOverlapStopAtFailure(t *testing.T) {
	lab, err := labfile.Parse("c.yaml", []byte(campaignLab+`  - {name: third, set: [{link: "h1:eth0", rate: 20M}]}
`))
	if err != nil {
		t.Fatal(err)
	}
	vs, err := Plan(lab, false)
	if err != nil {
		t.Fatal(err)
	}
	broken := errors.New("slow's lab went away")
	run := func(jobs int) (string, int, error) {
		var jsonl strings.Builder
		c := &Campaign{Variants: vs, Clocks: clock.Choice{clock.Virtual}, JSONL: &jsonl, Jobs: jobs,
			Measure: func(ctx context.Context, _ clock.Clock, r *Runner) (int, error) {
				r.Env = modelFunc(sizeFigure).env()
				recs, err := r.Run(ctx)
				if err == nil && r.Variant == "slow" {
					err = broken
				}
				return len(recs), err
			}}
		n, err := c.Run(context.Background())
		return atField.ReplaceAllString(jsonl.String(), ""), n, err
	}
	one, n1, err1 := run(1)
	two, n2, err2 := run(2)
	if !errors.Is(err1, broken) || !errors.Is(err2, broken) {
		t.Fatalf("errors %v and %v, want %v", err1, err2, broken)
	}
	if one != two || n1 != n2 || n1 != 22 {
		t.Errorf("two at a time wrote %d records\n%s\none at a time %d\n%s", n2, two, n1, one)
	}
	if strings.Contains(two, `"variant":"third"`) {
		t.Errorf("the variant after the failure was written:\n%s", two)
	}
}
