//go:build linux

package placement

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/atmlab/atmlab/kernel"
)

// TestSplitLockRefusesASecondAndGoesWhenReleased: while a split lab holds
// its lock, a second up or a down is refused; released, the lock leaves
// no file behind.
func TestSplitLockRefusesASecondAndGoesWhenReleased(t *testing.T) {
	lab := "splitlock" + filepath.Base(t.TempDir())
	unlock, err := lockSplit(lab)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lockSplit(lab); err == nil || !strings.Contains(err.Error(), "is up on this machine") {
		unlock()
		t.Fatalf("second lock: %v", err)
	}
	unlock()
	if _, err := os.Stat(filepath.Join(kernel.RunDir, machineLab(lab)+".lock")); !os.IsNotExist(err) {
		t.Errorf("lock file after release: %v", err)
	}
	again, err := lockSplit(lab)
	if err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	again()
}
