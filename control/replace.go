package control

import (
	"fmt"
	"os"
	"path/filepath"
)

// Replacement is a capture file written beside the one it replaces,
// which it takes the place of only when finished: a capture that fails
// leaves the old file untouched, never truncated.
type Replacement struct {
	*os.File
	path string // the file it replaces
}

// NewReplacement creates a new, empty temporary file in path's directory
// (O_EXCL: never through a link, never an existing file), with the mode of
// the regular file it will replace, or 0644.
func NewReplacement(path string) (*Replacement, error) {
	mode := os.FileMode(0o644)
	if st, err := os.Lstat(path); err == nil && st.Mode().IsRegular() {
		mode = st.Mode().Perm()
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return nil, fmt.Errorf("capture file %s: %w", path, err)
	}
	if err := f.Chmod(mode); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, fmt.Errorf("capture file %s: %w", path, err)
	}
	return &Replacement{File: f, path: path}, nil
}

// Finish closes the file and, if keep, renames it over the one it
// replaces (a link there is replaced, not followed); otherwise removes it.
func (r *Replacement) Finish(keep bool) error {
	err := r.Close()
	if keep && err == nil {
		if err = os.Rename(r.Name(), r.path); err == nil {
			return nil
		}
		err = fmt.Errorf("capture file %s: %w", r.path, err)
	}
	os.Remove(r.Name())
	return err
}
