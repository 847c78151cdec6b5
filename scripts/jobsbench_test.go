package scripts

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fakeAtmlab is a stand-in for atmlab lab run: it writes a results.jsonl
// into --out whose timestamp differs every run and whose record differs
// between --jobs 1 and 2 when DIFFER is set; with FAIL set it fails.
const fakeAtmlab = `#!/bin/sh
while [ $# -gt 0 ]; do
	case $1 in --out) out=$2 ;; --jobs) jobs=$2 ;; esac
	shift
done
[ -n "$FAIL" ] && { echo "lab file broken" >&2; exit 1; }
mkdir -p "$out"
rec=1
[ -n "$DIFFER" ] && rec=$jobs
printf '{"at":"%s","figure":%s}\n' "$(date +%N)" "$rec" >"$out/results.jsonl"
`

// TestJobsBenchComparesTheRunsBytes runs scripts/jobs-bench.sh on a
// stand-in atmlab: each round's line says whether --jobs 1 and 2 wrote
// the same records (timestamps aside) and the summary gives the ratios;
// records that differ fail the script, and so does a run that fails,
// showing its log.
func TestJobsBenchComparesTheRunsBytes(t *testing.T) {
	if _, err := os.Stat("/usr/bin/time"); err != nil {
		t.Skip("no /usr/bin/time")
	}
	bin := filepath.Join(t.TempDir(), "atmlab")
	if err := os.WriteFile(bin, []byte(fakeAtmlab), 0o755); err != nil {
		t.Fatal(err)
	}
	run := func(env ...string) (string, error) {
		cmd := exec.Command("bash", "jobs-bench.sh", "2")
		cmd.Env = append(append(os.Environ(), "ATMLAB="+bin), env...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := run()
	if err != nil || strings.Count(out, "| the same |") != 2 || !strings.Contains(out, "over 2 rounds") {
		t.Errorf("jobs-bench.sh on equal records: %v\n%s\nwant two rounds, each the same, and the summary", err, out)
	}
	out, err = run("DIFFER=1")
	if err == nil || !strings.Contains(out, "| DIFFER |") {
		t.Errorf("jobs-bench.sh on differing records: %v\n%s\nwant a failure and DIFFER", err, out)
	}
	out, err = run("FAIL=1")
	if err == nil || !strings.Contains(out, "lab file broken") || strings.Contains(out, "rounds") {
		t.Errorf("jobs-bench.sh on a failing run: %v\n%s\nwant a failure with the run's log and no summary", err, out)
	}
}
