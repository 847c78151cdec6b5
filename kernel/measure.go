//go:build linux

package kernel

import (
	"errors"
	"os"
	"path/filepath"
)

// MeasureLockPath is the lock a real-time lab run holds while it builds
// and measures its labs, so that two on one machine (shards of a campaign
// on one Slurm node) never measure over each other: /run/atmlab/measure.lock
// for root; a normal user's runs share their state directory's.
func MeasureLockPath() string { return filepath.Join(runDir(), "measure.lock") }

// MeasureLock takes the machine's measuring lock, first calling waiting
// with the holder's pid if another run has it, then waiting for it. The
// kernel drops it when the process ends, however it ends.
func MeasureLock(waiting func(pid int)) (release func(), err error) {
	if os.Geteuid() != 0 || InHolder() {
		if _, err := makeStateDir(runDir()); err != nil {
			return nil, err
		}
	}
	return measureLock(MeasureLockPath(), waiting)
}

func measureLock(path string, waiting func(pid int)) (func(), error) {
	l, err := tryLock(path)
	var held *LockedError
	if errors.As(err, &held) {
		waiting(held.PID)
		l, err = waitLock(path)
	}
	if err != nil {
		return nil, err
	}
	return l.release, nil
}
