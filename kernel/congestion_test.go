//go:build linux

package kernel

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

func testCC(t *testing.T, list string) ccList {
	t.Helper()
	dir := t.TempDir()
	c := ccList{sysctl: filepath.Join(dir, "allowed"), dir: filepath.Join(dir, "run")}
	if err := os.WriteFile(c.sysctl, []byte(list), 0o644); err != nil {
		t.Fatal(err)
	}
	return c
}

func (c ccList) get(t *testing.T) string {
	t.Helper()
	l, err := c.read()
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(l, " ")
}

// Two labs share an added control: the first to stop leaves it for the
// other; the last takes it back. What was allowed before is never removed.
func TestCongestionControlsPerLab(t *testing.T) {
	c := testCC(t, "reno cubic")
	note, err := c.allow("a", []string{"cubic", "bbr"})
	if err != nil || !strings.Contains(note, "bbr") || strings.Contains(note, "cubic") {
		t.Fatalf("allow a: %q %v", note, err)
	}
	if _, err := c.allow("b", []string{"bbr", "vegas", "reno"}); err != nil {
		t.Fatal(err)
	}
	if got := c.get(t); got != "reno cubic bbr vegas" {
		t.Fatalf("with a and b up: %q", got)
	}
	if err := c.restore("a"); err != nil {
		t.Fatal(err)
	}
	if got := c.get(t); got != "reno cubic bbr vegas" {
		t.Errorf("after a stops, b still needs bbr and vegas: %q", got)
	}
	if err := c.restore("b"); err != nil {
		t.Fatal(err)
	}
	if got := c.get(t); got != "reno cubic" {
		t.Errorf("after both stop: %q, want the original list", got)
	}
	if err := c.restore("b"); err != nil || c.get(t) != "reno cubic" {
		t.Errorf("a second restore changed something: %v %q", err, c.get(t))
	}
	if left, _ := filepath.Glob(filepath.Join(c.dir, "*.cc")); len(left) != 0 {
		t.Errorf("records left: %v", left)
	}
}

// A lab killed before its teardown leaves its record; a later restore (what
// `down` runs, in another process) takes its additions back.
func TestCongestionControlsAfterKill(t *testing.T) {
	c := testCC(t, "reno cubic")
	if _, err := c.allow("k", []string{"bbr"}); err != nil {
		t.Fatal(err)
	}
	later := ccList{sysctl: c.sysctl, dir: c.dir} // nothing carried over in memory
	if err := later.restore("k"); err != nil {
		t.Fatal(err)
	}
	if got := c.get(t); got != "reno cubic" {
		t.Errorf("after down: %q", got)
	}
}

// Labs starting and stopping at once never undo each other's additions.
func TestCongestionControlsConcurrent(t *testing.T) {
	c := testCC(t, "reno")
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lab := fmt.Sprint("l", i)
			own := fmt.Sprint("cc", i)
			for range 20 {
				if _, err := c.allow(lab, []string{own, "shared"}); err != nil {
					t.Error(err)
					return
				}
				// Read under the lock: a file, unlike the sysctl, is not
				// replaced in one write.
				lk, err := waitLock(filepath.Join(c.dir, "cc.lock"))
				if err != nil {
					t.Error(err)
					return
				}
				if l, _ := c.read(); !slices.Contains(l, own) || !slices.Contains(l, "shared") {
					t.Errorf("%s is up but the list is %v", lab, l)
				}
				lk.release()
				if err := c.restore(lab); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if got := c.get(t); got != "reno" {
		t.Errorf("after every lab stopped: %q, want reno", got)
	}
}
