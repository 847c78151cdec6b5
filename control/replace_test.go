package control

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A finished capture takes the place of the file it replaces, with its
// mode; a link there is replaced, never written through.
func TestCaptureReplacesFile(t *testing.T) {
	dir := t.TempDir()
	file, victim := filepath.Join(dir, "c.pcap"), filepath.Join(dir, "victim")
	os.WriteFile(file, []byte("old"), 0o640)
	os.Chmod(file, 0o640)
	os.WriteFile(victim, []byte("not yours"), 0o600)
	link := filepath.Join(dir, "link.pcap")
	os.Symlink(victim, link)
	for _, path := range []string{file, link} {
		r, err := NewReplacement(path)
		if err != nil {
			t.Fatal(err)
		}
		r.WriteString("new")
		if err := r.Finish(true); err != nil {
			t.Fatalf("finish %s: %v", path, err)
		}
		st, err := os.Lstat(path)
		if b, _ := os.ReadFile(path); err != nil || !st.Mode().IsRegular() || string(b) != "new" {
			t.Errorf("%s after the capture: %v %v %q, want a file holding \"new\"", path, st.Mode(), err, b)
		}
	}
	if st, _ := os.Stat(file); st.Mode().Perm() != 0o640 {
		t.Errorf("replaced file has mode %v, want the old one's 0640", st.Mode().Perm())
	}
	if b, _ := os.ReadFile(victim); string(b) != "not yours" {
		t.Errorf("the link's target was written: %q", b)
	}
	r, _ := NewReplacement(file)
	r.WriteString("discarded")
	r.Finish(false)
	if b, _ := os.ReadFile(file); string(b) != "new" {
		t.Errorf("an abandoned replacement changed the file: %q", b)
	}
	if _, err := NewReplacement(filepath.Join(dir, "no", "such", "x.pcap")); err == nil || !strings.Contains(err.Error(), "capture file") {
		t.Errorf("capture into a missing folder: %v", err)
	}
}
