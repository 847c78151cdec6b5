package main

import (
	"errors"
	"os"
	"path/filepath"
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
