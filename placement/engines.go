package placement

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/atmlab/atmlab/campaign"
	"github.com/atmlab/atmlab/harness/results"
)

// run runs a scheduler's command and returns its standard output; the
// error holds what it said on standard error.
func run(name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}

// How long Slurm and Kubernetes have to end the parts once asked.
var endWait = 2 * time.Minute

// slurmRunner runs the parts as one Slurm job (SlurmFiles).
type slurmRunner struct {
	s   Split
	w   io.Writer
	out *results.Folder
	job string
}

func (r *slurmRunner) start(ctx context.Context, out *results.Folder) error {
	r.out = out
	files, err := SlurmFiles(r.s)
	if err != nil {
		return err
	}
	for _, f := range files {
		if err := out.WriteFile(f.Name, f.Data, os.FileMode(f.Mode)); err != nil {
			return err
		}
	}
	id, err := run("sbatch", "--parsable", out.Join(SlurmJob))
	if err != nil {
		return err
	}
	r.job, _, _ = strings.Cut(strings.TrimSpace(id), ";") // without ;cluster
	fmt.Fprintf(r.w, "slurm job %s: %d tasks, logs %s\n", r.job, len(r.s.Parts), out.Join("part-NAME.log"))
	return nil
}

func (r *slurmRunner) log(k int) []byte {
	if r.out == nil {
		return nil
	}
	b, _ := r.out.ReadFile(r.s.LogName(k), 0)
	return b
}

var jobStateRE = regexp.MustCompile(`JobState=(\S+)`)

// state is the job's state as scontrol shows it, "" once Slurm has
// forgotten it.
func (r *slurmRunner) state() string {
	out, _ := run("scontrol", "-o", "show", "job", r.job)
	if m := jobStateRE.FindStringSubmatch(out); m != nil {
		return m[1]
	}
	return ""
}

// live reports whether a job in this state has not ended.
func live(state string) bool {
	switch state {
	case "PENDING", "CONFIGURING", "RUNNING", "COMPLETING", "SUSPENDED", "REQUEUED", "RESIZING":
		return true
	}
	return false
}

func (r *slurmRunner) stopped() string {
	for k := range r.s.Parts {
		log := string(r.log(k))
		if i := strings.Index(log, "part "+r.s.Parts[k]+" ended:"); i >= 0 { // parts.sh's last words
			return strings.TrimSpace(strings.SplitN(log[i:], "\n", 2)[0])
		}
	}
	if st := r.state(); !live(st) {
		return fmt.Sprintf("slurm job %s ended (%s)", r.job, strings.ToLower(cmp.Or(st, "gone")))
	}
	return ""
}

// stop makes the stop file, on which each task keeps its part's stats,
// stops it and runs its down, and waits for the job to end; one still
// there after endWait, or still waiting in the queue, is cancelled.
func (r *slurmRunner) stop(out *results.Folder) error {
	if r.job == "" {
		return nil
	}
	st := r.state()
	if st == "RUNNING" {
		if err := out.WriteFile(SlurmStop, nil, 0o644); err != nil {
			return err
		}
		defer out.Remove(SlurmStop)
		st = waitState(r.state, endWait)
	}
	if live(st) {
		if _, err := run("scancel", r.job); err != nil {
			return err
		}
		st = waitState(r.state, endWait)
	}
	fmt.Fprintf(r.w, "slurm job %s: %s\n", r.job, strings.ToLower(cmp.Or(st, "gone")))
	if live(st) {
		return fmt.Errorf("slurm job %s still %s after scancel", r.job, st)
	}
	return nil
}

// waitState waits up to limit for state to say the job has ended.
func waitState(state func() string, limit time.Duration) string {
	st := state()
	for end := time.Now().Add(limit); live(st) && time.Now().Before(end); st = state() {
		time.Sleep(poll)
	}
	return st
}

// downSlurm cancels the split lab's jobs (by name), each task taking its
// part down on SIGTERM, and waits for them to end.
func downSlurm(s Split, w io.Writer) error {
	jobs := func() []string {
		out, _ := run("squeue", "-h", "--name="+s.Name(), "-o", "%i")
		return strings.Fields(out)
	}
	ids := jobs()
	if len(ids) == 0 {
		fmt.Fprintf(w, "split lab %s: no slurm job %s\n", s.Lab, s.Name())
		return nil
	}
	if _, err := run("scancel", "--name="+s.Name()); err != nil {
		return err
	}
	for end := time.Now().Add(endWait); len(jobs()) > 0; time.Sleep(poll) {
		if time.Now().After(end) {
			return fmt.Errorf("slurm jobs %s still there %v after scancel", strings.Join(jobs(), " "), endWait)
		}
	}
	fmt.Fprintf(w, "split lab %s: cancelled slurm job %s\n", s.Lab, strings.Join(ids, " "))
	return nil
}

// kubeLook is how often the Kubernetes runner asks for the pods' states.
var kubeLook = 5 * time.Second

