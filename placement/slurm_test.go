package placement

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/atmlab/atmlab/campaign"
)

// slurmScripts writes the split's Slurm files into a fresh folder, a
// fake atmlab (it logs its arguments to calls; its up waits for SIGTERM
// when wait is set) and a fake scontrol that expands node lists.
func slurmScripts(t *testing.T, s *Split, wait bool) (dir, calls string) {
	t.Helper()
	dir = t.TempDir()
	s.Out = filepath.Join(dir, "out")
	os.Mkdir(s.Out, 0o755)
	s.Binary = filepath.Join(dir, "atmlab")
	calls = filepath.Join(dir, "calls")
	up := filepath.Join(dir, "up") // there while the part is up: its stats answer only then
	script := "#!/bin/bash\necho \"$*\" >>" + calls + "\nif [ \"$1\" = stats ]; then [ -e " + up + " ] && echo '{\"cuts\": []}'; exit; fi\n"
	if wait {
		script += "[ \"$1\" = up ] && { touch " + up + "; echo \"lab x ready\"; trap 'rm " + up + "; echo TERM >>" + calls + "; exit 0' TERM; while :; do sleep 0.05; done; }\n"
	}
	os.WriteFile(s.Binary, []byte(script), 0o755)
	os.WriteFile(filepath.Join(dir, "scontrol"), []byte("#!/bin/sh\n[ \"$1 $2\" = 'show hostnames' ] && case $3 in 'n[1-2]') printf 'n1\\nn2\\n';; 'n[1-3]') printf 'n1\\nn2\\nn3\\n';; n1) echo n1;; esac\n"), 0o755)
	fs, err := SlurmFiles(*s)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fs {
		os.WriteFile(filepath.Join(s.Out, f.Name), f.Data, os.FileMode(f.Mode))
	}
	return dir, calls
}

// task runs parts.sh as Slurm's task id of a step on nodes with tasks per
// node as Slurm writes them.
func task(dir string, s Split, id, nodes, perNode string) *exec.Cmd {
	cmd := exec.Command("/bin/bash", filepath.Join(s.Out, SlurmParts))
	cmd.Env = []string{"PATH=" + dir + ":/usr/bin:/bin", "SLURM_PROCID=" + id, "SLURM_STEP_NODELIST=" + nodes, "SLURM_STEP_TASKS_PER_NODE=" + perNode}
	return cmd
}

// TestSlurmTaskRunsItsPartWithPeersOnTheirNodes: each task starts its part
// with its peers at the nodes Slurm handed their tasks (block
// distribution, whatever the tasks per node), then the part's down.
func TestSlurmTaskRunsItsPartWithPeersOnTheirNodes(t *testing.T) {
	three := Split{File: "/labs/lab of 3.yaml", Lab: "three", Parts: []string{"a", "b", "c"}, Peers: [][]int{{1}, {0, 2}, {1}}, Engine: campaign.Slurm, Port: 47000}
	for _, tc := range []struct {
		nodes, perNode, id, want string
	}{
		{"n[1-2]", "1,2", "1", "up /labs/lab of 3.yaml --part b --cut-listen 0.0.0.0:47001 --cut-peer a=n1:47000,c=n2:47002"},
		{"n[1-3]", "1(x3)", "1", "up /labs/lab of 3.yaml --part b --cut-listen 0.0.0.0:47001 --cut-peer a=n1:47000,c=n3:47002"},
		{"n[1-2]", "2,1", "1", "up /labs/lab of 3.yaml --part b --cut-listen 0.0.0.0:47001 --cut-peer a=n1:47000,c=n2:47002"},
		{"n[1-2]", "2,1", "2", "up /labs/lab of 3.yaml --part c --cut-listen 0.0.0.0:47002 --cut-peer b=n1:47001"},
		{"n1", "3", "0", "up /labs/lab of 3.yaml --part a --cut-listen 0.0.0.0:47000 --cut-peer b=n1:47001"},
	} {
		s := three
		dir, calls := slurmScripts(t, &s, false)
		out, err := task(dir, s, tc.id, tc.nodes, tc.perNode).CombinedOutput()
		if err != nil {
			t.Fatalf("%+v: %v\n%s", tc, err, out)
		}
		b, _ := os.ReadFile(calls)
		part := s.Parts[tc.id[0]-'0']
		want := tc.want + "\ndown three-" + part + "\n"
		if string(b) != want {
			t.Errorf("%+v: atmlab ran\n%s\nwant\n%s", tc, b, want)
		}
		log, _ := os.ReadFile(filepath.Join(s.Out, "part-"+part+".log"))
		if !strings.Contains(string(log), "part "+part+" ended: exit status 0") {
			t.Errorf("part-%s.log:\n%s", part, log)
		}
	}
}

