package results

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// secretFile is a file the folder's links point at: what must be neither
// read nor written through them.
func secretFile(t *testing.T) (string, string) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "secret")
	const body = "root:$y$secret\n"
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p, body
}

func untouched(t *testing.T, path, body string) {
	t.Helper()
	if b, err := os.ReadFile(path); err != nil || string(b) != body {
		t.Fatalf("%s now holds %q (%v), want it untouched", path, b, err)
	}
}

func TestWriteFileReplacesLinkNotItsTarget(t *testing.T) {
	secret, body := secretFile(t)
	dir := t.TempDir()
	for _, n := range []string{"report.md", "report.html"} {
		if err := os.Symlink(secret, filepath.Join(dir, n)); err != nil {
			t.Fatal(err)
		}
	}
	f, err := Create(dir, Force)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, n := range []string{"report.md", "report.html"} {
		if err := f.WriteFile(n, []byte("<html>"), 0o644); err != nil {
			t.Fatalf("WriteFile(%s) = %v", n, err)
		}
		if st, err := os.Lstat(filepath.Join(dir, n)); err != nil || !st.Mode().IsRegular() || st.Mode().Perm() != 0o644 {
			t.Fatalf("%s after WriteFile: %v, %v; want a regular 0644 file", n, st.Mode(), err)
		}
	}
	untouched(t, secret, body)
	// Nothing of the temporary files is left.
	names, _ := f.List()
	if strings.Join(names, " ") != "report.html report.md" {
		t.Fatalf("folder holds %q", names)
	}
}

func TestCreateAndAppendNeverFollowALink(t *testing.T) {
	secret, body := secretFile(t)
	dir := t.TempDir()
	os.Symlink(secret, filepath.Join(dir, "results.jsonl"))
	os.Symlink(secret, filepath.Join(dir, "results.csv"))
	f, err := Create(dir, Append)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, _, err := f.Append("results.jsonl"); err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "results.jsonl")+" is a symbolic link") {
		t.Fatalf("Append through a link = %v", err)
	}
	w, err := f.Create("results.csv") // replaces the link
	if err != nil {
		t.Fatal(err)
	}
	w.WriteString("x\n")
	w.Close()
	untouched(t, secret, body)
	// A name with directories: none of them may be a link.
	os.Symlink(filepath.Dir(secret), filepath.Join(dir, "refs"))
	if err := f.WriteFile("refs/secret", []byte("x"), 0o644); err == nil || !strings.Contains(err.Error(), "symbolic link or not a directory") {
		t.Fatalf("WriteFile through a linked directory = %v", err)
	}
	untouched(t, secret, body)
	for _, bad := range []string{"../x", "/etc/passwd", ""} {
		if err := f.WriteFile(bad, nil, 0o644); err == nil {
			t.Errorf("WriteFile(%q) wrote outside the folder", bad)
		}
	}
}

func TestReadFileRefusesLinksAndNamesTheFile(t *testing.T) {
	secret, body := secretFile(t)
	dir := t.TempDir()
	os.Symlink(secret, filepath.Join(dir, "spec.json"))
	f, err := OpenRead(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	_, err = f.ReadFile("spec.json", 0)
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "spec.json")+" is a symbolic link") || strings.Contains(err.Error(), body[:1]+"'") {
		t.Fatalf("ReadFile of a link = %v", err)
	}
	if _, err := f.ReadFile("missing.json", 0); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("ReadFile of a missing file = %v, want ErrNotExist", err)
	}
}

func TestReadLinesCapsLinesAndFileWithFileAndLine(t *testing.T) {
	dir := t.TempDir()
	long := "{}\n{}\n" + strings.Repeat("x", MaxLine+1) + "\n"
	os.WriteFile(filepath.Join(dir, "results.jsonl"), []byte(long), 0o644)
	f, _ := OpenRead(dir)
	defer f.Close()
	n := 0
	err := f.ReadLines(context.Background(), "results.jsonl", MaxLine, MaxRecordsBytes, func(int, []byte) error { n++; return nil })
	if want := filepath.Join(dir, "results.jsonl") + ":3: line longer than 1048576 bytes"; err == nil || !strings.HasPrefix(err.Error(), want) || n != 2 {
		t.Fatalf("ReadLines = %v after %d lines, want %q after 2", err, n, want)
	}
	if err := f.ReadLines(context.Background(), "results.jsonl", MaxLine, 100, func(int, []byte) error { return nil }); err == nil || !strings.Contains(err.Error(), "results.jsonl is ") {
		t.Fatalf("ReadLines beyond the file cap = %v", err)
	}
	// A caller's error carries the line.
	os.WriteFile(filepath.Join(dir, "a"), []byte("1\n2\r\n3"), 0o644)
	var got []string
	err = f.ReadLines(context.Background(), "a", MaxLine, MaxRecordsBytes, func(l int, b []byte) error {
		got = append(got, fmt.Sprintf("%d:%s", l, b))
		if l == 3 {
			return errors.New("bad")
		}
		return nil
	})
	if strings.Join(got, " ") != "1:1 2:2 3:3" || err == nil || err.Error() != filepath.Join(dir, "a")+":3: bad" {
		t.Fatalf("lines %q, err %v", got, err)
	}
}

