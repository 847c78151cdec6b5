// Package campaign cuts a lab's campaign into shards for a cluster
// scheduler and writes what that scheduler needs to run them: a Slurm job
// array and a dependent merge job, or a Kubernetes Indexed Job and a merge
// Job. Every shard runs `atmlab lab run FILE --shard K/N --out DIR/shard-K`
// and the merge runs `atmlab report DIR/shard-*/ --out DIR`; the scheduler
// does the rest. The local engine (local.go) runs the same commands itself.
//
//	lab.yaml --campaign--> shard-1 .. shard-N --report--> DIR/report.html
package campaign

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"github.com/atmlab/atmlab/harness/clock"
	"github.com/atmlab/atmlab/internal/shellquote"
)

// Engine is what runs a campaign's shards.
type Engine int

// The engines.
const (
	Slurm      Engine = iota // a job array and a merge job (sbatch)
	Kubernetes               // an Indexed Job and a merge Job (kubectl)
	Local                    // atmlab itself, on this machine
)

var engineNames = []string{"slurm", "kubernetes", "local"}

// String returns the engine's name as --engine takes it.
func (e Engine) String() string {
	if e < 0 || int(e) >= len(engineNames) {
		return "Engine(" + strconv.Itoa(int(e)) + ")"
	}
	return engineNames[e]
}

// ParseEngine reads --engine.
func ParseEngine(s string) (Engine, error) {
	for i, n := range engineNames {
		if s == n {
			return Engine(i), nil
		}
	}
	return 0, fmt.Errorf("unknown engine %q: use --engine slurm, kubernetes or local", s)
}

// MaxShards bounds --shards: more shards than that is a mistake (a
// campaign has at most a few thousand points).
const MaxShards = 1000

// Plan is one campaign: a lab file, measured in Shards parts by one clock.
type Plan struct {
	Lab    string      // the lab file, an absolute path
	Name   string      // the lab's name, for job names
	Shards int         // N, at least 1
	Out    string      // the results folder, an absolute path
	Clock  clock.Clock // a campaign runs in one clock
	Quick  bool        // lab run --quick
	Binary string      // the atmlab the Slurm and local shards run, an absolute path
	Image  string      // the container image the Kubernetes pods run (atmlab on its PATH)
}

// ParseClock reads --clock for a campaign, which runs in one clock.
func ParseClock(s string) (clock.Clock, error) {
	c, err := clock.Parse(s)
	if err != nil || s == "" {
		return c, fmt.Errorf("--clock %q: a campaign runs in one clock, use --clock real or virtual", s)
	}
	return c, nil
}

// Check returns what is wrong with the plan, one problem with its fix.
func (p Plan) Check() error {
	switch {
	case p.Shards < 1 || p.Shards > MaxShards:
		return fmt.Errorf("--shards %d: use 1 to %d", p.Shards, MaxShards)
	case p.Clock != clock.Real && p.Clock != clock.Virtual:
		return fmt.Errorf("--clock %q: a campaign runs in one clock, use --clock real or virtual", p.Clock)
	case !filepath.IsAbs(p.Lab) || !filepath.IsAbs(p.Out):
		return fmt.Errorf("campaign paths must be absolute: lab %q, out %q", p.Lab, p.Out)
	case strings.ContainsRune(p.Lab+p.Out+p.Binary, 0):
		return fmt.Errorf("campaign paths cannot hold a NUL byte: lab %q, out %q, atmlab %q", p.Lab, p.Out, p.Binary)
	case strings.ContainsFunc(p.Name+p.Image, unicode.IsControl):
		// They go into the files' comments, which a line break would end.
		return fmt.Errorf("lab name %q or image %q holds a control character: the engine's files cannot carry it", p.Name, p.Image)
	}
	return nil
}

// ShardDir is where shard k (1-based) writes its results.
func (p Plan) ShardDir(k int) string { return filepath.Join(p.Out, ShardDirName(k)) }

// ShardDirName is the name of shard k's folder inside the campaign's.
func ShardDirName(k int) string { return "shard-" + strconv.Itoa(k) }

// ShardArgs is the command line (without the program) that runs shard
// "K/N" of the lab at lab into out, shard being K.
func (p Plan) ShardArgs(lab, shard, out string) []string {
	return p.shardLine(func(s string) string { return s }, lab, shard+"/"+strconv.Itoa(p.Shards), out)
}

// shardCommand is the same command line, the program prog first, as a
// script's shell command for the shard whose number and folder are in the
// script's variables k and out: every word quoted but those two, which the
// shell expands.
func (p Plan) shardCommand(prog, lab string) string {
	words := p.shardLine(shellquote.Quote, lab, `"$k/`+strconv.Itoa(p.Shards)+`"`, `"$out"`)
	return strings.Join(append([]string{shellquote.Quote(prog)}, words...), " ")
}

// shardLine builds the shard's command line (--append: a shard run again,
// a requeued task or a campaign started again, measures only what its
// folder lacks): word gives each fixed word
// and the lab, shard and out are the --shard and --out words as they are.
func (p Plan) shardLine(word func(string) string, lab, shard, out string) []string {
	a := []string{word("lab"), word("run"), word(lab), word("--shard"), shard, word("--out"), out, word("--append"), word("--clock"), word(p.Clock.String())}
	if p.Quick {
		a = append(a, word("--quick"))
	}
	return a
}

// MergeArgs is the command line that merges the shard folders dirs into out.
func MergeArgs(out string, dirs ...string) []string {
	return append(append([]string{"report"}, dirs...), "--out", out)
}

// JobName is the base of the scheduler's job names: atmlab-<lab>, in the
// DNS label form Kubernetes wants (lowercase letters, digits and dashes),
// short enough for the pods' generated names.
func (p Plan) JobName() string {
	n := strings.Trim(nonLabel.ReplaceAllString(strings.ToLower(p.Name), "-"), "-")
	if n == "" {
		n = "lab"
	}
	n = "atmlab-" + n
	if len(n) > 40 {
		n = strings.TrimRight(n[:40], "-")
	}
	return n
}

var nonLabel = regexp.MustCompile(`[^a-z0-9-]+`)

// File is one file an engine needs, written into the campaign's folder.
type File struct {
	Name string // base name
	Mode uint32 // 0o755 for scripts
	Data []byte
}
