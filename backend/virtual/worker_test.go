package virtual

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/atmlab/atmlab/harness/labrun"
)

// workerLab is a 100M lab with a base and a 10M variant and three short
// points each.
var workerLab = etherLabPlain + `experiments:
  - {name: s, from: h1, to: h2, tests: [TCP_STREAM, UDP_STREAM, TCP_RR], sizes: [1460], duration: 200ms}
variants:
  - {name: slow, set: [{link: "h1:eth0", rate: 10M}]}
`

var etherLabPlain = fmt.Sprintf(etherLab, "100M")

// inProcess starts workers that serve Work over pipes in this process.
func inProcess(t *testing.T, variants []labrun.Variant, n int) (*Workers, *int) {
	started := 0
	return newWorkers(n, func() (*worker, error) {
		started++
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		go func() {
			err := Work(context.Background(), variants, inR, outW)
			outW.CloseWithError(err)
		}()
		return &worker{in: inW, enc: json.NewEncoder(inW), dec: json.NewDecoder(outR)}, nil
	}), &started
}

// TestPointWorkersRecordAsHere: a point measured on a worker records the
// same as one measured in this process, in each variant, and no more
// workers start than the run's jobs.
func TestPointWorkersRecordAsHere(t *testing.T) {
	l := lab(t, workerLab)
	variants, err := labrun.Plan(l, false)
	if err != nil {
		t.Fatal(err)
	}
	ws, started := inProcess(t, variants, 2)
	defer ws.Close()
	for _, v := range variants {
		env := Env{lab: v.Lab}
		for _, p := range labrun.Points(v.Lab) {
			p.Variant = v.Name
			var here, there labrun.Record
			env.Measure(context.Background(), nil, p, v.Lab.Experiments[0], &here)
			env.With(ws, v.Name).Measure(context.Background(), nil, p, v.Lab.Experiments[0], &there)
			a, _ := json.Marshal(here)
			b, _ := json.Marshal(there)
			if string(a) != string(b) {
				t.Errorf("%s %s: on a worker\n%s\nhere\n%s", v.Name, p.Test, b, a)
			}
			if here.Result.ThroughputBps == 0 && here.Result.TransactionsPerSec == 0 {
				t.Errorf("%s %s measured nothing: %+v", v.Name, p.Test, here)
			}
		}
	}
	if *started != 1 {
		t.Errorf("%d workers started for points one at a time, want 1", *started)
	}
}

// TestPointWorkerUnknownVariant: a point of a variant the worker's plan
// lacks records the worker's words as its error.
func TestPointWorkerUnknownVariant(t *testing.T) {
	l := lab(t, workerLab)
	variants, err := labrun.Plan(l, false)
	if err != nil {
		t.Fatal(err)
	}
	ws, _ := inProcess(t, variants, 1)
	defer ws.Close()
	var rec labrun.Record
	p := labrun.Points(l)[0]
	Env{lab: l}.With(ws, "fast").Measure(context.Background(), nil, p, l.Experiments[0], &rec)
	if !strings.Contains(rec.Error, `no experiment "s" in variant "fast"`) {
		t.Errorf("error %q", rec.Error)
	}
}

// TestPointWorkerRefusesALabThatChanged: a worker plans the lab file
// again; if the file changed since the run planned it, the worker
// measures nothing and the point's error says why.
func TestPointWorkerRefusesALabThatChanged(t *testing.T) {
	run := lab(t, workerLab)
	changed := lab(t, strings.Replace(workerLab, "100M", "10M", 1))
	ranVariants, err := labrun.Plan(run, false)
	if err != nil {
		t.Fatal(err)
	}
	workerVariants, err := labrun.Plan(changed, false)
	if err != nil {
		t.Fatal(err)
	}
	ws, _ := inProcess(t, workerVariants, 1)
	defer ws.Close()
	var rec labrun.Record
	p := labrun.Points(run)[0]
	Env{lab: ranVariants[0].Lab}.With(ws, ranVariants[0].Name).Measure(context.Background(), nil, p, run.Experiments[0], &rec)
	if !strings.Contains(rec.Error, "did the lab file change since the run began") || rec.Result.ThroughputBps != 0 {
		t.Errorf("a worker whose lab file changed: error %q, result %+v", rec.Error, rec.Result)
	}
}
