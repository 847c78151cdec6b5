//go:build integration

// A split lab placed by `atmlab up FILE --on ENGINE`: its two parts on a
// real one-node Slurm (one job, a task per part) and on this machine (two
// machine namespaces joined by a veth), brought up, then down by SIGINT,
// with nothing of the lab left.
package test

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/atmlab/atmlab/internal/labtest"
	"github.com/atmlab/atmlab/placement"
)

// placed is `atmlab up FILE --on ENGINE` running in the background.
type placed struct {
	t    *testing.T
	cmd  *exec.Cmd
	out  strings.Builder // what up said, line by line
	done chan error
}

// placeSplit starts cmd (an atmlab up --on) and waits for its ready line.
func placeSplit(t *testing.T, cmd *exec.Cmd) *placed {
	t.Helper()
	p := &placed{t: t, cmd: cmd, done: make(chan error, 1)}
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan bool, 1)
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(stdout)
		seen := false
		for sc.Scan() {
			lines <- sc.Text()
			if !seen && strings.Contains(sc.Text(), ": ready (") {
				seen = true
				ready <- true
			}
		}
		close(lines)
		if !seen {
			ready <- false
		}
		p.done <- cmd.Wait()
	}()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			<-p.done
		}
	})
	collect := func() {
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					return
				}
				p.out.WriteString(l + "\n")
			default:
				return
			}
		}
	}
	select {
	case ok := <-ready:
		collect()
		if !ok {
			<-p.done
			collect()
			t.Fatalf("atmlab up --on exited before ready:\n%s", p.out.String())
		}
	case <-time.After(3 * time.Minute):
		collect()
		t.Fatalf("atmlab up --on not ready after 3 minutes:\n%s", p.out.String())
	}
	go func() {
		for l := range lines {
			p.out.WriteString(l + "\n")
		}
	}()
	return p
}

// down interrupts up and waits for it to have brought every part down.
func (p *placed) down() {
	p.t.Helper()
	p.cmd.Process.Signal(syscall.SIGINT)
	select {
	case err := <-p.done:
		if err != nil {
			p.t.Errorf("atmlab up --on exited with %v after SIGINT:\n%s", err, p.out.String())
		}
	case <-time.After(3 * time.Minute):
		p.cmd.Process.Kill()
		p.t.Fatalf("atmlab up --on still running 3 minutes after SIGINT:\n%s", p.out.String())
	}
}

// nothingLeft checks that no namespace, process, link, control socket or
// lock file of the lab remains.
func nothingLeft(t *testing.T, lab string) {
	t.Helper()
	if left := namespaces(lab); len(left) > 0 {
		t.Errorf("namespaces left: %v", left)
	}
	out, _ := exec.Command("pgrep", "-af", lab).Output()
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if line != "" && !strings.Contains(line, "go test") && !strings.Contains(line, "pgrep") {
			t.Errorf("process left: %s", line)
		}
	}
	if links, _ := exec.Command("ip", "-o", "link").Output(); strings.Contains(string(links), lab) {
		t.Errorf("links left:\n%s", links)
	}
	files, _ := filepath.Glob("/run/atmlab/" + lab + "[-.]*")
	if len(files) > 0 {
		t.Errorf("control sockets or locks left: %v", files)
	}
}