func TestCreateRefusesAFolderThatHoldsFiles(t *testing.T) {
	dir := t.TempDir()
	if f, err := Create(dir, Fresh); err != nil { // empty: fine
		t.Fatal(err)
	} else {
		f.Close()
	}
	os.WriteFile(filepath.Join(dir, "results.jsonl"), []byte("{}\n"), 0o644)
	if _, err := Create(dir, Fresh); !errors.Is(err, ErrNotEmpty) || !strings.Contains(err.Error(), "holds results.jsonl") {
		t.Fatalf("Create(Fresh) of a folder with results = %v", err)
	}
	for _, m := range []Mode{Append, Force} {
		f, err := Create(dir, m)
		if err != nil {
			t.Fatalf("Create(%d) = %v", m, err)
		}
		f.Close()
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "results.jsonl")); string(b) != "{}\n" {
		t.Fatal("Create changed a file")
	}
	// A new folder under new parents is made.
	f, err := Create(filepath.Join(dir, "a", "b"), Fresh)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
}

func TestOpenRefusesALinkedFolder(t *testing.T) {
	real := t.TempDir()
	link := filepath.Join(t.TempDir(), "out")
	os.Symlink(real, link)
	for _, open := range []func(string) (*Folder, error){Open, OpenRead, func(p string) (*Folder, error) { return Create(p, Force) }} {
		if _, err := open(link + "/"); err == nil || !strings.Contains(err.Error(), "results folder "+link+" is a symbolic link") {
			t.Fatalf("open of a linked folder = %v", err)
		}
	}
	if names, _ := os.ReadDir(real); len(names) != 0 {
		t.Fatal("something was written through the link")
	}
}

func TestDecodeJSONNamesTheLine(t *testing.T) {
	var v struct{ Points int }
	err := DecodeJSON("c.json", []byte("{\n  \"Points\": \"x\"\n}"), &v)
	if err == nil || !strings.HasPrefix(err.Error(), "c.json:2: ") {
		t.Fatalf("DecodeJSON = %v", err)
	}
	err = DecodeJSON("c.json", []byte("{\n\n  oops"), &v)
	if err == nil || !strings.HasPrefix(err.Error(), "c.json:3: ") {
		t.Fatalf("DecodeJSON = %v", err)
	}
}

// Lines never panics, gives each line within the cap, and stops at the
// first line beyond it.
func FuzzLines(f *testing.F) {
	f.Add([]byte("{}\n{}\n"), 4)
	f.Add([]byte("a\r\nbb\n\nccc"), 2)
	f.Add([]byte(strings.Repeat("x", 100)), 10)
	f.Fuzz(func(t *testing.T, data []byte, maxLine int) {
		maxLine = 1 + int(uint(maxLine)%200)
		total := 0
		err := Lines(context.Background(), "f", strings.NewReader(string(data)), maxLine, 1000, func(l int, b []byte) error {
			if len(b) > maxLine+1 {
				t.Fatalf("line %d of %d bytes, cap %d", l, len(b), maxLine)
			}
			total += len(b)
			return nil
		})
		if err == nil && total > len(data) {
			t.Fatalf("read %d bytes of %d", total, len(data))
		}
		if err != nil && !strings.HasPrefix(err.Error(), "f:") {
			t.Fatalf("error without file and line: %v", err)
		}
	})
}

// ListDir lists a folder under the results folder, sorted; a missing one
// is empty, and one that is a link (to a folder outside) is refused, not
// followed.
func TestListDirDoesNotFollowALink(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	os.MkdirAll(filepath.Join(dir, "sub"), 0o755)
	os.WriteFile(filepath.Join(dir, "sub", "b"), nil, 0o644)
	os.WriteFile(filepath.Join(dir, "sub", "a"), nil, 0o644)
	os.WriteFile(filepath.Join(outside, "secret"), nil, 0o644)
	if err := os.Symlink(outside, filepath.Join(dir, "link")); err != nil {
		t.Skip(err)
	}
	f, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if names, err := f.ListDir("sub"); err != nil || !slices.Equal(names, []string{"a", "b"}) {
		t.Errorf("ListDir(sub) = %v, %v", names, err)
	}
	if names, err := f.ListDir("none"); err != nil || names != nil {
		t.Errorf("ListDir(none) = %v, %v; want nothing", names, err)
	}
	if names, err := f.ListDir("link"); err == nil {
		t.Errorf("ListDir through a link listed %v", names)
	}
	if _, err := f.ListDir("../x"); err == nil {
		t.Error("ListDir outside the folder")
	}
}
