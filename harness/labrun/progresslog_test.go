package labrun

import (
	"bytes"
	"strings"
	"testing"
)

// A lab run's progress bar, redrawn with carriage returns on a terminal,
// is plain lines in a log file.
func TestProgressIsPlainLinesWhenNotATerminal(t *testing.T) {
	var log bytes.Buffer
	w := ProgressWriter(&log)
	if _, plain := w.(*plainLines); !plain {
		t.Fatal("ProgressWriter passed a buffer through unchanged")
	}
	for _, s := range []string{"\r[     ] 0/2  ETA ?       ", "\r[==   ] 1/2  ETA 3s        tcp size 64   ", "\r[=====] 2/2  ETA 0s      ", "\n", "note: done\n"} {
		w.Write([]byte(s))
	}
	want := "[     ] 0/2  ETA ?\n[==   ] 1/2  ETA 3s        tcp size 64\n[=====] 2/2  ETA 0s\nnote: done\n"
	if log.String() != want {
		t.Errorf("progress in a log:\n%q\nwant\n%q", log.String(), want)
	}
	if strings.Contains(log.String(), "\r") {
		t.Error("a carriage return reached the log")
	}
}
