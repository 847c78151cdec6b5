package labrun

import (
	"cmp"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/atmlab/atmlab/harness/results"
	"github.com/atmlab/atmlab/topologies"
)

// ErrAppendAndForce is OpenOutput's refusal of both --append and --force.
var ErrAppendAndForce = errors.New("lab run: --append keeps the folder's results, --force replaces them: give one")

// Output is lab run's results folder while it is written: opened fresh,
// to append to or to replace (OpenOutput), its inputs written beside
// the records (WriteInputs), and its records appended as they come
// (JSONL, CSV). It is the one writer of what lab run leaves in a folder.
type Output struct {
	Dir *results.Folder
	// Done holds the points the folder measured already (--append), as
	// DoneKey; nil for a new folder.
	Done  map[string]bool
	JSONL *os.File    // results.jsonl, open to append after Records
	CSV   *csv.Writer // results.csv, open to append after Records
	csvf  *os.File
}

// runFiles are what lab run writes in its folder beyond what it always
// rewrites: --force removes them, so that nothing of an earlier run (its
// records, a --quick marker, another variant's virtual setup) passes for
// this one's.
var runFiles = []string{RecordsFile, CSVFile, QuickMarker, IdentityFile, "report.md", "report.html"}

// OpenOutput opens lab run's --out folder: a new or empty one; with
// appendRun one of the same campaign (id), whose points measured it
// keeps in Done so that they are not measured again; with force any
// folder of the caller's, cleared of an earlier run's files.
func OpenOutput(ctx context.Context, out string, appendRun, force bool, id Identity) (*Output, error) {
	mode := results.Fresh
	switch {
	case appendRun && force:
		return nil, ErrAppendAndForce
	case appendRun:
		mode = results.Append
	case force:
		mode = results.Force
	}
	dir, err := results.Create(out, mode)
	if errors.Is(err, results.ErrNotEmpty) {
		return nil, fmt.Errorf("--out %v: --append adds this run's points to its results (only those it lacks), --force replaces them, or give a new folder", err)
	}
	if err != nil {
		return nil, err
	}
	o := &Output{Dir: dir}
	switch {
	case force:
		err = clearRun(dir)
	case appendRun:
		o.Done, err = appendable(ctx, dir, id)
	}
	if err != nil {
		dir.Close()
		return nil, err
	}
	return o, nil
}

// clearRun removes an earlier run's files (runFiles, virtual setups).
func clearRun(dir *results.Folder) error {
	names, err := dir.List()
	for _, n := range names {
		if err == nil && (slices.Contains(runFiles, n) || strings.HasPrefix(n, "virtual-") && strings.HasSuffix(n, ".json")) {
			err = dir.Remove(n)
		}
	}
	return err
}

// appendable checks that a folder's results are of the campaign id names
// (or that it has none) and returns the points they hold.
func appendable(ctx context.Context, dir *results.Folder, id Identity) (map[string]bool, error) {
	old, err := IdentityOf(dir)
	if errors.Is(err, fs.ErrNotExist) {
		if dir.Exists(RecordsFile) {
			return nil, fmt.Errorf("--append: %s has results but no %s: not a folder lab run wrote; give a new --out", dir.Path(), IdentityFile)
		}
		return nil, nil // nothing measured yet
	}
	if err != nil {
		return nil, err
	}
	switch {
	case old.SHA256 != id.SHA256:
		err = fmt.Errorf("its results are of another lab file (%s, sha256 %.12s; this is %.12s)", old.File, old.SHA256, id.SHA256)
	case old.Version != id.Version:
		err = fmt.Errorf("its results were measured by atmlab %s, this is %s", old.Version, id.Version)
	case old.Clock != id.Clock || old.Quick != id.Quick:
		err = fmt.Errorf("its results ran --clock %s (quick %v), this run --clock %s (quick %v)", old.Clock, old.Quick, id.Clock, id.Quick)
	case old.Shard != id.Shard:
		err = fmt.Errorf("its results are shard %q, this run %q", old.Shard, id.Shard)
	}
	if err != nil {
		return nil, fmt.Errorf("--append to %s: %w: one folder holds one campaign; give a new --out, or --force to replace them", dir.Path(), err)
	}
	recs, err := Records(ctx, dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	done := map[string]bool{}
	for _, r := range recs { // a failed point too: a folder holds a point once
		done[DoneKey(r.Point, r.Clock)] = true
	}
	return done, nil
}

// WriteInputs writes what the run is measured from beside its records:
// the folder's format version, the lab file as given (src, read from
// file), each variant's resolved lab (spec.json), the reference files
// the lab names, the --quick marker and the reference figures.
func (o *Output) WriteInputs(file string, src []byte, lab *topologies.Lab, variants []Variant, quick bool) error {
	if err := o.Dir.Stamp(); err != nil {
		return err
	}
	if err := o.Dir.WriteFile(LabFile, src, 0o644); err != nil {
		return err
	}
	vlabs := make([]*topologies.Lab, len(variants))
	names := make([]string, len(variants))
	for i, v := range variants {
		vlabs[i], names[i] = v.Lab, v.Name
	}
	spec, err := topologies.SpecJSON(names, vlabs) // what each variant was built from
	if err == nil {
		err = o.Dir.WriteFile(topologies.SpecFile, spec, 0o644)
	}
	if err != nil {
		return err
	}
	if err := CopyReferences(o.Dir, file, lab); err != nil {
		return err
	}
	if quick {
		if err := o.Dir.WriteFile(QuickMarker, nil, 0o644); err != nil { // the report says so
			return err
		}
	}
	return WriteFigures(o.Dir, ResolveReferences(lab))
}

// Records opens results.jsonl and results.csv to append to (both empty
// unless --append), the CSV's header written if it is new.
func (o *Output) Records() error {
	jsonl, _, err := o.Dir.Append(RecordsFile)
	if err != nil {
		return err
	}
	o.JSONL = jsonl
	csvf, empty, err := o.Dir.Append(CSVFile)
	if err != nil {
		return err
	}
	o.csvf, o.CSV = csvf, csv.NewWriter(csvf)
	if empty {
		return o.CSV.Write(CSVHeader)
	}
	return nil
}

// CloseRecords closes results.jsonl and results.csv, reporting the first
// error of either.
func (o *Output) CloseRecords() error {
	var errs []error
	if o.JSONL != nil {
		errs = append(errs, o.JSONL.Close())
		o.JSONL = nil
	}
	if o.csvf != nil {
		errs = append(errs, o.csvf.Close())
		o.csvf = nil
	}
	if err := cmp.Or(errs...); err != nil {
		return fmt.Errorf("results: %w", err)
	}
	return nil
}

// Close closes the records, if open, and the folder.
func (o *Output) Close() error {
	return cmp.Or(o.CloseRecords(), o.Dir.Close())
}

// WriteSetup records beside the results, as virtual-VARIANT.json, what
// shaped a variant's virtual-time figures (the stack's settings), in the
// results folder at out (the caller's own, as results.Open checks).
func WriteSetup(out, variant string, setup any) error {
	b, err := json.MarshalIndent(setup, "", "  ")
	if err != nil {
		return err
	}
	dir, err := results.Open(out)
	if err != nil {
		return err
	}
	defer dir.Close()
	return dir.WriteFile(filepath.Base("virtual-"+variant+".json"), append(b, '\n'), 0o644)
}
