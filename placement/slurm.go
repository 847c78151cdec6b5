package placement

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/atmlab/atmlab/campaign"
	"github.com/atmlab/atmlab/internal/shellquote"
)

// Slurm's files, in the results folder.
const (
	SlurmJob   = "split.sbatch" // the job: one srun step, one task per part
	SlurmParts = "parts.sh"     // what each task runs: its part, by $SLURM_PROCID
	SlurmLog   = "split.log"    // the job's own output
	SlurmStop  = "stop"         // Up makes it to ask every task to stop its part
)

// SlurmFiles returns the split lab's batch script and the script its
// tasks run. The job asks for one task per part, two CPUs each (a
// real-time part keeps two busy); a node with fewer can still take them
// with SBATCH_OVERCOMMIT=1 in sbatch's environment. Its one step
// (srun, block distribution) runs parts.sh once per task: task k starts
// part k, its peers at the nodes of their tasks, read from the step's node
// list and tasks per node, each on its own port. When the stop file
// appears in the folder (Up makes it), or on SIGTERM, a task keeps its
// part's stats beside its log, stops the part, waits for it, then runs the
// part's down, so that a part that died leaves nothing either; one task
// failing ends the others (--kill-on-bad-exit). The folder must be one
// every node sees, as a campaign's is.
func SlurmFiles(s Split) ([]campaign.File, error) {
	if err := s.Check(); err != nil {
		return nil, err
	}
	if strings.ContainsAny(s.Out, "% \t\n\"'") {
		return nil, fmt.Errorf("--out %q: Slurm reads #SBATCH --output without a shell, so the folder's path cannot hold spaces, quotes or %%: choose another --out", s.Out)
	}
	n := len(s.Parts)
	var job strings.Builder
	fmt.Fprintf(&job, "#!/bin/bash\n")
	fmt.Fprintf(&job, "# atmlab split lab %s: %d parts (%s), one task each; task K runs part K.\n", s.Lab, n, strings.Join(s.Parts, ", "))
	fmt.Fprintf(&job, "#SBATCH --job-name=%s\n", s.Name())
	fmt.Fprintf(&job, "#SBATCH --output=%s/%s\n", s.Out, SlurmLog)
	fmt.Fprintf(&job, "#SBATCH --ntasks=%d\n", n)
	fmt.Fprintf(&job, "#SBATCH --cpus-per-task=2\n")
	fmt.Fprintf(&job, "set -eu\n")
	fmt.Fprintf(&job, "exec srun --distribution=block --kill-on-bad-exit=1 /bin/bash %s\n", shellquote.Quote(s.Out+"/"+SlurmParts))

	var sh strings.Builder
	fmt.Fprintf(&sh, "#!/bin/bash\n")
	fmt.Fprintf(&sh, "# atmlab split lab %s: task $SLURM_PROCID runs its part; its peers are where their tasks run.\n", s.Lab)
	fmt.Fprintf(&sh, "set -u\n")
	fmt.Fprintf(&sh, "atmlab=%s\n", shellquote.Quote(s.Binary))
	fmt.Fprintf(&sh, "out=%s\n", shellquote.Quote(s.Out))
	// hosts[j]: the node task j runs on, the step's tasks handed out in
	// blocks: SLURM_STEP_TASKS_PER_NODE reads like 2(x3),1.
	fmt.Fprintf(&sh, "nodes=($(scontrol show hostnames \"$SLURM_STEP_NODELIST\"))\n")
	fmt.Fprintf(&sh, "hosts=()\ni=0\n")
	fmt.Fprintf(&sh, "for spec in ${SLURM_STEP_TASKS_PER_NODE//,/ }; do\n")
	fmt.Fprintf(&sh, "  n=${spec%%%%(*}; r=1\n")
	fmt.Fprintf(&sh, "  case $spec in *x*) r=${spec#*x}; r=${r%%)};; esac\n")
	fmt.Fprintf(&sh, "  for ((a = 0; a < r; a++)); do\n")
	fmt.Fprintf(&sh, "    for ((b = 0; b < n; b++)); do hosts+=(\"${nodes[i]}\"); done\n")
	fmt.Fprintf(&sh, "    i=$((i + 1))\n")
	fmt.Fprintf(&sh, "  done\ndone\n")
	fmt.Fprintf(&sh, "case $SLURM_PROCID in\n")
	for k := range s.Parts {
		// The peers' hosts are the shell's to expand, every other word
		// quoted: a NUL (which no word holds) marks where each goes.
		line := quoteAll(s.PartArgs(s.File, k, func(j int) string { return "\x00" + strconv.Itoa(j) + "\x00" }))
		for j := range s.Parts {
			line = strings.ReplaceAll(line, "\x00"+strconv.Itoa(j)+"\x00", "'\"${hosts["+strconv.Itoa(j)+"]}\"'")
		}
		fmt.Fprintf(&sh, "%d) part=%s; stats=(%s); down=(%s); set -- %s;;\n", k, shellquote.Quote(s.Parts[k]), quoteAll(s.StatsArgs(k)), quoteAll(s.DownArgs(k)), line)
	}
	fmt.Fprintf(&sh, "*) echo \"task $SLURM_PROCID: the lab has %d parts\" >&2; exit 2;;\nesac\n", n)
	fmt.Fprintf(&sh, "log=\"$out/part-$part.log\"\n")
	fmt.Fprintf(&sh, "echo \"part $part on $(hostname) (${hosts[$SLURM_PROCID]})\" >\"$log\"\n")
	fmt.Fprintf(&sh, "\"$atmlab\" \"$@\" >>\"$log\" 2>&1 &\npid=$!\n")
	// stop keeps the part's last stats, then stops it. Up asks by the
	// stop file, while the part still answers: Slurm's own signals
	// (scancel, the time limit) reach every process of the task at once,
	// the part too, and then its stats are gone.
	fmt.Fprintf(&sh, "stopped=\n")
	fmt.Fprintf(&sh, "stop() {\n  [ -n \"$stopped\" ] && return\n  stopped=1\n  f=\"$out/part-$part.stats.json\"\n")
	fmt.Fprintf(&sh, "  \"$atmlab\" \"${stats[@]}\" >\"$f.new\" 2>>\"$log\" && mv \"$f.new\" \"$f\" || rm -f \"$f.new\"\n")
	fmt.Fprintf(&sh, "  kill -TERM \"$pid\" 2>/dev/null\n}\n")
	fmt.Fprintf(&sh, "trap stop TERM INT\n")
	fmt.Fprintf(&sh, "while kill -0 \"$pid\" 2>/dev/null; do\n  [ -e \"$out/%s\" ] && stop\n  sleep 0.2\ndone\n", SlurmStop)
	fmt.Fprintf(&sh, "rc=0\nwait \"$pid\" || rc=$?\n") // bash keeps the status of a child that ended
	fmt.Fprintf(&sh, "echo \"part $part ended: exit status $rc\" >>\"$log\"\n")
	fmt.Fprintf(&sh, "\"$atmlab\" \"${down[@]}\" >>\"$log\" 2>&1 || true\n")
	fmt.Fprintf(&sh, "exit \"$rc\"\n")
	return []campaign.File{
		{Name: SlurmJob, Mode: 0o755, Data: []byte(job.String())},
		{Name: SlurmParts, Mode: 0o755, Data: []byte(sh.String())},
	}, nil
}
