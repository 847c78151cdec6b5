package labrun

import (
	"bytes"
	"cmp"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/atmlab/atmlab/harness/clock"
	"github.com/atmlab/atmlab/harness/results"
	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/labfile"
)

// Merged is what a merge of results folders found.
type Merged struct {
	Records int
	Missing []string // the campaign's points no folder had
}

// Merge joins the results folders of a campaign's shards into out: one
// results.jsonl and results.csv in the order a whole run writes them, the
// lab file and the campaign's identity (with the points none had); the
// caller renders the report (report.Write). It refuses, writing nothing,
// folders of different lab files, atmlab versions, clocks or --quick, and
// a point measured twice; a missing point is only listed. The folders are
// only read (results.OpenRead); out is written as results.Create's Force
// allows: the caller's own folder, no file written through a link. It
// stops when ctx ends.
func Merge(ctx context.Context, out string, dirs []string) (*Merged, error) {
	absOut, err := filepath.Abs(out)
	if err != nil {
		return nil, err
	}
	var ids []Identity
	var problems []string
	ins := make([]*results.Folder, len(dirs))
	defer func() {
		for _, in := range ins {
			if in != nil {
				in.Close()
			}
		}
	}()
	for i, d := range dirs {
		abs, err := filepath.Abs(d)
		if err != nil {
			return nil, err
		}
		if abs == absOut {
			return nil, fmt.Errorf("--out %s is one of the folders merged: give a new folder", out)
		}
		if ins[i], err = results.OpenRead(d); err != nil {
			return nil, err
		}
		id, err := IdentityOf(ins[i])
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s has no %s: not a folder atmlab lab run wrote (or one from before shards); render it alone with atmlab report %s", d, IdentityFile, d)
		}
		if err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	ref := ids[0]
	shards := map[string]string{}
	for i, id := range ids {
		d := dirs[i]
		if id.SHA256 != ref.SHA256 {
			problems = append(problems, fmt.Sprintf("%s is from a different lab file (%s, sha256 %.12s) than %s (%s, sha256 %.12s)", d, id.File, id.SHA256, dirs[0], ref.File, ref.SHA256))
		}
		if id.Version != ref.Version {
			problems = append(problems, fmt.Sprintf("%s was measured by atmlab %s, %s by %s", d, id.Version, dirs[0], ref.Version))
		}
		if id.Clock != ref.Clock || id.Quick != ref.Quick {
			problems = append(problems, fmt.Sprintf("%s ran --clock %s%s, %s --clock %s%s", d, id.Clock, quickText(id.Quick), dirs[0], ref.Clock, quickText(ref.Quick)))
		}
		if _, n, _ := strings.Cut(id.Shard, "/"); id.Shard != "" {
			if _, rn, _ := strings.Cut(ref.Shard, "/"); rn != n {
				problems = append(problems, fmt.Sprintf("%s is shard %s, %s shard %s: one campaign is cut into one number of shards", d, id.Shard, dirs[0], cmp.Or(ref.Shard, "(the whole)")))
			}
		}
		if o, ok := shards[id.Shard]; ok && id.Shard != "" {
			problems = append(problems, fmt.Sprintf("%s and %s are both shard %s", o, d, id.Shard))
		}
		shards[id.Shard] = d
	}
	src, err := ins[0].ReadFile(LabFile, labfile.MaxFileBytes)
	var lab *topologies.Lab
	if err == nil {
		lab, err = labfile.Parse(ins[0].Join(LabFile), src)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: the lab file lab run copied: %w", dirs[0], err)
	}
	plan, err := planned(lab, ref.Quick)
	if err != nil {
		return nil, err
	}
	choice, _ := clock.ParseChoice(ref.Clock) // checked as campaign.json was read
	var clocks []string                       // each clock as a point's key holds it
	for _, c := range choice {
		clocks = append(clocks, c.Key())
	}
	order := map[string]int{} // point and clock → place in a whole run's results
	for i, p := range plan {
		for c, clk := range clocks {
			// A whole run measures each variant's points by each clock in turn.
			order[PointKey(p.Point)+"\x00"+clk] = p.variantStart*len(clocks) + c*p.variantLen + (i - p.variantStart)
		}
	}
	var recs []Record
	from := map[string]string{}
	for i, d := range dirs {
		rs, err := Records(ctx, ins[i])
		if err != nil {
			return nil, err
		}
		for _, r := range rs {
			k := PointKey(r.Point) + "\x00" + r.Clock
			if o, ok := from[k]; ok {
				problems = append(problems, fmt.Sprintf("%s is in %s and %s", pointText(r.Point, r.Clock), o, d))
				continue
			}
			from[k] = d
			recs = append(recs, r)
		}
	}
	if len(problems) > 0 {
		if len(problems) > 20 {
			problems = append(problems[:20], fmt.Sprintf("and %d more", len(problems)-20))
		}
		return nil, fmt.Errorf("the folders do not make one campaign; nothing written:\n  %s", strings.Join(problems, "\n  "))
	}
	m := &Merged{Records: len(recs)}
	for _, p := range plan {
		for _, clk := range clocks {
			if _, ok := from[PointKey(p.Point)+"\x00"+clk]; !ok {
				m.Missing = append(m.Missing, pointText(p.Point, clk))
			}
		}
	}
	slices.SortStableFunc(recs, func(a, b Record) int {
		oa, okA := order[PointKey(a.Point)+"\x00"+a.Clock]
		ob, okB := order[PointKey(b.Point)+"\x00"+b.Clock]
		switch {
		case okA && okB:
			return oa - ob
		case okA:
			return -1
		case okB:
			return 1
		}
		return 0
	})
	if err := writeMerged(out, dirs, ins, lab, ref, recs, len(plan)*len(clocks), m.Missing); err != nil {
		return nil, err
	}
	return m, nil
}

