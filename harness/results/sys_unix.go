//go:build unix

package results

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// dir is a results folder's handle: an O_DIRECTORY descriptor opened
// without following a link; every file is opened relative to it
// (openat), each name component with O_NOFOLLOW.
type dir struct {
	fd  int
	uid uint32 // the folder's owner
}

// openDir opens path, a directory that is not a symbolic link.
func openDir(path string) (*dir, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, dirError(path, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	return &dir{fd: fd, uid: st.Uid}, nil
}

// dirError explains why a results folder did not open.
func dirError(path string, err error) error {
	if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
		var st unix.Stat_t
		if unix.Lstat(path, &st) == nil && uint32(st.Mode)&unix.S_IFMT == unix.S_IFLNK {
			return fmt.Errorf("results folder %s is a symbolic link: give the folder it points to", path)
		}
		return fmt.Errorf("results folder %s is not a directory", path)
	}
	return &fs.PathError{Op: "open results folder", Path: path, Err: err}
}

func (d *dir) close() error { return unix.Close(d.fd) }

// owned checks that the folder is the caller's (effective) user's or root's.
func (d *dir) owned() error {
	if me := uint32(os.Geteuid()); d.uid != me && d.uid != 0 {
		return fmt.Errorf("belongs to uid %d, not to you (uid %d) or root", d.uid, me)
	}
	return nil
}

// parent opens the directory holding name's last component, making the
// directories on the way if mk; it returns the descriptor (d.fd itself
// when name has no slash) and the last component.
func (d *dir) parent(name string, mk bool) (int, string, error) {
	parts := strings.Split(name, "/")
	fd := d.fd
	for _, p := range parts[:len(parts)-1] {
		next, err := unix.Openat(fd, p, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if errors.Is(err, unix.ENOENT) && mk {
			if err = unix.Mkdirat(fd, p, 0o755); err == nil || errors.Is(err, unix.EEXIST) {
				next, err = unix.Openat(fd, p, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			}
		}
		if fd != d.fd {
			unix.Close(fd)
		}
		if err != nil {
			if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
				return -1, "", fmt.Errorf("has %s, a symbolic link or not a directory, on its way", p)
			}
			return -1, "", &fs.PathError{Op: "open", Err: err}
		}
		fd = next
	}
	return fd, parts[len(parts)-1], nil
}

func (d *dir) release(fd int) {
	if fd != d.fd {
		unix.Close(fd)
	}
}

// regular checks that an open descriptor is a regular file and that a
// hard link does not bring another user's file in; it returns its size.
func (d *dir) regular(fd int) (int64, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return 0, &fs.PathError{Op: "stat", Err: err}
	}
	if uint32(st.Mode)&unix.S_IFMT != unix.S_IFREG {
		return 0, fmt.Errorf("is not a regular file (%s): a results folder holds regular files only", kind(uint32(st.Mode)))
	}
	if uint64(st.Nlink) > 1 && st.Uid != d.uid {
		return 0, fmt.Errorf("is a hard link to a file of uid %d, not of the folder's owner (uid %d)", st.Uid, d.uid)
	}
	return st.Size, nil
}

func kind(m uint32) string {
	switch m & unix.S_IFMT {
	case unix.S_IFIFO:
		return "a FIFO"
	case unix.S_IFDIR:
		return "a directory"
	case unix.S_IFCHR, unix.S_IFBLK:
		return "a device"
	case unix.S_IFSOCK:
		return "a socket"
	}
	return "not a file"
}

// linkError says that a name is a link when O_NOFOLLOW met one.
func linkError(err error) error {
	if errors.Is(err, unix.ELOOP) {
		return fmt.Errorf("is a symbolic link: a results folder holds regular files only, never followed")
	}
	return &fs.PathError{Op: "open", Err: err}
}

