package results

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestStampedFolderReadsItsFormat(t *testing.T) {
	f, err := Create(t.TempDir(), Fresh)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Stamp(); err != nil {
		t.Fatal(err)
	}
	if v, err := f.Format(); err != nil || v != Format {
		t.Fatalf("format %d (%v), want %d", v, err, Format)
	}
}

func TestFolderWithoutFormatReadsAsTheFirst(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "results.jsonl"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := OpenRead(dir)
	if err != nil {
		t.Fatalf("a folder written before format versions: %v", err)
	}
	defer f.Close()
	if v, err := f.Format(); err != nil || v != 1 {
		t.Fatalf("format %d (%v), want 1", v, err)
	}
}

func TestOpenRefusesANewerOrBadFormatNamingTheFile(t *testing.T) {
	for body, want := range map[string]string{
		"2\n":   "results format 2, and this atmlab reads up to 1",
		"two\n": `"two" is not a results folder's format version`,
		"0\n":   `"0" is not a results folder's format version`,
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, FormatFile), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, open := range []func(string) (*Folder, error){Open, OpenRead} {
			f, err := open(dir)
			if err == nil {
				f.Close()
				t.Fatalf("format %q opened", body)
			}
			if !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), filepath.Join(dir, FormatFile)) {
				t.Errorf("format %q: %v, want the file named and %q", body, err, want)
			}
		}
	}
}
