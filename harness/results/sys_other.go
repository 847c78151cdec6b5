//go:build !unix

package results

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// dir is a results folder's handle where there is no openat with
// O_NOFOLLOW: an os.Root (which keeps every name inside the folder), and
// a check before each open that the name is not a link and is a regular
// file. Owners are not checked.
type dir struct{ root *os.Root }

func openDir(path string) (*dir, error) {
	st, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if st.Mode()&fs.ModeSymlink != 0 {
		return nil, fmt.Errorf("results folder %s is a symbolic link: give the folder it points to", path)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("results folder %s is not a directory", path)
	}
	r, err := os.OpenRoot(path)
	if err != nil {
		return nil, err
	}
	return &dir{root: r}, nil
}

func (d *dir) close() error { return d.root.Close() }

func (d *dir) owned() error { return nil }

// plain checks that name is a regular file and not a link, if it exists.
func (d *dir) plain(name string) (fs.FileInfo, error) {
	st, err := d.root.Lstat(name)
	if err != nil {
		return nil, err
	}
	if st.Mode()&fs.ModeSymlink != 0 {
		return nil, errors.New("is a symbolic link: a results folder holds regular files only, never followed")
	}
	if !st.Mode().IsRegular() {
		return nil, errors.New("is not a regular file: a results folder holds regular files only")
	}
	return st, nil
}

func (d *dir) openRead(name string) (*os.File, int64, error) {
	if _, err := d.plain(name); err != nil {
		return nil, 0, err
	}
	f, err := d.root.Open(name)
	if err != nil {
		return nil, 0, err
	}
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		f.Close()
		return nil, 0, errors.New("is not a regular file: a results folder holds regular files only")
	}
	return f, st.Size(), nil
}

func (d *dir) exists(name string) bool {
	_, err := d.root.Lstat(name)
	return err == nil
}

func (d *dir) list(sub string) ([]string, error) {
	if info, err := d.root.Lstat(sub); err == nil && !info.IsDir() {
		return nil, fmt.Errorf("%s is not a directory", sub)
	}
	f, err := d.root.Open(sub)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}

func (d *dir) mkParent(name string) error {
	if p := filepath.Dir(name); p != "." {
		return d.root.MkdirAll(p, 0o755)
	}
	return nil
}

func (d *dir) writeFile(name string, data []byte, perm fs.FileMode) error {
	if err := d.mkParent(name); err != nil {
		return err
	}
	var rnd [6]byte
	rand.Read(rnd[:])
	tmp := filepath.Join(filepath.Dir(name), "."+filepath.Base(name)+".tmp-"+hex.EncodeToString(rnd[:]))
	f, err := d.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = d.root.Rename(tmp, name)
	}
	if err != nil {
		d.root.Remove(tmp)
	}
	return err
}

func (d *dir) create(name string) (*os.File, error) {
	if err := d.mkParent(name); err != nil {
		return nil, err
	}
	if err := d.root.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	return d.root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
}

func (d *dir) append(name string) (*os.File, int64, error) {
	if err := d.mkParent(name); err != nil {
		return nil, 0, err
	}
	if _, err := d.plain(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, 0, err
	}
	f, err := d.root.OpenFile(name, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, 0, err
	}
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		f.Close()
		return nil, 0, errors.New("is not a regular file: a results folder holds regular files only")
	}
	return f, st.Size(), nil
}

func (d *dir) remove(name string) error { return d.root.Remove(name) }
