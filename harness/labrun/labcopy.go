package labrun

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/atmlab/atmlab/harness/results"
	"github.com/atmlab/atmlab/topologies"
)

// CopyReferences puts into a results folder, beside the lab.yaml copied
// there, each reference result file the lab at src names by a path under
// its directory, at the same relative path: the report renders from the
// folder alone, and the copy's references resolve there.
func CopyReferences(out *results.Folder, src string, lab *topologies.Lab) error {
	dir := filepath.Dir(src)
	for _, r := range lab.References {
		if r.File == "" {
			continue
		}
		rel, err := filepath.Rel(dir, r.File)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
			continue // named by an absolute path: the copy reads it there
		}
		data, err := r.Read() // checked and bounded as validation did
		if err == nil {
			err = out.WriteFile(filepath.ToSlash(rel), data, 0o644)
		}
		if err != nil {
			return fmt.Errorf("copy reference %s into %s: %w", rel, out.Path(), err)
		}
	}
	return nil
}
