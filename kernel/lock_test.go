//go:build linux

package kernel

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
)

// A held lock refuses a second taker, naming the holder; released, it is
// free again and its file is gone.
func TestTryLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lab.lock")
	l, err := tryLock(path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = tryLock(path)
	var le *LockedError
	if !errors.As(err, &le) || le.PID != os.Getpid() {
		t.Fatalf("second tryLock: %v, want a LockedError naming pid %d", err, os.Getpid())
	}
	l.release()
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("lock file after release: %v", err)
	}
	l, err = tryLock(path)
	if err != nil {
		t.Fatalf("tryLock after release: %v", err)
	}
	l.release()
}

// Waiters are served one at a time, even though each holder removes the
// file as it releases it.
func TestWaitLockExcludes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cc.lock")
	var inside, overlaps atomic.Int32
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				l, err := waitLock(path)
				if err != nil {
					t.Error(err)
					return
				}
				if inside.Add(1) != 1 {
					overlaps.Add(1)
				}
				inside.Add(-1)
				l.release()
			}
		}()
	}
	wg.Wait()
	if n := overlaps.Load(); n != 0 {
		t.Errorf("%d times two holders at once", n)
	}
}