// pingAcross pings h3 (part right) from h1 (part left): a frame that
// crosses the cut both ways.
func pingAcross(t *testing.T, lab string) {
	t.Helper()
	out, err := exec.Command(atmlab, "exec", lab+"-left", "h1", "--", "ping", "-c", "3", "-W", "2", "10.0.0.3").CombinedOutput()
	if err != nil || !strings.Contains(string(out), " 0% packet loss") {
		t.Errorf("ping h1 -> h3 across the cut: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}

// readSplit reads a split lab's split.json from the one results folder
// under dir.
func readSplit(t *testing.T, dir string) (placement.Report, string) {
	t.Helper()
	found, _ := filepath.Glob(filepath.Join(dir, "results", "*-split-*", placement.ReportFile))
	if len(found) != 1 {
		t.Fatalf("split.json: %v", found)
	}
	b, _ := os.ReadFile(found[0])
	var rep placement.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	return rep, filepath.Dir(found[0])
}

// checkReport checks split.json: both parts ready, ended by the interrupt,
// each with its cuts from its last stats.
func checkReport(t *testing.T, rep placement.Report, folder string) {
	t.Helper()
	if rep.Why != "interrupted" || rep.Ready == nil || len(rep.Parts) != 2 || rep.Error != "" {
		b, _ := json.MarshalIndent(rep, "", "  ")
		t.Errorf("split.json:\n%s", b)
	}
	for _, p := range rep.Parts {
		if !strings.Contains(string(p.Cuts), `"link"`) {
			t.Errorf("part %s: no cuts in split.json: %s", p.Name, p.Cuts)
		}
		if !p.Ready {
			b, _ := os.ReadFile(filepath.Join(folder, p.Log))
			t.Errorf("part %s not ready:\n%s", p.Name, b)
		}
	}
}

// TestSplitLabOnSlurm brings a two-part lab up on a real one-node Slurm
// (one job, a task per part, both on the node, their cuts over its
// loopback), pings across the cut, then brings it down by SIGINT: the job
// completes and nothing of the lab is left. Up again and killed, its job
// runs on until atmlab down --on slurm cancels it, and again nothing is
// left.
func TestSplitLabOnSlurm(t *testing.T) {
	requireRoot(t, "munged", "slurmctld", "slurmd", "sbatch", "scontrol", "sinfo", "squeue", "scancel", "srun", "unshare", "nsenter")
	s := startSlurm(t)
	name := labName()
	file := filepath.Join(s.dir, "split.yaml") // a folder the job (root) and the test share
	os.WriteFile(file, []byte(labtest.Lab("split-two-switches", name)), 0o644)
	cmd := s.command(atmlab, "up", file, "--on", "slurm")
	cmd.Dir = s.dir
	cmd.Env = append(cmd.Env, "SBATCH_OVERCOMMIT=1") // two parts of two CPUs each on a node that may have two
	start := time.Now()
	p := placeSplit(t, cmd)
	t.Logf("two parts up through Slurm in %v", time.Since(start).Round(100*time.Millisecond))
	pingAcross(t, name)
	p.down()
	if !regexp.MustCompile(`slurm job \d+: completed`).MatchString(p.out.String()) {
		t.Errorf("the job did not complete:\n%s", p.out.String())
	}
	rep, folder := readSplit(t, s.dir)
	checkReport(t, rep, folder)
	queued := func() string {
		job, _ := s.command("squeue", "-h", "--name=atmlab-"+name+"-split", "-o", "%i %T").Output()
		return strings.TrimSpace(string(job))
	}
	if q := queued(); q != "" {
		t.Errorf("slurm job still queued: %s", q)
	}
	nothingLeft(t, name)
	t.Logf("%s", p.out.String())

	// Killed: the job runs on; down --on slurm cancels it, and each task
	// takes its part down.
	os.RemoveAll(filepath.Join(s.dir, "results"))
	cmd = s.command(atmlab, "up", file, "--on", "slurm")
	cmd.Dir = s.dir
	cmd.Env = append(cmd.Env, "SBATCH_OVERCOMMIT=1")
	p = placeSplit(t, cmd)
	p.cmd.Process.Kill()
	<-p.done
	if q := queued(); !strings.Contains(q, "RUNNING") {
		t.Errorf("the job of a killed up: %q, want it running", q)
	}
	if out, err := s.command(atmlab, "down", file, "--on", "slurm").CombinedOutput(); err != nil || !strings.Contains(string(out), "cancelled slurm job") {
		t.Errorf("atmlab down --on slurm: %v\n%s", err, out)
	}
	if q := queued(); q != "" {
		t.Errorf("slurm job still queued after down: %s", q)
	}
	nothingLeft(t, name)
}

// TestSplitLabOnThisMachine brings a two-part lab up as two processes in
// two machine namespaces joined by a veth, pings across the cut, then
// brings it down by SIGINT; a second one is killed and `atmlab down FILE
// --on local` removes what it left.
func TestSplitLabOnThisMachine(t *testing.T) {
	requireRoot(t)
	dir := t.TempDir()
	name := labName()
	file := filepath.Join(dir, "split.yaml")
	os.WriteFile(file, []byte(labtest.Lab("split-two-switches", name)), 0o644)
	cmd := exec.Command(atmlab, "up", file, "--on", "local")
	cmd.Dir = dir
	p := placeSplit(t, cmd)
	machines := namespaces(name + "-split-machines")
	if len(machines) != 2 {
		t.Errorf("machines %v, want two", machines)
	}
	pingAcross(t, name)
	p.down()
	rep, folder := readSplit(t, dir)
	checkReport(t, rep, folder)
	nothingLeft(t, name)
	t.Logf("up said:\n%s", p.out.String())

	// Killed: its parts run on; down removes them and the machines.
	os.RemoveAll(filepath.Join(dir, "results"))
	cmd = exec.Command(atmlab, "up", file, "--on", "local")
	cmd.Dir = dir
	p = placeSplit(t, cmd)
	p.cmd.Process.Kill()
	<-p.done
	if out, err := exec.Command(atmlab, "down", file, "--on", "local").CombinedOutput(); err != nil {
		t.Fatalf("atmlab down --on local: %v\n%s", err, out)
	} else if !strings.Contains(string(out), "removed machines") {
		t.Errorf("atmlab down --on local said:\n%s", out)
	}
	nothingLeft(t, name)
}
