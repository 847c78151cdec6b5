package campaign

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/atmlab/atmlab/harness/clock"
	"github.com/atmlab/atmlab/internal/shellquote"
)

// Slurm's files, in the campaign's folder.
const (
	SlurmShards = "shards.sbatch" // the job array: task K runs shard K/N
	SlurmMerge  = "merge.sbatch"  // the merge job, after the whole array
	SlurmSubmit = "submit.sh"     // submits both, the merge dependent on the array
)

// SlurmFiles returns a batch script whose array tasks 1..N each run one
// shard (Slurm's array ids are 1-based here, as --shard is), a merge
// script, and a submit script that queues the merge with
// --dependency=afterany on the array, so that it runs (and says which
// points are missing) even when a shard fails. Each task's and the merge's
// output goes to a log beside the results. Every path reaches the shell as
// one word quoted by shellquote.Quote, whatever characters it holds.
func SlurmFiles(p Plan) ([]File, error) {
	if err := p.Check(); err != nil {
		return nil, err
	}
	if strings.ContainsAny(p.Out, "% \t\n\"'") {
		return nil, fmt.Errorf("--out %q: Slurm reads #SBATCH --output without a shell, so the folder's path cannot hold spaces, quotes or %%: choose another --out", p.Out)
	}
	n := p.Shards
	var sh strings.Builder
	fmt.Fprintf(&sh, "#!/bin/bash\n")
	fmt.Fprintf(&sh, "# atmlab campaign: lab %s in %d shards, %s time; task K runs shard K/%d.\n", p.Name, n, p.Clock, n)
	fmt.Fprintf(&sh, "# Submit with ./%s (it queues %s after this array).\n", SlurmSubmit, SlurmMerge)
	fmt.Fprintf(&sh, "#SBATCH --job-name=%s\n", p.JobName())
	fmt.Fprintf(&sh, "#SBATCH --array=1-%d\n", n)
	fmt.Fprintf(&sh, "#SBATCH --output=%s\n", p.Out+"/shard-%a.log")
	fmt.Fprintf(&sh, "#SBATCH --ntasks=1\n")
	if p.Clock == clock.Real {
		// A real-time lab keeps two cores busy (the emulator and the hosts'
		// senders); atmlab's machine-wide lock makes a second lab on the
		// same node wait for the first rather than measure over it.
		fmt.Fprintf(&sh, "#SBATCH --cpus-per-task=2\n")
	} else {
		fmt.Fprintf(&sh, "#SBATCH --cpus-per-task=1\n")
	}
	fmt.Fprintf(&sh, "set -eu\n")
	fmt.Fprintf(&sh, "k=$SLURM_ARRAY_TASK_ID\n")
	fmt.Fprintf(&sh, "out=%s/shard-\"$k\"\n", shellquote.Quote(p.Out))
	fmt.Fprintf(&sh, "exec %s\n", p.shardCommand(p.Binary, p.Lab))

	var merge strings.Builder
	fmt.Fprintf(&merge, "#!/bin/bash\n")
	fmt.Fprintf(&merge, "# atmlab campaign: merge the %d shards of lab %s into one report.\n", n, p.Name)
	fmt.Fprintf(&merge, "#SBATCH --job-name=%s-merge\n", p.JobName())
	fmt.Fprintf(&merge, "#SBATCH --output=%s\n", p.Out+"/merge.log")
	fmt.Fprintf(&merge, "#SBATCH --ntasks=1\n#SBATCH --cpus-per-task=1\n")
	fmt.Fprintf(&merge, "set -eu\n")
	fmt.Fprintf(&merge, "exec %s report %s/shard-*/ --out %s\n", shellquote.Quote(p.Binary), shellquote.Quote(p.Out), shellquote.Quote(p.Out))

	var sub strings.Builder
	fmt.Fprintf(&sub, "#!/bin/sh\n")
	fmt.Fprintf(&sub, "# Queue the campaign: the shards' array, then the merge once every task has ended.\n")
	fmt.Fprintf(&sub, "set -eu\n")
	fmt.Fprintf(&sub, "cd %s\n", shellquote.Quote(p.Out))
	fmt.Fprintf(&sub, "array=$(sbatch --parsable %s)\n", SlurmShards)
	fmt.Fprintf(&sub, "array=${array%%%%;*}  # job id without ;cluster\n")
	fmt.Fprintf(&sub, "merge=$(sbatch --parsable --dependency=afterany:\"$array\" %s)\n", SlurmMerge)
	fmt.Fprintf(&sub, "merge=${merge%%%%;*}\n")
	fmt.Fprintf(&sub, "printf 'shards: job %%s (array 1-%d), merge: job %%s; report: %%s\\n' \"$array\" \"$merge\" %s\n", n, shellquote.Quote(filepath.Join(p.Out, "report.html")))

	return []File{
		{Name: SlurmShards, Mode: 0o755, Data: []byte(sh.String())},
		{Name: SlurmMerge, Mode: 0o755, Data: []byte(merge.String())},
		{Name: SlurmSubmit, Mode: 0o755, Data: []byte(sub.String())},
	}, nil
}
