package perf

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
)

// Confidence is netperf's -I LEVEL,WIDTH with -i MAX,MIN: repeat whole runs
// until the confidence interval at Level % is no wider than Width (a
// fraction of the mean, full width), at least Min and at most Max runs.
type Confidence struct {
	Level int     `json:"level"` // 95 or 99
	Width float64 `json:"width"` // requested full width, fraction of the mean (0.05 = ±2.5 %)
	Min   int     `json:"min_iterations"`
	Max   int     `json:"max_iterations"`
}

// Normalize applies netperf's limits: min at least 3, max at most 30.
func (c *Confidence) Normalize() error {
	if c.Level != 95 && c.Level != 99 {
		return fmt.Errorf("confidence level %d: use 95 or 99", c.Level)
	}
	if c.Width <= 0 || c.Width >= 1 {
		return fmt.Errorf("confidence width %.1f%%: use a percentage between 0 and 100", 100*c.Width)
	}
	c.Min = max(c.Min, 3)
	c.Max = min(max(c.Max, c.Min), 30)
	return nil
}

// ConfidenceResult is what the iterations reached.
type ConfidenceResult struct {
	Confidence
	Iterations int       `json:"iterations"`
	Values     []float64 `json:"values"`
	Mean       float64   `json:"mean"`
	Achieved   float64   `json:"width_achieved"` // full width reached, fraction of the mean; 0 with fewer than 2 values
	// Interval is the confidence interval at Level, in the figure's
	// units (bit/s or transactions/s): Mean ± Achieved/2 of it; absent
	// with fewer than 2 values.
	Interval *[2]float64 `json:"interval,omitempty"`
	Met      bool        `json:"met"`
}

// student holds two-sided Student t quantiles for 1..30 degrees of freedom.
var student = map[int][30]float64{
	95: {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
		2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042},
	99: {63.657, 9.925, 5.841, 4.604, 4.032, 3.707, 3.499, 3.355, 3.250, 3.169, 3.106, 3.055, 3.012, 2.977, 2.947,
		2.921, 2.898, 2.878, 2.861, 2.845, 2.831, 2.819, 2.807, 2.797, 2.787, 2.779, 2.771, 2.763, 2.756, 2.750},
}

// Width returns netperf's achieved full relative width of values at level:
// 2·t(level, n−1)·√(var/(n−1)) / mean, var the population variance.
func Width(level int, values []float64) float64 {
	n := len(values)
	if n < 2 {
		return math.Inf(1)
	}
	// Moments about the first value: identical values give exactly 0,
	// where Σv²/n − mean² left a rounding residue (1.2e-7 of 25201.6/s).
	var sum, dsum, dsq float64
	for _, v := range values {
		d := v - values[0]
		sum += v
		dsum += d
		dsq += d * d
	}
	mean := sum / float64(n)
	dmean := dsum / float64(n)
	variance := max(dsq/float64(n)-dmean*dmean, 0)
	if mean == 0 {
		return math.Inf(1)
	}
	return 2 * student[level][min(n-1, 30)-1] * math.Sqrt(variance/float64(n-1)) / math.Abs(mean)
}

// Iterate runs fn (one whole test, returning its main figure) until the
// confidence is reached, as netperf does; the result's Mean is what
// netperf prints. An error from fn ends the iterations: the result then
// holds the values before it.
func Iterate(ctx context.Context, c Confidence, fn func(i int) (float64, error)) (ConfidenceResult, error) {
	it, err := c.Iterations()
	if err != nil {
		return ConfidenceResult{}, err
	}
	for i, ok := it.Next(ctx); ok; i, ok = it.Next(ctx) {
		it.Add(fn(i))
	}
	return it.Result(ctx)
}

// Iterations is Iterate as a loop its caller drives, so that whoever
// runs the tests (a runtime) calls down into perf and never the reverse:
// Next gives each iteration's number, Add takes its figure, Result what
// they reached.
type Iterations struct {
	r    ConfidenceResult
	err  error
	done bool
}

// Iterations starts the iterations of c (normalized first).
func (c Confidence) Iterations() (*Iterations, error) {
	if err := c.Normalize(); err != nil {
		return nil, err
	}
	return &Iterations{r: ConfidenceResult{Confidence: c, Achieved: math.Inf(1)}}, nil
}

