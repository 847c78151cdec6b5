package campaign

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/atmlab/atmlab/harness/clock"
)

// TestSlurmFiles runs the written scripts with a fake atmlab and sbatch:
// array task 3 runs shard 3/4, the merge reads every shard folder, and the
// submit script queues the merge after the whole array (afterany).
func TestSlurmFiles(t *testing.T) {
	dir := t.TempDir()
	fake := filepath.Join(dir, "bin")
	os.Mkdir(fake, 0o755)
	log := filepath.Join(dir, "calls")
	os.WriteFile(filepath.Join(fake, "atmlab"), []byte("#!/bin/sh\necho \"$@\"\n"), 0o755)
	os.WriteFile(filepath.Join(fake, "sbatch"), []byte("#!/bin/sh\necho \"$@\" >>"+log+"\ncase \"$*\" in *merge*) echo 8;; *) echo '7;cluster';; esac\n"), 0o755)
	out := filepath.Join(dir, "c")
	p := Plan{Lab: "/labs/it's.yaml", Name: "lab", Shards: 4, Out: out, Clock: clock.Virtual, Quick: true, Binary: filepath.Join(fake, "atmlab")}
	fs, err := SlurmFiles(p)
	m := files(t, fs, err)
	os.MkdirAll(out, 0o755)
	for name, data := range m {
		os.WriteFile(filepath.Join(out, name), data, 0o755)
	}
	for _, line := range []string{"#SBATCH --array=1-4\n", "#SBATCH --output=" + out + "/shard-%a.log\n", "#SBATCH --job-name=atmlab-lab\n"} {
		if !strings.Contains(string(m[SlurmShards]), line) {
			t.Errorf("%s lacks %q:\n%s", SlurmShards, line, m[SlurmShards])
		}
	}
	run := func(script string, env ...string) string {
		t.Helper()
		cmd := exec.Command("/bin/sh", filepath.Join(out, script))
		cmd.Env = append([]string{"PATH=" + fake + ":/usr/bin:/bin"}, env...)
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", script, err, b)
		}
		return strings.TrimSpace(string(b))
	}
	if got, want := run(SlurmShards, "SLURM_ARRAY_TASK_ID=3"), "lab run /labs/it's.yaml --shard 3/4 --out "+out+"/shard-3 --append --clock virtual --quick"; got != want {
		t.Errorf("array task 3 ran atmlab %q, want %q", got, want)
	}
	for k := 1; k <= 4; k++ {
		os.Mkdir(p.ShardDir(k), 0o755)
		os.WriteFile(p.ShardDir(k)+".log", nil, 0o644) // the task's log, beside its folder: not merged
	}
	if got, want := run(SlurmMerge), "report "+out+"/shard-1/ "+out+"/shard-2/ "+out+"/shard-3/ "+out+"/shard-4/ --out "+out; got != want {
		t.Errorf("merge ran atmlab %q, want %q", got, want)
	}
	if got := run(SlurmSubmit); !strings.Contains(got, "shards: job 7 (array 1-4), merge: job 8") {
		t.Errorf("submit said %q", got)
	}
	calls, _ := os.ReadFile(log)
	if want := "--parsable shards.sbatch\n--parsable --dependency=afterany:7 merge.sbatch\n"; string(calls) != want {
		t.Errorf("submit called sbatch with\n%s, want\n%s", calls, want)
	}

	p.Out = "/scratch/my campaign"
	if _, err := SlurmFiles(p); err == nil || !strings.Contains(err.Error(), "choose another --out") {
		t.Errorf("SlurmFiles(out with a space) = %v, want the error", err)
	}
}

func TestPlan(t *testing.T) {
	for _, tc := range []struct {
		name, lab, want string
	}{
		{"plain", "sw100", "atmlab-sw100"},
		{"case and symbols", "My Lab_2", "atmlab-my-lab-2"},
		{"empty", "__", "atmlab-lab"},
		{"long", strings.Repeat("a", 50), "atmlab-" + strings.Repeat("a", 33)},
	} {
		if got := (Plan{Name: tc.lab}).JobName(); got != tc.want {
			t.Errorf("%s: JobName(%q) = %q, want %q", tc.name, tc.lab, got, tc.want)
		}
	}
	ok := Plan{Lab: "/a.yaml", Out: "/o", Shards: 4, Clock: clock.Virtual}
	for _, tc := range []struct {
		name string
		edit func(*Plan)
		want string
	}{
		{"fine", func(*Plan) {}, ""},
		{"no shards", func(p *Plan) { p.Shards = 0 }, "--shards 0: use 1 to 1000"},
		{"too many", func(p *Plan) { p.Shards = 1001 }, "--shards 1001: use 1 to 1000"},
		{"no such clock", func(p *Plan) { p.Clock = clock.Clock(7) }, `a campaign runs in one clock, use --clock real or virtual`},
		{"relative", func(p *Plan) { p.Out = "o" }, `campaign paths must be absolute`},
		{"NUL in a path", func(p *Plan) { p.Lab = "/a\x00b.yaml" }, `campaign paths cannot hold a NUL byte`},
		{"line break in the name", func(p *Plan) { p.Name = "x\ntouch P" }, `holds a control character`},
		{"line break in the image", func(p *Plan) { p.Image = "img\nkind: Pod" }, `holds a control character`},
	} {
		p := ok
		tc.edit(&p)
		err := p.Check()
		if (tc.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Check() = %v, want %q", tc.name, err, tc.want)
		}
	}
	for _, tc := range []struct {
		clock              string
		shards, procs, par int
	}{
		{"real", 4, 8, 1}, {"virtual", 4, 2, 2}, {"virtual", 4, 8, 4}, {"virtual", 1, 8, 1}, {"virtual", 4, 0, 1},
	} {
		if got := Parallel(clockNamed(tc.clock), tc.shards, tc.procs); got != tc.par {
			t.Errorf("Parallel(%s, %d, %d) = %d, want %d", tc.clock, tc.shards, tc.procs, got, tc.par)
		}
	}
	for _, s := range engineNames {
		if e, err := ParseEngine(s); err != nil || e.String() != s {
			t.Errorf("ParseEngine(%q) = %v, %v", s, e, err)
		}
	}
	if _, err := ParseEngine("pbs"); err == nil || err.Error() != `unknown engine "pbs": use --engine slurm, kubernetes or local` {
		t.Errorf("ParseEngine(pbs) = %v", err)
	}
}

// A campaign runs in one clock: --clock both is refused, with the fix.
func TestCampaignClockIsOneClock(t *testing.T) {
	for _, s := range []string{"both", "", "wall"} {
		if _, err := ParseClock(s); err == nil || !strings.Contains(err.Error(), `a campaign runs in one clock, use --clock real or virtual`) {
			t.Errorf("ParseClock(%q) = %v, want a refusal", s, err)
		}
	}
	for _, c := range clock.All {
		if got, err := ParseClock(c.String()); err != nil || got != c {
			t.Errorf("ParseClock(%q) = %v, %v", c, got, err)
		}
	}
}
