package labrun

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/atmlab/atmlab/harness/results"
)

// RecordsFile is where a results folder keeps its records, one JSON
// object a line; CSVFile is the same records as a table.
const (
	RecordsFile = "results.jsonl"
	CSVFile     = "results.csv"
)

// MaxRecords is the most records a results folder holds: a 1000-point
// sweep of several sizes, tests and repetitions by both clocks is tens of
// thousands.
const MaxRecords = 100_000

// ReadRecords reads a results folder's results.jsonl (any user's folder:
// it only reads).
func ReadRecords(dir string) ([]Record, error) {
	f, err := results.OpenRead(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Records(context.Background(), f)
}

// Records reads the folder's results.jsonl: each line within
// results.MaxLine, the file within results.MaxRecordsBytes, at most
// MaxRecords records, and no point (with its clock) twice; an error is
// "FILE:LINE: ...". It stops when ctx ends.
func Records(ctx context.Context, f *results.Folder) ([]Record, error) {
	var recs []Record
	seen := map[string]int{}
	err := f.ReadLines(ctx, RecordsFile, results.MaxLine, results.MaxRecordsBytes, func(line int, b []byte) error {
		r, err := parseRecord(b, line, seen)
		if err == nil {
			recs = append(recs, r)
		}
		return err
	})
	return recs, err
}

// parseRecords is Records on a reader; file names it in errors.
func parseRecords(ctx context.Context, file string, r io.Reader) ([]Record, error) {
	var recs []Record
	seen := map[string]int{}
	err := results.Lines(ctx, file, r, results.MaxLine, results.MaxRecordsBytes, func(line int, b []byte) error {
		r, err := parseRecord(b, line, seen)
		if err == nil {
			recs = append(recs, r)
		}
		return err
	})
	return recs, err
}

// parseRecord decodes one line of results.jsonl; seen holds the lines of
// the points read so far.
func parseRecord(b []byte, line int, seen map[string]int) (Record, error) {
	var r Record
	if err := json.Unmarshal(b, &r); err != nil {
		return r, err
	}
	if len(seen) >= MaxRecords {
		return r, fmt.Errorf("more than %d records: not a results file atmlab wrote", MaxRecords)
	}
	k := PointKey(r.Point) + "\x00" + r.Clock
	if first, ok := seen[k]; ok {
		return r, fmt.Errorf("%s again, first on line %d: a point is measured once in a results folder", pointText(r.Point, r.Clock), first)
	}
	seen[k] = line
	return r, nil
}

// QuickMarker is the file lab run --quick leaves in its results folder.
const QuickMarker = "quick"

// FiguresFile is where lab run keeps the lab's resolved hardware figures.
const FiguresFile = "references.json"

// ReadFigures reads the hardware figures lab run resolved into the folder.
func ReadFigures(f *results.Folder) ([]HardwareFigure, error) {
	data, err := f.ReadFile(FiguresFile, 0)
	if err != nil {
		return nil, err
	}
	return parseFigures(f.Join(FiguresFile), data)
}

func parseFigures(file string, data []byte) ([]HardwareFigure, error) {
	var hw []HardwareFigure
	return hw, results.DecodeJSON(file, data, &hw)
}

// WriteFigures stores a lab's resolved hardware figures beside its results.
func WriteFigures(f *results.Folder, hw []HardwareFigure) error {
	data, err := json.MarshalIndent(hw, "", "  ")
	if err != nil {
		return err
	}
	return f.WriteFile(FiguresFile, data, 0o644)
}