// TestSlurmTaskStopsItsPart: once the stop file appears, the task keeps
// its part's stats (the part still answers), stops the part, waits for it
// and runs its down, and ends as its part did. On Slurm's own SIGTERM to
// the task's whole group (scancel, the time limit) it stops too and runs
// the down: a part brought down leaves nothing.
func TestSlurmTaskStopsItsPart(t *testing.T) {
	for _, how := range []string{"stop file", "SIGTERM"} {
		s := testSplit(t, campaign.Slurm)
		dir, calls := slurmScripts(t, &s, true)
		cmd := task(dir, s, "0", "n1", "2")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // a task's group, as slurmstepd makes it
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		log := filepath.Join(s.Out, "part-left.log")
		for end := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			if b, _ := os.ReadFile(log); strings.Contains(string(b), "ready") {
				break
			}
			if time.Now().After(end) {
				t.Fatal("the part never said ready")
			}
		}
		if how == "stop file" {
			os.WriteFile(filepath.Join(s.Out, SlurmStop), nil, 0o644)
		} else {
			syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) // as slurmstepd does: every process of the task
		}
		if err := cmd.Wait(); err != nil {
			t.Fatalf("%s: %v", how, err)
		}
		b, _ := os.ReadFile(calls)
		got := strings.Split(strings.TrimSpace(string(b)), "\n")
		if got[0] != "up /labs/two parts.yaml --part left --cut-listen 0.0.0.0:47000 --cut-peer right=n1:47001" || got[len(got)-1] != "down twoparts-left" || !slices.Contains(got, "TERM") {
			t.Errorf("%s: atmlab ran\n%s", how, b)
		}
		stats, _ := os.ReadFile(filepath.Join(s.Out, "part-left.stats.json"))
		if how == "stop file" && (string(stats) != "{\"cuts\": []}\n" || !slices.Equal(got[1:3], []string{"stats twoparts-left -o json", "TERM"})) {
			t.Errorf("%s: part-left.stats.json %q; atmlab ran\n%s", how, stats, b)
		}
	}
}

// TestSlurmJobIsOneStepOfATaskPerPart: the batch script asks for a task
// per part and runs parts.sh in one srun step.
func TestSlurmJobIsOneStepOfATaskPerPart(t *testing.T) {
	s := testSplit(t, campaign.Slurm)
	fs, err := SlurmFiles(s)
	if err != nil {
		t.Fatal(err)
	}
	job := string(fs[0].Data)
	for _, want := range []string{"#SBATCH --job-name=atmlab-twoparts-split\n", "#SBATCH --ntasks=2\n", "#SBATCH --output=" + s.Out + "/split.log\n",
		"exec srun --distribution=block --kill-on-bad-exit=1 /bin/bash " + s.Out + "/parts.sh\n"} {
		if !strings.Contains(job, want) {
			t.Errorf("no %q in\n%s", want, job)
		}
	}
	s.Out = "/scratch/my results"
	if _, err := SlurmFiles(s); err == nil || !strings.Contains(err.Error(), "cannot hold spaces") {
		t.Errorf("a folder with a space: %v", err)
	}
}