// kubeRunner runs the parts as a StatefulSet (KubernetesObjects) with
// kubectl, in its current context and namespace.
type kubeRunner struct {
	s    Split
	w    io.Writer
	out  *results.Folder
	logs map[int][]byte
	done bool              // the objects deleted: the logs are the last ones read
	base map[string]string // each pod's phase and restarts once every part was ready
	last time.Time         // of the last look at the pods
	why  string
}

func (r *kubeRunner) start(ctx context.Context, out *results.Folder) error {
	r.out, r.logs = out, map[int][]byte{}
	b, err := KubernetesFile(r.s)
	if err != nil {
		return err
	}
	if err := out.WriteFile(KubeManifest, b, 0o644); err != nil {
		return err
	}
	if _, err := run("kubectl", "apply", "-f", out.Join(KubeManifest)); err != nil {
		return err
	}
	fmt.Fprintf(r.w, "kubernetes: applied %s (statefulset %s, %d pods)\n", out.Join(KubeManifest), r.s.Name(), len(r.s.Parts))
	return nil
}

// pod is part k's pod's name.
func (r *kubeRunner) pod(k int) string { return r.s.Name() + "-" + strconv.Itoa(k) }

func (r *kubeRunner) log(k int) []byte {
	if r.logs == nil || r.done {
		return r.logs[k]
	}
	if b, err := run("kubectl", "logs", "pod/"+r.pod(k)); err == nil {
		r.logs[k] = []byte(b)
	}
	return r.logs[k]
}

// pods returns each pod's phase and restarts ("Running 0"), by name.
func (r *kubeRunner) pods() (map[string]string, error) {
	out, err := run("kubectl", "get", "pods", "-l", "atmlab/split="+r.s.Name(), "-o",
		`jsonpath={range .items[*]}{.metadata.name} {.status.phase} {.status.containerStatuses[0].restartCount}{"\n"}{end}`)
	if err != nil {
		return nil, err
	}
	pods := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if name, state, ok := strings.Cut(line, " "); ok {
			pods[name] = state
		}
	}
	return pods, nil
}

// ready notes each pod's restarts once every part is ready: a pod whose
// part failed while its peers were starting is restarted by the
// StatefulSet, and that is no end; one restarted after is.
func (r *kubeRunner) ready() { r.base, _ = r.pods() }

// stopped looks at the pods at most every few seconds: a pod that has
// ended, or restarted since every part was ready, has stopped its part.
func (r *kubeRunner) stopped() string {
	if r.why != "" || time.Since(r.last) < kubeLook {
		return r.why
	}
	r.last = time.Now()
	pods, err := r.pods()
	if err != nil {
		return ""
	}
	for name, state := range pods {
		phase, _, _ := strings.Cut(state, " ")
		if phase == "Failed" || phase == "Succeeded" || r.base != nil && state != r.base[name] {
			r.why = "pod " + name + ": " + state + " (phase, restarts)"
		}
	}
	return r.why
}

// stop keeps each pod's log and its part's last stats in the folder,
// then deletes the objects and
// waits for the pods to be gone (each part takes its lab down on the
// SIGTERM Kubernetes sends).
func (r *kubeRunner) stop(out *results.Folder) error {
	if r.logs == nil {
		return nil
	}
	var errs []error
	for k := range r.s.Parts {
		// The part's last stats, if its pod still answers.
		if b, err := run("kubectl", append([]string{"exec", "pod/" + r.pod(k), "--", "atmlab"}, r.s.StatsArgs(k)...)...); err == nil {
			errs = append(errs, out.WriteFile(r.s.StatsName(k), []byte(b), 0o644))
		}
		errs = append(errs, out.WriteFile(r.s.LogName(k), r.log(k), 0o644))
	}
	r.done = true
	_, err := run("kubectl", "delete", "-f", out.Join(KubeManifest), "--wait=true", "--timeout="+endWait.String())
	return errors.Join(append(errs, err)...)
}

// downKube deletes the split lab's objects by their label.
func downKube(s Split, w io.Writer) error {
	out, err := run("kubectl", "delete", "statefulset,service,configmap", "-l", "atmlab/split="+s.Name(), "--ignore-not-found", "--wait=true", "--timeout="+endWait.String())
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "split lab %s: %s\n", s.Lab, cmp.Or(strings.TrimSpace(out), "nothing to remove on kubernetes"))
	return nil
}

// Down removes what a killed split lab left on its engine: on this
// machine its machines and each part's leftovers, on Slurm its job, on
// Kubernetes its objects.
func Down(s Split, w io.Writer) error {
	switch s.Engine {
	case campaign.Local:
		return downLocal(s, w)
	case campaign.Slurm:
		return downSlurm(s, w)
	case campaign.Kubernetes:
		return downKube(s, w)
	}
	return fmt.Errorf("no engine %v", s.Engine)
}
