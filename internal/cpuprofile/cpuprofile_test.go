package cpuprofile

import (
	"os"
	"path/filepath"
	"testing"
)

// A profile started and stopped leaves a non-empty file; a path that
// cannot be made is an error.
func TestStartWritesAProfile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cpu.prof")
	stop, err := Start(path)
	if err != nil {
		t.Fatal(err)
	}
	stop()
	if st, err := os.Stat(path); err != nil || st.Size() == 0 {
		t.Fatalf("profile: %v %v", st, err)
	}
	if _, err := Start(filepath.Join(t.TempDir(), "no", "such", "cpu.prof")); err == nil {
		t.Fatal("a profile in a missing folder started")
	}
}
