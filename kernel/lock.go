//go:build linux

package kernel

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// LockPath is the file whose lock a lab holds from the start of `up` to the
// end of its teardown: a second `up` of the lab, or `down` while it runs,
// finds it taken and touches nothing. The kernel drops the lock when its
// holder dies, kill -9 included.
func LockPath(lab string) string { return filepath.Join(RunDir, lab+".lock") }

// fileLock is a held exclusive flock(2) on a file.
type fileLock struct {
	f    *os.File
	path string
}

// LockedError says that another process holds a lock.
type LockedError struct {
	Path string
	PID  int // the holder, 0 if unknown
}

func (e *LockedError) Error() string {
	if e.PID == 0 {
		return fmt.Sprintf("%s is held by another process", e.Path)
	}
	return fmt.Sprintf("%s is held by pid %d", e.Path, e.PID)
}

// tryLock takes path's lock without waiting; a *LockedError says another
// process has it.
func tryLock(path string) (*fileLock, error) { return lockFile(path, false) }

// waitLock takes path's lock, waiting for its holder to release it.
func waitLock(path string) (*fileLock, error) { return lockFile(path, true) }

func lockFile(path string, wait bool) (*fileLock, error) {
	if err := makeLockDir(filepath.Dir(path)); err != nil {
		return nil, err
	}
	how := unix.LOCK_EX
	if !wait {
		how |= unix.LOCK_NB
	}
	for {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return nil, err
		}
		err = unix.Flock(int(f.Fd()), how)
		for errors.Is(err, unix.EINTR) {
			err = unix.Flock(int(f.Fd()), how)
		}
		if err != nil {
			f.Close()
			if errors.Is(err, unix.EWOULDBLOCK) {
				return nil, &LockedError{Path: path, PID: lockHolder(path)}
			}
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		// The previous holder removes the file as it releases the lock: a
		// lock on a removed file guards nothing, so start again on the new one.
		var got, now unix.Stat_t
		if unix.Fstat(int(f.Fd()), &got) == nil && unix.Stat(path, &now) == nil && got.Ino == now.Ino && got.Dev == now.Dev {
			f.Truncate(0)
			f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
			return &fileLock{f: f, path: path}, nil
		}
		f.Close()
	}
}

// makeLockDir makes the directory a lock lives in: root's /run/atmlab
// (0755: users may look for root's sockets there); a normal user's state
// directory, in a holder too, 0700 as makeStateDir checks it.
func makeLockDir(dir string) error {
	if os.Geteuid() != 0 || InHolder() {
		_, err := makeStateDir(dir)
		return err
	}
	return os.MkdirAll(dir, 0o755)
}

// lockHolder reads the pid a lock's holder wrote into its file, giving a
// holder that has only just taken the lock a moment to write it.
func lockHolder(path string) int {
	for try := 0; ; try++ {
		b, _ := os.ReadFile(path)
		pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		if pid != 0 || try == 10 {
			return pid
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// release removes the lock file and drops the lock; nil is released.
func (l *fileLock) release() {
	if l == nil {
		return
	}
	os.Remove(l.path)
	l.f.Close()
}
