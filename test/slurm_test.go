//go:build integration

// A one-node Slurm cluster on localhost runs an atmlab campaign:
//
//	munged (key and socket in a temp dir)
//	[network namespace of its own: lo only]
//	  slurmctld ── slurmd ── array tasks 1..4: atmlab lab run --shard K/4
//	                     └── merge job (afterany): atmlab report shard-* --out DIR
//	test ── atmlab campaign --engine slurm ──> DIR/submit.sh ── sbatch
package test

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/atmlab/atmlab/internal/labtest"
)

// slurm is a one-node cluster started by startSlurm.
type slurm struct {
	t    *testing.T
	dir  string
	conf string
	ns   string // /proc/PID/ns/net of the namespace the daemons and clients share
}

// startSlurm writes a munge key and a one-node slurm.conf (this machine's
// CPUs, no cgroups, no accounting, state and spool under a temp dir),
// starts munged, then slurmctld and slurmd in a network namespace of their
// own that has only loopback (they see nothing of the machine's network),
// and waits until the node is idle. Cleanup stops them all by pid.
func startSlurm(t *testing.T) *slurm {
	t.Helper()
	dir, err := os.MkdirTemp("", "atmlab-slurm") // t.TempDir's name is too long for a unix socket
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o755) // munged wants its socket's folder searchable
	t.Cleanup(func() { os.RemoveAll(dir) })
	s := &slurm{t: t, dir: dir, conf: filepath.Join(dir, "slurm.conf")}
	for _, d := range []string{"state", "spool"} {
		os.Mkdir(filepath.Join(dir, d), 0o755)
	}
	key := make([]byte, 1024)
	rand.Read(key)
	if err := os.WriteFile(filepath.Join(dir, "munge.key"), key, 0o400); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "plugstack.conf"), nil, 0o644)
	sock := filepath.Join(dir, "munge.sock")
	s.daemon("munged", "munged", "--foreground", "--force", "--key-file="+filepath.Join(dir, "munge.key"), "--socket="+sock,
		"--pid-file="+filepath.Join(dir, "munged.pid"), "--log-file="+filepath.Join(dir, "munged.log"), "--seed-file="+filepath.Join(dir, "munged.seed"))
	waitFor(t, 5*time.Second, "munged's socket", func() bool { _, err := os.Stat(sock); return err == nil })

	// The daemons' namespace: loopback, and a second address on it so that
	// getaddrinfo (AI_ADDRCONFIG) resolves 127.0.0.1 at all.
	holder := exec.Command("unshare", "--net", "sh", "-c", "ip link set lo up && ip addr add 192.0.2.1/32 dev lo && exec sleep 3600")
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { holder.Process.Kill(); holder.Wait() })
	s.ns = fmt.Sprintf("/proc/%d/ns/net", holder.Process.Pid)
	waitFor(t, 5*time.Second, "the daemons' namespace", func() bool {
		out, _ := exec.Command("nsenter", "--net="+s.ns, "ip", "-br", "addr", "show", "lo").Output()
		return strings.Contains(string(out), "192.0.2.1")
	})

	var mem syscall.Sysinfo_t
	syscall.Sysinfo(&mem)
	conf := fmt.Sprintf(`ClusterName=atmlabit
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=16817
SlurmdPort=16818
AuthType=auth/munge
AuthInfo=socket=%[1]s/munge.sock
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=%[1]s/state
SlurmdSpoolDir=%[1]s/spool
SlurmctldPidFile=%[1]s/slurmctld.pid
SlurmdPidFile=%[1]s/slurmd.pid
SlurmctldLogFile=%[1]s/slurmctld.log
SlurmdLogFile=%[1]s/slurmd.log
PlugStackConfig=%[1]s/plugstack.conf
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
MpiDefault=none
ReturnToService=2
MinJobAge=600
NodeName=localhost NodeAddr=127.0.0.1 CPUs=%[2]d RealMemory=%[3]d State=UNKNOWN
PartitionName=it Nodes=localhost Default=YES MaxTime=INFINITE State=UP
`, dir, runtime.NumCPU(), mem.Totalram*uint64(mem.Unit)>>20*9/10)
	if err := os.WriteFile(s.conf, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	s.daemon("slurmctld", "nsenter", "--net="+s.ns, "slurmctld", "-D", "-i", "-f", s.conf)
	s.daemon("slurmd", "nsenter", "--net="+s.ns, "slurmd", "-D", "-N", "localhost", "-f", s.conf)
	waitFor(t, 20*time.Second, "the node to be idle", func() bool {
		out, _ := s.command("sinfo", "-h", "-o", "%T").Output()
		return strings.TrimSpace(string(out)) == "idle"
	})
	return s
}

