//go:build linux

package kernel

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"
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

// AwaitStopped waits for a lab's holder to let go of its lock (as a part
// killed with its machine does a moment after it left its namespaces), and
// gives up at its deadline while the lock is still held.
func TestAwaitStoppedWaitsForTheHolderToLetGo(t *testing.T) {
	defer func(d string) { RunDir = d }(RunDir)
	RunDir = t.TempDir()
	if !AwaitStopped("lab", time.Second) {
		t.Fatal("no lock file: want stopped at once")
	}
	l, err := tryLock(LockPath("lab"))
	if err != nil {
		t.Fatal(err)
	}
	if AwaitStopped("lab", 50*time.Millisecond) {
		t.Fatal("lock held throughout: want not stopped")
	}
	go func() { time.Sleep(100 * time.Millisecond); l.release() }()
	if !AwaitStopped("lab", 10*time.Second) {
		t.Fatal("lock released after 100 ms: want stopped")
	}
	if _, err := tryLock(LockPath("lab")); err != nil {
		t.Errorf("after AwaitStopped the lock is still held: %v", err)
	}
}
