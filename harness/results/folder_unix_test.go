//go:build unix

package results

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestReadFileRefusesAFIFOAtOnce(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "results.jsonl"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := OpenRead(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	done := make(chan error, 1)
	go func() {
		done <- f.ReadLines(context.Background(), "results.jsonl", MaxLine, MaxRecordsBytes, func(int, []byte) error { return nil })
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "results.jsonl is not a regular file (a FIFO)") {
			t.Fatalf("ReadLines of a FIFO = %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("ReadLines of a FIFO waits for a writer")
	}
}

// As root: another user's folder is read (a merge's input) but never
// written into, and a hard link there to a file of another owner is not
// read.
func TestOpenRefusesAnotherUsersFolder(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give a folder to another user")
	}
	parent := t.TempDir()
	dir := filepath.Join(parent, "theirs")
	os.Mkdir(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "results.jsonl"), []byte("{}\n"), 0o644)
	rootOnly := filepath.Join(parent, "root-only")
	os.WriteFile(rootOnly, []byte("secret"), 0o600)
	if err := os.Link(rootOnly, filepath.Join(dir, "spec.json")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{dir, filepath.Join(dir, "results.jsonl")} {
		if err := os.Lchown(p, 65534, 65534); err != nil {
			t.Fatal(err)
		}
	}
	for _, open := range []func(string) (*Folder, error){Open, func(p string) (*Folder, error) { return Create(p, Force) }} {
		if _, err := open(dir); err == nil || !strings.Contains(err.Error(), dir+" belongs to uid 65534, not to you (uid 0) or root") {
			t.Fatalf("open another user's folder to write = %v", err)
		}
	}
	f, err := OpenRead(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.ReadFile("results.jsonl", 0); err != nil {
		t.Fatalf("reading another user's results: %v", err)
	}
	if _, err := f.ReadFile("spec.json", 0); err == nil || !strings.Contains(err.Error(), "is a hard link to a file of uid 0") {
		t.Fatalf("reading a hard link to root's file = %v", err)
	}
	if err := f.WriteFile("x", nil, 0o644); err == nil {
		t.Fatal("a folder opened to read was written")
	}
}
