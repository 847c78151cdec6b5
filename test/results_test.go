//go:build integration

package test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/atmlab/atmlab/internal/labtest"
)

// hostileLab is a lab measured in virtual time: a real results folder to
// render and merge, no namespaces.
var hostileLab = labtest.Lab("two-hosts", "hostile", `experiments:
  - {name: rr, from: h1, to: h2, tests: [TCP_RR], sizes: [1, 64], duration: 100ms}
`)

// A normal user's results folder is untrusted: its report.md, report.html
// and results.csv are links to a root-only file, its spec.json a link to
// it too, and another of its entries a link to a folder of root's. Root's
// report, report --out, a merge and lab run --out never write through a
// link or into the user's folder, and never show the file's contents;
// each says why.
//
//	/tmp/…/root-only/shadow   0600 root      <- the links' target
//	/tmp/…/evil/              uid 65534      report.md, report.html, results.csv,
//	                                         spec.json -> shadow; out -> root-dir/
//	/tmp/…/good/              root           a virtual lab run's folder
func TestRootNeverWritesThroughAUsersFolder(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: it gives a folder to uid 65534")
	}
	base := t.TempDir()
	secretDir := filepath.Join(base, "root-only")
	os.Mkdir(secretDir, 0o700)
	secret := filepath.Join(secretDir, "shadow")
	const body = "root:$y$j9T$notahash:20000:0:99999:7:::\n"
	if err := os.WriteFile(secret, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	rootDir := filepath.Join(base, "root-dir")
	os.Mkdir(rootDir, 0o755)
	checkUntouched := func(what string) {
		t.Helper()
		if b, err := os.ReadFile(secret); err != nil || string(b) != body {
			t.Fatalf("after %s the root-only file holds %.60q (%v)", what, b, err)
		}
		if names, _ := os.ReadDir(rootDir); len(names) != 0 {
			t.Fatalf("after %s root's folder holds %v", what, names)
		}
	}

	lab := filepath.Join(base, "hostile.yaml")
	os.WriteFile(lab, []byte(hostileLab), 0o644)
	good := filepath.Join(base, "good")
	if b, err := exec.Command(atmlab, "lab", "run", lab, "--clock", "virtual", "--out", good).CombinedOutput(); err != nil {
		t.Fatalf("lab run: %v\n%s", err, b)
	}
	// The user's folder: a copy of good's results, and the links.
	evil := filepath.Join(base, "evil")
	os.Mkdir(evil, 0o755)
	for _, n := range []string{"lab.yaml", "campaign.json", "results.jsonl"} {
		b, err := os.ReadFile(filepath.Join(good, n))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(evil, n), b, 0o644)
	}
	for _, n := range []string{"report.md", "report.html", "results.csv", "spec.json"} {
		if err := os.Symlink(secret, filepath.Join(evil, n)); err != nil {
			t.Fatal(err)
		}
	}
	os.Symlink(rootDir, filepath.Join(evil, "out"))
	entries, _ := os.ReadDir(evil)
	for _, e := range append(entries, nil) {
		p := evil
		if e != nil {
			p = filepath.Join(evil, e.Name())
		}
		if err := os.Lchown(p, 65534, 65534); err != nil {
			t.Fatal(err)
		}
	}

	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"report", []string{"report", evil}, evil + " belongs to uid 65534, not to you (uid 0) or root"},
		{"report --out the user's folder", []string{"report", good, "--out", evil}, evil + " belongs to uid 65534"},
		{"report --out a link in it", []string{"report", good, "--out", filepath.Join(evil, "out")}, "results folder " + filepath.Join(evil, "out") + " is a symbolic link"},
		{"a merge of the user's folder", []string{"report", evil, "--out", filepath.Join(base, "merged")}, filepath.Join(evil, "spec.json") + " is a symbolic link"},
		{"lab run --out the user's folder", []string{"lab", "run", lab, "--clock", "virtual", "--force", "--out", evil}, evil + " belongs to uid 65534"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := exec.Command(atmlab, tc.args...).CombinedOutput()
			if err == nil || !strings.Contains(string(b), tc.want) {
				t.Fatalf("atmlab %s: %v\n%s\nwant an error saying %q", strings.Join(tc.args, " "), err, b, tc.want)
			}
			if strings.Contains(string(b), "notahash") || strings.Contains(string(b), "'r'") {
				t.Fatalf("the error shows the root-only file: %s", b)
			}
			checkUntouched("atmlab " + strings.Join(tc.args, " "))
		})
	}
	// Nothing the merge wrote holds the file.
	filepath.WalkDir(filepath.Join(base, "merged"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if b, _ := os.ReadFile(p); strings.Contains(string(b), "notahash") {
				t.Errorf("%s holds the root-only file", p)
			}
		}
		return nil
	})
	// The links are still links, the user's files as they were.
	for _, n := range []string{"report.md", "report.html", "results.csv", "spec.json"} {
		if st, err := os.Lstat(filepath.Join(evil, n)); err != nil || st.Mode()&os.ModeSymlink == 0 {
			t.Errorf("%s is no longer the user's link: %v", n, err)
		}
	}
}