// daemon starts a daemon in the foreground, its output to DIR/NAME.out;
// cleanup ends it (SIGTERM, then SIGKILL) and says what it wrote if the
// test failed.
func (s *slurm) daemon(name string, args ...string) {
	s.t.Helper()
	out, err := os.Create(filepath.Join(s.dir, name+".out"))
	if err != nil {
		s.t.Fatal(err)
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		s.t.Fatalf("start %s: %v", name, err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); out.Close(); close(done) }()
	s.t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		if s.t.Failed() {
			b, _ := os.ReadFile(filepath.Join(s.dir, name+".out"))
			s.t.Logf("%s said:\n%s", name, tail(string(b), 2000))
		}
	})
}

// command is a Slurm client command run in the daemons' namespace.
func (s *slurm) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command("nsenter", append([]string{"--net=" + s.ns, name}, args...)...)
	cmd.Env = append(os.Environ(), "SLURM_CONF="+s.conf)
	return cmd
}

// jobState returns a job's (or array task's) state as scontrol shows it.
func (s *slurm) jobState(id string) string {
	out, _ := s.command("scontrol", "-o", "show", "job", id).Output()
	var states []string
	for _, m := range jobStateRE.FindAllStringSubmatch(string(out), -1) {
		states = append(states, m[1])
	}
	return strings.Join(states, " ")
}

var jobStateRE = regexp.MustCompile(`JobState=(\S+)`)

// times returns each task's (or the job's) start and end time.
func (s *slurm) times(id string) [][2]time.Time {
	out, _ := s.command("scontrol", "-o", "show", "job", id).Output()
	var times [][2]time.Time
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		m := jobTimesRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		start, _ := time.ParseInLocation("2006-01-02T15:04:05", m[1], time.Local)
		end, _ := time.ParseInLocation("2006-01-02T15:04:05", m[2], time.Local)
		times = append(times, [2]time.Time{start, end})
	}
	return times
}

var jobTimesRE = regexp.MustCompile(`StartTime=(\S+) EndTime=(\S+)`)

func waitFor(t *testing.T, limit time.Duration, what string, ok func() bool) {
	t.Helper()
	for end := time.Now().Add(limit); !ok(); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("waited %v for %s", limit, what)
		}
	}
}

// readRecords reads a results.jsonl.
func readRecords(t *testing.T, file string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var recs []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var r map[string]any
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		recs = append(recs, r)
	}
	return recs
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

// slurmLab is a quick campaign (NAME is replaced by a fresh lab name).
var slurmLab = labtest.Lab("two-hosts-switch", "NAME", `experiments:
  - {name: grid, from: h1, to: h2, tests: [TCP_STREAM, UDP_STREAM, TCP_RR, UDP_RR], sizes: SIZES, duration: DURATION, interval: 100ms}
`)

// TestSlurmCampaign submits campaigns to a real one-node Slurm (slurm-wlm,
// munge) with the scripts atmlab campaign writes: a virtual-time one of 8
// points in 4 shards and a real-time one of 4 points in 2 (its tasks build
// real namespaces on the node). It waits for each array and its merge job
// and checks that the merge ran after every task and that the merged
// results hold every point once.
func TestSlurmCampaign(t *testing.T) {
	requireRoot(t, "munged", "slurmctld", "slurmd", "sbatch", "scontrol", "sinfo", "unshare", "nsenter")
	s := startSlurm(t)
	for _, tc := range []struct {
		clock, sizes, duration string
		shards, points         int
	}{
		{"virtual", "[512, 1472]", "200ms", 4, 8},
		{"real", "[1472]", "1s", 2, 4},
	} {
		t.Run(tc.clock, func(t *testing.T) {
			lab := strings.NewReplacer("NAME", labName(), "SIZES", tc.sizes, "DURATION", tc.duration).Replace(slurmLab)
			file := filepath.Join(t.TempDir(), "slurmit.yaml")
			os.WriteFile(file, []byte(lab), 0o644)
			out := filepath.Join(s.dir, "campaign-"+tc.clock) // a folder the jobs (root) and the test share
			s.campaign(t, file, out, tc.clock, tc.shards, tc.points)
		})
	}
}

