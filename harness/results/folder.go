// Package results is the on-disk results folder: the one place that
// creates, opens, writes, appends to and reads the files lab run, a merge,
// the report and a campaign leave in a folder. A results folder is
// untrusted input (another user may have made it, or put links and FIFOs
// in it), so every file is opened relative to the folder's own handle,
// never through a symbolic link, read only when regular and within a size
// cap (and not if it is a hard link to a file of another owner than the
// folder's), and written only into a folder of the caller's own user (or
// root's): a new file is created exclusively and renamed into place,
// which replaces a link rather than writing through it.
package results

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Size caps of what a results folder's readers take in.
const (
	// MaxLine is the longest line of results.jsonl: a record is a few KB.
	MaxLine = 1 << 20
	// MaxRecordsBytes is the largest results.jsonl: about 100 000 records.
	MaxRecordsBytes = 256 << 20
	// MaxFileBytes is the largest of any other file read from a folder
	// (spec.json of a 1000-point sweep, campaign.json, a plot's SVG).
	MaxFileBytes = 64 << 20
)

// Mode says what Create does with a folder that already holds files.
type Mode int

const (
	// Fresh refuses a folder that holds anything: results are never
	// replaced or mixed without being asked to.
	Fresh Mode = iota
	// Append keeps what the folder holds: its results are added to.
	Append
	// Force keeps the folder but lets its files be replaced.
	Force
)

// ErrNotEmpty is Create's refusal of a folder that holds files (Fresh).
var ErrNotEmpty = errors.New("results folder is not empty")

// Folder is an open results folder. Its files are reached through the
// folder's handle, opened once without following a link, so a folder
// renamed or swapped for a link after Open is not followed either. A
// Folder is safe for use by one goroutine at a time; Close releases it.
type Folder struct {
	path     string
	d        *dir // the platform's handle (sys_unix.go, sys_other.go)
	writable bool // opened by Create or Open: the caller's own folder
}

// Create opens the results folder at path for writing, making it (and
// its parents) if it does not exist. path must not be a symbolic link,
// and the folder must be the caller's user's or root's. A folder holding
// anything is refused with Fresh (the error wraps ErrNotEmpty and names
// what it holds).
func Create(path string, mode Mode) (*Folder, error) {
	path = filepath.Clean(path)
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, fmt.Errorf("results folder %s: %w", path, err)
		}
		if err := os.Mkdir(path, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("results folder %s: %w", path, err)
		}
	}
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	if mode == Fresh {
		names, err := f.List()
		if err != nil {
			f.Close()
			return nil, err
		}
		if len(names) > 0 {
			f.Close()
			shown := names[:min(len(names), 4)]
			more := ""
			if len(names) > len(shown) {
				more = fmt.Sprintf(" and %d more", len(names)-len(shown))
			}
			return nil, fmt.Errorf("%s holds %s%s: %w", path, strings.Join(shown, ", "), more, ErrNotEmpty)
		}
	}
	return f, nil
}

// Open opens an existing results folder to read and write it (report
// renders into it): it must not be a symbolic link, and must be the
// caller's user's or root's.
func Open(path string) (*Folder, error) {
	f, err := OpenRead(path)
	if err != nil {
		return nil, err
	}
	if err := f.d.owned(); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s %w: atmlab writes only into a results folder of your own user or root's; copy it (cp -r %s NEW) and give the copy", path, err, path)
	}
	f.writable = true
	return f, nil
}

// OpenRead opens an existing results folder to read it only (a merge's
// inputs): any user's folder, but not through a symbolic link, and its
// files only as Folder's readers allow. A folder of a newer format
// (FormatFile) than this atmlab's is refused.
func OpenRead(path string) (*Folder, error) {
	path = filepath.Clean(path)
	d, err := openDir(path)
	if err != nil {
		return nil, err
	}
	f := &Folder{path: path, d: d}
	if _, err := f.Format(); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// Path is the folder's path as given (cleaned).
func (f *Folder) Path() string { return f.path }

// Join is the path of a file in the folder, for messages.
func (f *Folder) Join(name string) string { return filepath.Join(f.path, name) }

// Close releases the folder's handle.
func (f *Folder) Close() error { return f.d.close() }

// checkName refuses a name that leaves the folder.
func (f *Folder) checkName(name string) error {
	if name == "" || filepath.IsAbs(name) || !filepath.IsLocal(name) {
		return fmt.Errorf("%s: %q is not a name inside the results folder", f.path, name)
	}
	return nil
}

// ReadFile returns a regular file of the folder, at most limit bytes (0:
// MaxFileBytes). A missing file's error wraps fs.ErrNotExist; a symbolic
// link, a FIFO, a device or a larger file is refused, naming the file.
func (f *Folder) ReadFile(name string, limit int64) ([]byte, error) {
	if limit <= 0 {
		limit = MaxFileBytes
	}
	r, size, err := f.open(name, limit)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.Join(name), err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s grew beyond %d bytes while read (%d at first)", f.Join(name), limit, size)
	}
	return b, nil
}

// open opens a regular file of the folder for reading and checks its size.
func (f *Folder) open(name string, limit int64) (*os.File, int64, error) {
	if err := f.checkName(name); err != nil {
		return nil, 0, err
	}
	r, size, err := f.d.openRead(name)
	if err != nil {
		return nil, 0, f.fileError(name, err)
	}
	if size > limit {
		r.Close()
		return nil, 0, fmt.Errorf("%s is %d bytes: a results folder's %s holds at most %d", f.Join(name), size, filepath.Base(name), limit)
	}
	return r, size, nil
}