// Next returns the number of the next iteration, or false when the
// confidence is reached, an iteration failed, Max ran or ctx ended.
func (it *Iterations) Next(ctx context.Context) (int, bool) {
	return it.r.Iterations, !it.done && it.r.Iterations < it.r.Max && ctx.Err() == nil
}

// Add records an iteration's figure; an error ends the iterations.
func (it *Iterations) Add(v float64, err error) {
	if err != nil {
		it.err, it.done = err, true
		return
	}
	r := &it.r
	r.Values = append(r.Values, v)
	r.Iterations++
	r.Achieved = Width(r.Level, r.Values)
	if r.Iterations >= r.Min && r.Achieved <= r.Width {
		r.Met, it.done = true, true
	}
}

// Result is what the iterations reached: their mean, the width achieved
// and its interval; the error that ended them, or ctx's.
func (it *Iterations) Result(ctx context.Context) (ConfidenceResult, error) {
	r := it.r
	var sum float64
	for _, v := range r.Values {
		sum += v
	}
	if r.Iterations > 0 {
		r.Mean = sum / float64(r.Iterations)
	}
	if math.IsInf(r.Achieved, 0) { // fewer than two values, or a zero mean: no interval
		r.Achieved = 0
	} else {
		half := r.Achieved / 2 * math.Abs(r.Mean)
		r.Interval = &[2]float64{r.Mean - half, r.Mean + half}
	}
	return r, cmp.Or(ctx.Err(), it.err)
}

// Figure is a result's main figure: throughput for stream tests,
// transactions per second for request/response tests.
func (r *Result) Figure() float64 {
	if r.Transactions > 0 || r.Test == TCPRR || r.Test == UDPRR || r.Test == TCPCRR {
		return r.TransactionsPerSec
	}
	return r.ThroughputBps
}

// setFigure replaces the main figure (with the iterations' mean).
func (r *Result) setFigure(v float64) {
	if r.Test == TCPRR || r.Test == UDPRR || r.Test == TCPCRR {
		r.TransactionsPerSec = v
		return
	}
	r.ThroughputBps = v
}

// Confident repeats whole runs of one test (run(i) is iteration i, from
// 0) as netperf's -I/-i do and returns the last run's result with its main
// figure replaced by the iterations' mean and the confidence reached. A
// run whose result says it failed (Result.Error) ends the iterations: its
// result is returned with that error, and with the confidence so far when
// earlier runs succeeded.
func Confident(ctx context.Context, c Confidence, run func(i int) (Result, error)) (Result, error) {
	rs, err := c.Runs()
	if err != nil {
		return Result{}, err
	}
	for i, ok := rs.Next(ctx); ok; i, ok = rs.Next(ctx) {
		rs.Add(run(i))
	}
	return rs.Result(ctx)
}

// Runs is Confident as a loop its caller drives (Next, Add, Result, as
// Iterations).
type Runs struct {
	it   *Iterations
	last Result
}

// errFailed ends the iterations at a run whose result says it failed.
var errFailed = errors.New("data point failed")

// Runs starts the runs of c (normalized first).
func (c Confidence) Runs() (*Runs, error) {
	it, err := c.Iterations()
	return &Runs{it: it}, err
}

// Next returns the number of the next run, or false when they are done.
func (rs *Runs) Next(ctx context.Context) (int, bool) { return rs.it.Next(ctx) }

// Add records a run's result; a failed one ends the runs.
func (rs *Runs) Add(res Result, err error) {
	rs.last = res
	if err == nil && res.Error != "" {
		err = errFailed
	}
	rs.it.Add(res.Figure(), err)
}

// Result is the last run's result with the runs' mean as its figure and
// the confidence reached.
func (rs *Runs) Result(ctx context.Context) (Result, error) {
	cr, err := rs.it.Result(ctx)
	if errors.Is(err, errFailed) {
		err = nil
	}
	last := rs.last
	if cr.Iterations == 0 {
		return last, err
	}
	last.setFigure(cr.Mean)
	last.Confidence = &cr
	return last, err
}

// RunConfident is Confident over Run: atmlab perf client -I.
func RunConfident(ctx context.Context, host string, port int, spec Spec, c Confidence) (Result, error) {
	res, err := Confident(ctx, c, func(int) (Result, error) { return Run(ctx, host, port, spec) })
	if err == nil && res.Error != "" {
		err = fmt.Errorf("%s", res.Error)
	}
	return res, err
}
