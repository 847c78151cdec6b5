//go:build unix

package main

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/atmlab/atmlab/harness/labrun"
)

// report on a folder whose results.jsonl is a FIFO answers at once,
// rather than waiting for a writer.
func TestReportRefusesAFIFOAtOnce(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, labrun.RecordsFile), 0o644); err != nil {
		t.Skip(err)
	}
	done := make(chan error, 1)
	go func() { _, _, err := run(t, "report", dir); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "results.jsonl is not a regular file (a FIFO)") {
			t.Fatalf("report of a FIFO: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("report waits on a FIFO")
	}
}
