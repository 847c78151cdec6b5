package results

import (
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
)

// FormatFile holds a results folder's format version: which files it
// has and the schema of each. A folder written before it existed has
// none, and reads as version 1 (the same files).
const FormatFile = "format"

// Format is the format version this atmlab writes, and the newest it
// reads: a newer folder is refused, not half read.
const Format = 1

// Stamp writes the folder's format version (lab run and a merge do, into
// the folders they make).
func (f *Folder) Stamp() error {
	return f.WriteFile(FormatFile, []byte(strconv.Itoa(Format)+"\n"), 0o644)
}

// Format is the folder's format version: 1 for a folder without
// FormatFile; an error if the file does not read or names a version newer
// than this atmlab's.
func (f *Folder) Format() (int, error) {
	b, err := f.ReadFile(FormatFile, 64)
	if errors.Is(err, fs.ErrNotExist) {
		return 1, nil
	}
	if err != nil {
		return 0, err
	}
	v, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || v < 1 {
		return 0, fmt.Errorf("%s:1: %q is not a results folder's format version (a whole number from 1)", f.Join(FormatFile), strings.TrimSpace(string(b)))
	}
	if v > Format {
		return 0, fmt.Errorf("%s: the folder is of results format %d, and this atmlab reads up to %d: use a newer atmlab", f.Join(FormatFile), v, Format)
	}
	return v, nil
}