// campaign runs one campaign through Slurm and checks it.
func (s *slurm) campaign(t *testing.T, file, out, clock string, shards, points int) {
	n := strconv.Itoa(shards)
	if b, err := exec.Command(atmlab, "campaign", file, "--engine", "slurm", "--shards", n, "--clock", clock, "--out", out).CombinedOutput(); err != nil {
		t.Fatalf("atmlab campaign --engine slurm: %v\n%s", err, b)
	}
	start := time.Now()
	b, err := s.command("sh", filepath.Join(out, "submit.sh")).CombinedOutput()
	m := regexp.MustCompile(`shards: job (\d+) \(array 1-` + n + `\), merge: job (\d+)`).FindStringSubmatch(string(b))
	if err != nil || m == nil {
		t.Fatalf("submit.sh: %v\n%s", err, b)
	}
	array, merge := m[1], m[2]
	waitFor(t, 90*time.Second, "the merge job", func() bool {
		st := s.jobState(merge)
		return st != "" && st != "PENDING" && st != "RUNNING"
	})
	t.Logf("%d %s-time shards and the merge through Slurm in %v", shards, clock, time.Since(start).Round(100*time.Millisecond))
	logs := func() string {
		var all strings.Builder
		for k := 1; k <= shards; k++ {
			b, _ := os.ReadFile(filepath.Join(out, fmt.Sprintf("shard-%d.log", k)))
			fmt.Fprintf(&all, "== shard-%d.log\n%s\n", k, tail(string(b), 600))
		}
		b, _ := os.ReadFile(filepath.Join(out, "merge.log"))
		fmt.Fprintf(&all, "== merge.log\n%s\n", tail(string(b), 600))
		return all.String()
	}
	if st := s.jobState(array); st != strings.TrimSpace(strings.Repeat("COMPLETED ", shards)) {
		t.Fatalf("array job %s: %q, want %d tasks COMPLETED\n%s", array, st, shards, logs())
	}
	if st := s.jobState(merge); st != "COMPLETED" {
		t.Fatalf("merge job %s: %q\n%s", merge, st, logs())
	}
	// The merge began once the last shard had ended (afterany).
	tasks, mergeJob := s.times(array), s.times(merge)
	if len(tasks) != shards || len(mergeJob) != 1 {
		t.Fatalf("times of the tasks %v, of the merge %v", tasks, mergeJob)
	}
	for _, task := range tasks {
		if mergeJob[0][0].Before(task[1]) {
			t.Errorf("the merge started at %v, before a shard ended at %v", mergeJob[0][0], task[1])
		}
	}

	recs := readRecords(t, filepath.Join(out, "results.jsonl"))
	seen := map[string]int{}
	for _, r := range recs {
		seen[fmt.Sprintf("%v %v", r["test"], r["size"])]++
		res, _ := r["result"].(map[string]any)
		if res["error"] != nil || r["clock"] != nil && r["clock"] != clock {
			t.Errorf("point %v %v (%v time): %v", r["test"], r["size"], r["clock"], res["error"])
		}
		bps, _ := res["throughput_bps"].(float64)
		tps, _ := res["transactions_per_sec"].(float64)
		if bps == 0 && tps == 0 {
			t.Errorf("point %v %v measured nothing: %v", r["test"], r["size"], res)
		}
		t.Logf("%v %v: %.2f Mbit/s, %.0f transactions/s", r["test"], r["size"], bps/1e6, tps)
	}
	if len(recs) != points || len(seen) != points {
		t.Errorf("merged results: %d records, %d points (%v), want the campaign's %d once each\n%s", len(recs), len(seen), seen, points, logs())
	}
	for _, f := range []string{"report.html", "report.md"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("no merged %s: %v\n%s", f, err, logs())
		}
	}
}
