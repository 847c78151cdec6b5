package campaign

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/atmlab/atmlab/harness/clock"
)

// fakeAtmlab writes a script that stands in for atmlab: lab run notes when
// its shard starts and ends (in the file named by the environment's
// EVENTS), waits (up to 10 s) until WAITFOR shards have started, makes its
// folder, or fails for shard 2 when FAIL2 is set; report notes its
// arguments.
func fakeAtmlab(t *testing.T) string {
	bin := filepath.Join(t.TempDir(), "atmlab")
	os.WriteFile(bin, []byte(`#!/bin/sh
if [ "$1" = report ]; then echo "report $*" >>"$EVENTS"; exit 0; fi
k=${5%/*}
echo "start $k $GOMAXPROCS" >>"$EVENTS"
i=0
while [ -n "$WAITFOR" ] && [ "$(grep -c start "$EVENTS")" -lt "$WAITFOR" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done
echo "end $k" >>"$EVENTS"
if [ -n "$FAIL2" ] && [ "$k" = 2 ]; then echo "shard 2 broke"; exit 1; fi
mkdir -p "$7"
`), 0o755)
	return bin
}

// TestRunLocal checks the local engine's order: real-time shards strictly
// one after another, virtual-time shards side by side (each child its part
// of GOMAXPROCS), and a merge of the folders there are even when a shard
// failed, which the error names.
func TestRunLocal(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	bin := fakeAtmlab(t)
	for _, tc := range []struct {
		clock, fail string
		maxAtOnce   int
		procs       string
		wantErr     string
	}{
		{"real", "", 1, "", ""},
		{"virtual", "", 4, "1", ""},
		{"virtual", "1", 4, "1", "shard(s) 2 of 4 failed"},
	} {
		dir := t.TempDir()
		events := filepath.Join(dir, "events")
		p := Plan{Lab: "/lab.yaml", Name: "x", Shards: 4, Out: filepath.Join(dir, "out"), Clock: clockNamed(tc.clock), Binary: bin}
		var progress strings.Builder
		env := []string{"EVENTS=" + events, "FAIL2=" + tc.fail}
		if tc.clock == "virtual" {
			env = append(env, "WAITFOR=4") // each waits for all four: they run at once or the test takes 10 s and fails
		}
		err := RunLocal(context.Background(), p, env, &progress)
		if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("%s: RunLocal = %v, want %q", tc.clock, err, tc.wantErr)
		}
		b, _ := os.ReadFile(events)
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		atOnce, most := 0, 0
		var merged string
		for _, l := range lines {
			f := strings.Fields(l)
			switch f[0] {
			case "start":
				atOnce++
				most = max(most, atOnce)
				if len(f) > 2 && f[2] != tc.procs || len(f) == 2 && tc.procs != "" {
					t.Errorf("%s: a shard ran with GOMAXPROCS %q, want %q", tc.clock, f[2:], tc.procs)
				}
			case "end":
				atOnce--
			case "report":
				merged = l
			}
		}
		if most != tc.maxAtOnce {
			t.Errorf("%s: %d shards at once, want %d:\n%s", tc.clock, most, tc.maxAtOnce, b)
		}
		var want []string
		for k := 1; k <= 4; k++ {
			if !(tc.fail != "" && k == 2) {
				want = append(want, p.ShardDir(k))
			}
		}
		if w := "report report " + strings.Join(want, " ") + " --out " + p.Out; merged != w {
			t.Errorf("%s: merged with %q, want %q", tc.clock, merged, w)
		}
		if tc.fail != "" && !strings.Contains(progress.String(), "shard 2/4: atmlab lab run: exit status 1: shard 2 broke") {
			t.Errorf("progress does not say why shard 2 failed:\n%s", progress.String())
		}
	}
}

// TestRunLocalInterruptedQuotesItsMergeCommand checks that the merge command
// an interrupted campaign suggests, for pasting into a shell, holds the
// results folder as one quoted word however the folder is named.
func TestRunLocalInterruptedQuotesItsMergeCommand(t *testing.T) {
	out := filepath.Join(t.TempDir(), "o$(touch${IFS}Q) x")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p := Plan{Lab: "/lab.yaml", Name: "x", Shards: 2, Out: out, Clock: clock.Virtual, Binary: fakeAtmlab(t)}
	err := RunLocal(ctx, p, []string{"EVENTS=" + filepath.Join(t.TempDir(), "events")}, io.Discard)
	q := "'" + out + "'"
	if want := "atmlab report " + q + "/shard-*/ --out " + q + " merges them"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("RunLocal(interrupted) = %v, want it to suggest %q", err, want)
	}
}
