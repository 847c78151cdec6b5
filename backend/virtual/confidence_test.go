package virtual

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/atmlab/atmlab/harness/labrun"
)

// An experiment's confidence: in virtual time: each run of a point is a
// lab seeded apart (PointSeed with the run), so a lossy link loses other
// datagrams in each and the runs differ; the runner repeats the point
// until netperf's rule holds or max runs, and its record holds the mean,
// every run's figure, the width and interval reached and whether it was
// met. The same seed gives the same runs, figures and interval every time.
func TestConfidence(t *testing.T) {
	l := lab(t, strings.Replace(shareLab, `"sw1:p3"], ethernet: {rate: 100M}}`, `"sw1:p3"], ethernet: {rate: 100M}, impair: {loss: 0.5%}}`, 1)+`
experiments:
  - {name: udp, from: h1, to: h3, tests: [UDP_STREAM], sizes: [1472], duration: 300ms, confidence: {level: 95, width: 0.15%}}
  - {name: tcp, from: h1, to: h3, tests: [TCP_STREAM], sizes: [1448], duration: 300ms, confidence: {level: 99, width: 1%, min: 3, max: 4}}
  - {name: once, from: h1, to: h3, tests: [UDP_STREAM], sizes: [1472], duration: 300ms}
`)
	run := func() ([]labrun.Record, []byte) {
		var out bytes.Buffer
		r := &labrun.Runner{Lab: l, JSONL: &out}
		recs, err := Env{lab: l}.Run(context.Background(), r)
		if err != nil || len(recs) != 3 {
			t.Fatalf("%d records, %v", len(recs), err)
		}
		return recs, out.Bytes()
	}
	recs, jsonl := run()
	for _, c := range []struct {
		rec      labrun.Record
		runs     int
		mean     float64
		interval [2]float64
		met      bool
	}{
		// 95 % within 0.15 %: the width reads 0.995, 0.234, 0.235, 0.161,
		// 0.191, 0.160, then 0.135 % after the eighth run.
		{recs[0], 8, 9.526488242026226e+07, [2]float64{9.520064833621986e+07, 9.532911650430466e+07}, true},
		// TCP over a lossy port: the third run lost its start (20.6
		// Mbit/s, the others 87.9-88.0; with netstack's 1 MiB receive
		// buffer instead of Linux's 128 KiB the first lost it, 42.9
		// against 88.2-88.5); 99 % within 1 % is not met in 4.
		{recs[1], 4, 7.113575346799147e+07, [2]float64{-2.7166706711869046e+07, 1.69438213647852e+08}, false},
	} {
		r := c.rec.Result
		k := r.Confidence
		if k == nil {
			t.Fatalf("%s: no confidence in the record", c.rec.Experiment)
		}
		t.Logf("%s: %d runs %v, mean %.6g, width %.4f %%, interval %.6g, met %v", c.rec.Experiment, k.Iterations, k.Values, k.Mean, 100*k.Achieved, *k.Interval, k.Met)
		if k.Iterations != c.runs || len(k.Values) != c.runs || k.Mean != c.mean || *k.Interval != c.interval || k.Met != c.met || r.ThroughputBps != k.Mean {
			t.Errorf("%s: %d runs, mean %v, interval %v, met %v, figure %v; want %d runs, mean %v, interval %v, met %v, figure the mean",
				c.rec.Experiment, k.Iterations, k.Mean, *k.Interval, k.Met, r.ThroughputBps, c.runs, c.mean, c.interval, c.met)
		}
		if k.Values[0] == k.Values[1] {
			t.Errorf("%s: runs 1 and 2 read the same (%v): not seeded apart", c.rec.Experiment, k.Values[0])
		}
	}
	if once := recs[2].Result; once.Confidence != nil {
		t.Errorf("an experiment without confidence: has one: %+v", once.Confidence)
	}
	for _, key := range []string{`"iterations":8`, `"met":true`, `"interval":[`, `"width_achieved":`, `"values":[`} {
		if !bytes.Contains(jsonl, []byte(key)) {
			t.Errorf("results.jsonl lacks %s", key)
		}
	}
	_, again := run()
	if strip(again) != strip(jsonl) {
		t.Error("a second run wrote other records")
	}
}

// strip drops the records' timestamps.
func strip(jsonl []byte) string {
	return regexp.MustCompile(`"at":"[^"]*"`).ReplaceAllString(string(jsonl), "")
}