// fileError names the file in an error of the platform's open.
func (f *Folder) fileError(name string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		pe.Path = f.Join(name)
		return pe
	}
	return fmt.Errorf("%s %w", f.Join(name), err)
}

// Exists reports whether the folder has an entry of that name (a link
// counts: it is not followed).
func (f *Folder) Exists(name string) bool {
	return f.checkName(name) == nil && f.d.exists(name)
}

// List returns the names in the folder, sorted.
func (f *Folder) List() ([]string, error) {
	names, err := f.d.list(".")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.path, err)
	}
	slices.Sort(names)
	return names, nil
}

// ListDir returns the names in a folder under the results folder, sorted;
// none if it does not exist. No link on the way is followed.
func (f *Folder) ListDir(sub string) ([]string, error) {
	if err := f.checkName(sub); err != nil {
		return nil, err
	}
	names, err := f.d.list(sub)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, f.fileError(sub, err)
	}
	slices.Sort(names)
	return names, nil
}

// ReadLines calls fn with each line of a regular file of the folder (no
// newline), numbered from 1. A line longer than maxLine or a file larger
// than maxBytes is an error "FILE:LINE: ..."; so is fn's error. It stops
// when ctx ends.
func (f *Folder) ReadLines(ctx context.Context, name string, maxLine int, maxBytes int64, fn func(line int, b []byte) error) error {
	r, _, err := f.open(name, maxBytes)
	if err != nil {
		return err
	}
	defer r.Close()
	return Lines(ctx, f.Join(name), io.LimitReader(r, maxBytes+1), maxLine, maxBytes, fn)
}

// Lines is ReadLines on a reader; file names the input in errors.
func Lines(ctx context.Context, file string, r io.Reader, maxLine int, maxBytes int64, fn func(line int, b []byte) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var total int64
	var buf []byte
	for line := 1; ; line++ {
		if line%1024 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		buf = buf[:0]
		for {
			chunk, err := br.ReadSlice('\n')
			total += int64(len(chunk))
			if total > maxBytes {
				return fmt.Errorf("%s:%d: the file goes on beyond %d bytes, the most a results folder's %s holds", file, line, maxBytes, filepath.Base(file))
			}
			if len(buf)+len(chunk) > maxLine+1 {
				return fmt.Errorf("%s:%d: line longer than %d bytes: not a line atmlab wrote", file, line, maxLine)
			}
			buf = append(buf, chunk...)
			if errors.Is(err, bufio.ErrBufferFull) {
				continue
			}
			if err != nil && err != io.EOF {
				return fmt.Errorf("%s:%d: %w", file, line, err)
			}
			if len(buf) > 0 {
				b := bytes.TrimSuffix(bytes.TrimSuffix(buf, []byte("\n")), []byte("\r"))
				if err := fn(line, b); err != nil {
					return fmt.Errorf("%s:%d: %w", file, line, err)
				}
			}
			if err == io.EOF {
				return nil
			}
			break
		}
	}
}

// WriteFile replaces (or makes) a file of the folder with data: written
// to a new file beside it and renamed over it, so that a link of that name
// is replaced, never written through, and a reader never sees half. A
// name with slashes makes the directories under the folder it needs (none
// of them a link).
func (f *Folder) WriteFile(name string, data []byte, perm fs.FileMode) error {
	if err := f.writeCheck(name); err != nil {
		return err
	}
	if err := f.d.writeFile(name, data, perm); err != nil {
		return f.fileError(name, err)
	}
	return nil
}

// Create makes a new, empty file of the folder to write into as results
// come, removing any entry of that name first (a link is removed, not
// followed). The caller closes it.
func (f *Folder) Create(name string) (*os.File, error) {
	if err := f.writeCheck(name); err != nil {
		return nil, err
	}
	w, err := f.d.create(name)
	if err != nil {
		return nil, f.fileError(name, err)
	}
	return w, nil
}

// Append opens a regular file of the folder to add to its end, making it
// if it does not exist, and reports whether it was empty (or new). A link
// or anything but a regular file is refused.
func (f *Folder) Append(name string) (w *os.File, empty bool, err error) {
	if err := f.writeCheck(name); err != nil {
		return nil, false, err
	}
	w, size, err := f.d.append(name)
	if err != nil {
		return nil, false, f.fileError(name, err)
	}
	return w, size == 0, nil
}

// Remove removes a file of the folder if it is there (a link itself, not
// what it points to).
func (f *Folder) Remove(name string) error {
	if err := f.writeCheck(name); err != nil {
		return err
	}
	if err := f.d.remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return f.fileError(name, err)
	}
	return nil
}

func (f *Folder) writeCheck(name string) error {
	if !f.writable {
		return fmt.Errorf("%s: opened to read only", f.path)
	}
	return f.checkName(name)
}

// DecodeJSON unmarshals a JSON file's data into v; a syntax or type error
// names the file and line ("FILE:LINE: ...").
func DecodeJSON(file string, data []byte, v any) error {
	if err := json.Unmarshal(data, v); err != nil {
		return Locate(file, data, err)
	}
	return nil
}

// Locate names the file, and the line when err is a JSON syntax or type
// error at an offset into data, in an error: "FILE:LINE: ...".
func Locate(file string, data []byte, err error) error {
	var off int64 = -1
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
	}
	if off < 0 {
		return fmt.Errorf("%s: %w", file, err)
	}
	off = min(off, int64(len(data)))
	return fmt.Errorf("%s:%d: %w", file, 1+bytes.Count(data[:off], []byte("\n")), err)
}
