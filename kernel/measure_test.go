//go:build linux

package kernel

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A second run finds the measuring lock taken, says by whom, waits, and
// gets it when the first lets go; a third then waits for the second.
func TestMeasureLockWaits(t *testing.T) {
	path := filepath.Join(t.TempDir(), "measure.lock")
	release, err := measureLock(path, func(int) { t.Error("the first run waited") })
	if err != nil {
		t.Fatal(err)
	}
	waited := make(chan int, 1)
	got := make(chan func(), 1)
	go func() {
		r, err := measureLock(path, func(pid int) { waited <- pid })
		if err != nil {
			t.Error(err)
		}
		got <- r
	}()
	if pid := <-waited; pid != os.Getpid() {
		t.Fatalf("waiting for pid %d, want %d", pid, os.Getpid())
	}
	select {
	case <-got:
		t.Fatal("the second run took the lock while the first held it")
	case <-time.After(200 * time.Millisecond):
	}
	release()
	var second func()
	select {
	case second = <-got:
	case <-time.After(5 * time.Second):
		t.Fatal("the second run did not get the lock the first released")
	}
	third := make(chan int, 1)
	done := make(chan error, 1)
	go func() {
		r, err := measureLock(path, func(pid int) { third <- pid })
		if err == nil {
			r()
		}
		done <- err
	}()
	if pid := <-third; pid != os.Getpid() {
		t.Fatalf("third waits for pid %d", pid)
	}
	second()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