func (d *dir) openRead(name string) (*os.File, int64, error) {
	pfd, base, err := d.parent(name, false)
	if err != nil {
		return nil, 0, err
	}
	defer d.release(pfd)
	// O_NONBLOCK: opening a FIFO must not wait for a writer.
	fd, err := unix.Openat(pfd, base, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, 0, linkError(err)
	}
	size, err := d.regular(fd)
	if err != nil {
		unix.Close(fd)
		return nil, 0, err
	}
	return os.NewFile(uintptr(fd), name), size, nil
}

func (d *dir) exists(name string) bool {
	pfd, base, err := d.parent(name, false)
	if err != nil {
		return false
	}
	defer d.release(pfd)
	var st unix.Stat_t
	return unix.Fstatat(pfd, base, &st, unix.AT_SYMLINK_NOFOLLOW) == nil
}

// list returns the names in sub, a folder under the results folder ("."
// for the folder itself), reached without following a link.
func (d *dir) list(sub string) ([]string, error) {
	pfd, _, err := d.parent(sub+"/.", false)
	if err != nil {
		return nil, err
	}
	defer d.release(pfd)
	fd, err := unix.Openat(pfd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), ".")
	defer f.Close()
	return f.Readdirnames(-1)
}

// createNew makes base in pfd exclusively: an existing entry (a link
// included) fails with EEXIST rather than being opened.
func createNew(pfd int, base string, perm fs.FileMode) (int, error) {
	return unix.Openat(pfd, base, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(perm.Perm()))
}

func (d *dir) writeFile(name string, data []byte, perm fs.FileMode) error {
	pfd, base, err := d.parent(name, true)
	if err != nil {
		return err
	}
	defer d.release(pfd)
	var rnd [6]byte
	rand.Read(rnd[:])
	tmp := "." + base + ".tmp-" + hex.EncodeToString(rnd[:])
	fd, err := createNew(pfd, tmp, perm)
	if err != nil {
		return &fs.PathError{Op: "create", Err: err}
	}
	f := os.NewFile(uintptr(fd), tmp)
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(perm.Perm()) // exactly perm, whatever the umask
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = unix.Renameat(pfd, tmp, pfd, base)
	}
	if err != nil {
		unix.Unlinkat(pfd, tmp, 0)
		return &fs.PathError{Op: "write", Err: err}
	}
	return nil
}

func (d *dir) create(name string) (*os.File, error) {
	pfd, base, err := d.parent(name, true)
	if err != nil {
		return nil, err
	}
	defer d.release(pfd)
	if err := unix.Unlinkat(pfd, base, 0); err != nil && !errors.Is(err, unix.ENOENT) {
		return nil, &fs.PathError{Op: "remove", Err: err}
	}
	fd, err := createNew(pfd, base, 0o644)
	if err != nil {
		return nil, &fs.PathError{Op: "create", Err: err}
	}
	return os.NewFile(uintptr(fd), name), nil
}

func (d *dir) append(name string) (*os.File, int64, error) {
	pfd, base, err := d.parent(name, true)
	if err != nil {
		return nil, 0, err
	}
	defer d.release(pfd)
	fd, err := unix.Openat(pfd, base, unix.O_WRONLY|unix.O_APPEND|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOCTTY, 0)
	if errors.Is(err, unix.ENOENT) {
		fd, err = createNew(pfd, base, 0o644)
	}
	if err != nil {
		return nil, 0, linkError(err)
	}
	size, err := d.regular(fd)
	if err == nil {
		err = unix.SetNonblock(fd, false)
	}
	if err != nil {
		unix.Close(fd)
		return nil, 0, err
	}
	return os.NewFile(uintptr(fd), name), size, nil
}

func (d *dir) remove(name string) error {
	pfd, base, err := d.parent(name, false)
	if err != nil {
		return err
	}
	defer d.release(pfd)
	if err := unix.Unlinkat(pfd, base, 0); err != nil {
		return &fs.PathError{Op: "remove", Err: err}
	}
	return nil
}
