package labrun

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// ReadRecords reads a results folder's results.jsonl.
func ReadRecords(dir string) ([]Record, error) {
	f, err := os.Open(filepath.Join(dir, "results.jsonl"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var recs []Record
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for line := 1; sc.Scan(); line++ {
		var r Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return recs, fmt.Errorf("results.jsonl:%d: %w", line, err)
		}
		recs = append(recs, r)
	}
	return recs, sc.Err()
}

// QuickMarker is the file lab run --quick leaves in its results folder.
const QuickMarker = "quick"

// ReadFigures reads the hardware figures lab run resolved into the folder.
func ReadFigures(dir string) ([]HardwareFigure, error) {
	data, err := os.ReadFile(filepath.Join(dir, "references.json"))
	if err != nil {
		return nil, err
	}
	var hw []HardwareFigure
	return hw, json.Unmarshal(data, &hw)
}

// WriteFigures stores a lab's resolved hardware figures beside its results.
func WriteFigures(dir string, hw []HardwareFigure) error {
	data, err := json.MarshalIndent(hw, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "references.json"), data, 0o644)
}
