package labrun

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/atmlab/atmlab/harness/clock"
	"github.com/atmlab/atmlab/topologies"
)

// Start is a lab run as its command gives it, up to measuring: the lab
// file and its planned variants, the clocks, the shard and the results
// folder.
type Start struct {
	File          string // the lab file, as given
	Lab           *topologies.Lab
	Variants      []Variant // Plan's
	Clocks        clock.Choice
	Shard         Shard
	Quick         bool
	Append, Force bool
	Out           string // the results folder; "": results/<lab>-<time>
	Jobs          int    // virtual points measured at once
	Progress, Log io.Writer
}

// Begin opens the run's results folder, writes its inputs (Output) and
// returns the campaign that measures into it, its identity written to
// campaign.json. The caller sets the campaign's Measure (and Watch), runs
// it, and closes the output.
func (s Start) Begin(ctx context.Context) (*Output, *Campaign, error) {
	out := s.Out
	if out == "" {
		out = filepath.Join("results", s.Lab.Name+"-"+time.Now().Format("20060102-150405"))
	}
	src, err := os.ReadFile(s.File)
	if err != nil {
		return nil, nil, err
	}
	id := NewIdentity(s.Lab, src, s.Clocks.String(), s.Quick, s.Shard)
	o, err := OpenOutput(ctx, out, s.Append, s.Force, id)
	if err != nil {
		return nil, nil, err
	}
	camp, err := s.campaign(o, src, id, out)
	if err != nil {
		o.Close()
		return nil, nil, err
	}
	return o, camp, nil
}

// campaign writes the run's inputs, opens its records and makes its
// campaign.
func (s Start) campaign(o *Output, src []byte, id Identity, out string) (*Campaign, error) {
	if err := o.WriteInputs(s.File, src, s.Lab, s.Variants, s.Quick); err != nil {
		return nil, err
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	if err := o.Records(); err != nil {
		return nil, err
	}
	camp := &Campaign{Variants: s.Variants, Clocks: s.Clocks, Shard: s.Shard, Done: o.Done, Self: self, JSONL: o.JSONL, CSV: o.CSV,
		Progress: s.Progress, Log: s.Log, Out: out, Jobs: s.Jobs}
	id.Points = camp.Points()
	return camp, WriteIdentity(o.Dir, id)
}
