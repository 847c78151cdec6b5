package main

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestCampaignFiles runs campaign for Slurm and Kubernetes: it writes the
// engine's files (their content is campaign's tests') and refuses bad
// calls as usage errors.
func TestCampaignFiles(t *testing.T) {
	dir := t.TempDir()
	for engine, names := range map[string][]string{"slurm": {"shards.sbatch", "merge.sbatch", "submit.sh"}, "kubernetes": {"campaign.yaml", "merge.yaml", "submit.sh"}} {
		out := filepath.Join(dir, engine)
		stdout, errOut, err := run(t, "campaign", "../../topologies/sw100.yaml", "--engine", engine, "--shards", "3", "--out", out, "--image", "example/atmlab:2")
		if err != nil {
			t.Fatalf("campaign --engine %s: %v\n%s", engine, err, errOut)
		}
		for _, n := range names {
			if !strings.Contains(stdout, "wrote "+filepath.Join(out, n)+"\n") {
				t.Errorf("campaign --engine %s did not say it wrote %s: %q", engine, n, stdout)
			}
			if fi, err := os.Stat(filepath.Join(out, n)); err != nil || n == "submit.sh" && fi.Mode()&0o111 == 0 {
				t.Errorf("%s: %v %v", n, fi, err)
			}
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "kubernetes", "campaign.yaml")); !strings.Contains(string(b), "image: example/atmlab:2") {
		t.Errorf("--image not in the manifest:\n%s", b)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--engine", "pbs", "--out", dir}, `unknown engine "pbs"`},
		{[]string{"--shards", "2", "--out", dir}, "campaign needs --engine slurm, kubernetes or local"},
		{[]string{"--engine", "slurm"}, "campaign needs --out DIR"},
		{[]string{"--engine", "slurm", "--out", dir, "--shards", "0"}, "--shards 0: use 1 to 1000"},
		{[]string{"--engine", "local", "--out", dir, "--clock", "both"}, "a campaign runs in one clock"},
	} {
		_, _, err := run(t, append([]string{"campaign", "../../topologies/sw100.yaml"}, tc.args...)...)
		var u usageError
		if err == nil || !errors.As(err, &u) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("campaign %q: %v, want a usage error saying %q", tc.args, err, tc.want)
		}
	}
}

// TestSlurmScriptsKeepHostileNames writes the Slurm files for a lab file and
// an --out whose names hold command substitutions, runs an array task, the
// merge and the submit script with stub atmlab and sbatch that record their
// arguments, and checks that nothing in the names ran and that each name
// reached its program unchanged.
func TestSlurmScriptsKeepHostileNames(t *testing.T) {
	dir := t.TempDir()
	lab := filepath.Join(dir, "x$(touch${IFS}P).yaml")
	out := filepath.Join(dir, "o$(touch${IFS}Q)")
	work := filepath.Join(dir, "work") // the scripts' working folder
	stubs := filepath.Join(dir, "bin")
	calls := filepath.Join(dir, "calls")
	src, err := os.ReadFile("../../topologies/sw100.yaml")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(lab, src, 0o644)
	os.Mkdir(work, 0o755)
	os.Mkdir(stubs, 0o755)
	// Each stub appends its name, working folder and arguments, NUL-separated, as one line.
	record := "{ printf '%s\\0' \"${0##*/}\" \"$PWD\" \"$@\"; echo; } >>" + calls + "\n"
	os.WriteFile(filepath.Join(stubs, "atmlab"), []byte("#!/bin/sh\n"+record), 0o755)
	os.WriteFile(filepath.Join(stubs, "sbatch"), []byte("#!/bin/sh\n"+record+"case \"$*\" in *merge*) echo 8;; *) echo '7;cluster';; esac\n"), 0o755)

	stdout, errOut, err := run(t, "campaign", lab, "--engine", "slurm", "--shards", "3", "--out", out, "--atmlab", filepath.Join(stubs, "atmlab"))
	if err != nil {
		t.Fatalf("campaign: %v\n%s", err, errOut)
	}
	if w := "submit: '" + out + "/submit.sh'\n"; !strings.Contains(stdout, w) {
		t.Errorf("campaign said %q, want the command to paste, %q", stdout, w)
	}
	for k := 1; k <= 3; k++ {
		os.Mkdir(filepath.Join(out, "shard-"+strconv.Itoa(k)), 0o755)
	}
	var said string
	for _, s := range []struct{ shell, script, env string }{
		{"bash", "shards.sbatch", "SLURM_ARRAY_TASK_ID=2"},
		{"bash", "merge.sbatch", ""},
		{"sh", "submit.sh", ""},
	} {
		cmd := exec.Command(s.shell, filepath.Join(out, s.script))
		cmd.Dir = work
		cmd.Env = []string{"PATH=" + stubs + ":/usr/bin:/bin", s.env}
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", s.shell, s.script, err, b)
		}
		said += string(b)
	}

	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && (d.Name() == "P" || d.Name() == "Q") {
			t.Errorf("a script ran a command from a name: %s exists", path)
		}
		return nil
	})
	b, _ := os.ReadFile(calls)
	var got [][]string
	for _, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		got = append(got, strings.Split(strings.TrimSuffix(line, "\x00"), "\x00"))
	}
	want := [][]string{
		{"atmlab", work, "lab", "run", lab, "--shard", "2/3", "--out", out + "/shard-2", "--append", "--clock", "real"},
		{"atmlab", work, "report", out + "/shard-1/", out + "/shard-2/", out + "/shard-3/", "--out", out},
		{"sbatch", out, "--parsable", "shards.sbatch"},
		{"sbatch", out, "--parsable", "--dependency=afterany:7", "merge.sbatch"},
	}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("the stubs were called with (name, folder, arguments)\n%q\nwant\n%q", got, want)
	}
	if w := "report: " + out + "/report.html\n"; !strings.Contains(said, w) {
		t.Errorf("submit.sh said %q, want it to name %q", said, w)
	}
}