// plannedPoint is a point of a whole campaign, with where its variant's
// points start in the plan and how many it has.
type plannedPoint struct {
	Point
	variantStart, variantLen int
}

// planned lists a campaign's points as a whole run measures them, each
// variant's in matrix order.
func planned(lab *topologies.Lab, quick bool) ([]plannedPoint, error) {
	var plan []plannedPoint
	for _, name := range lab.Measured() {
		vlab, err := lab.WithVariant(name)
		if err != nil {
			return nil, err
		}
		if quick {
			Quicken(vlab, name)
		}
		pts := ShardPoints(vlab, name, Shard{})
		start := len(plan)
		for _, p := range pts {
			plan = append(plan, plannedPoint{p, start, len(pts)})
		}
	}
	return plan, nil
}

// writeMerged writes a merge's folder.
func writeMerged(path string, dirs []string, ins []*results.Folder, lab *topologies.Lab, ref Identity, recs []Record, points int, missing []string) error {
	out, err := results.Create(path, results.Force)
	if err != nil {
		return err
	}
	defer out.Close()
	if err := out.Stamp(); err != nil {
		return err
	}
	// The reference files the lab names beside it, as lab run copied them,
	// so that the merged lab.yaml loads and its report compares.
	if err := CopyReferences(out, lab.File, lab); err != nil {
		return err
	}
	// What lab run leaves beside its results, from the first folder that has
	// it: the lab file, the resolved labs, the hardware figures, each
	// variant's virtual setup.
	written := map[string]bool{}
	for _, in := range ins {
		entries, err := in.List()
		if err != nil {
			return err
		}
		names := []string{LabFile, topologies.SpecFile, FiguresFile, QuickMarker}
		for _, n := range entries {
			if strings.HasPrefix(n, "virtual-") && strings.HasSuffix(n, ".json") {
				names = append(names, n)
			}
		}
		for _, name := range names {
			if written[name] {
				continue
			}
			b, err := in.ReadFile(name, 0)
			if errors.Is(err, fs.ErrNotExist) {
				continue // not every run leaves every file
			}
			if err == nil {
				err = out.WriteFile(name, b, 0o644)
			}
			if err != nil {
				return err
			}
			written[name] = true
		}
	}
	var jsonl bytes.Buffer
	for _, r := range recs {
		b, err := json.Marshal(r)
		if err != nil {
			return err
		}
		jsonl.Write(append(b, '\n'))
	}
	if err := out.WriteFile(RecordsFile, jsonl.Bytes(), 0o644); err != nil {
		return err
	}
	var csvb bytes.Buffer
	w := csv.NewWriter(&csvb)
	w.Write(CSVHeader)
	for _, r := range recs {
		w.Write(CSVRow(r))
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return err
	}
	if err := out.WriteFile(CSVFile, csvb.Bytes(), 0o644); err != nil {
		return err
	}
	id := ref
	id.Shard, id.Points, id.Merged, id.Missing = "", points, dirs, missing
	return WriteIdentity(out, id)
}

// LabFile is the copy of the lab file lab run keeps in a results folder.
const LabFile = "lab.yaml"

// pointText names a point for a person: variant · experiment · test ·
// size · sockbuf · repetition, and its clock.
func pointText(p Point, clock string) string {
	s := fmt.Sprintf("%s · %s · %s · size %d · sockbuf %d · #%d", cmp.Or(p.Variant, "base"), p.Experiment, p.Test, p.Size, p.SockBuf, p.Rep)
	if clock != "" {
		s += " (" + clock + " time)"
	}
	return s
}

func quickText(q bool) string {
	if q {
		return " --quick"
	}
	return ""
}
