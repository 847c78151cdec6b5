package campaign

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/atmlab/atmlab/harness/clock"
	"github.com/atmlab/atmlab/harness/results"
	"github.com/atmlab/atmlab/internal/shellquote"
)

// Parallel is how many shards the local engine runs at once: real-time
// shards one after another (two labs measuring at once on one machine
// disturb each other; atmlab's lock would make the second wait anyway),
// virtual-time shards one per available CPU (GOMAXPROCS), at most N.
func Parallel(c clock.Clock, shards, procs int) int {
	if c == clock.Real || procs < 1 {
		return 1
	}
	return min(shards, procs)
}

// RunLocal runs the plan's shards on this machine, each as a child atmlab
// (p.Binary) writing its output to DIR/shard-K.log, then merges them into
// DIR; env is added to the children's environment. A shard that fails does
// not stop the others, and the merge runs whatever happened (it reports
// what is missing); the error names the shards that failed. progress gets
// one line per shard started and ended.
func RunLocal(ctx context.Context, p Plan, env []string, progress io.Writer) error {
	if err := p.Check(); err != nil {
		return err
	}
	out, err := results.Create(p.Out, results.Force) // the logs are replaced, never written through a link
	if err != nil {
		return err
	}
	defer out.Close()
	par := Parallel(p.Clock, p.Shards, runtime.GOMAXPROCS(0))
	childEnv := append(os.Environ(), env...)
	if p.Clock == clock.Virtual {
		// The children share the CPUs: each gets its part (virtual time
		// gives the same figures under any GOMAXPROCS).
		childEnv = append(childEnv, "GOMAXPROCS="+strconv.Itoa(max(1, runtime.GOMAXPROCS(0)/par)))
	}
	var mu sync.Mutex // guards failed and progress
	var failed []int
	say := func(format string, a ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(progress, format, a...)
	}
	next := make(chan int)
	var wg sync.WaitGroup
	for range par {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range next {
				say("shard %d/%d: started, log %s\n", k, p.Shards, p.ShardDir(k)+".log")
				err := runChild(ctx, p.Binary, p.ShardArgs(p.Lab, strconv.Itoa(k), p.ShardDir(k)), childEnv, out, filepath.Base(p.ShardDir(k))+".log")
				if err != nil {
					mu.Lock()
					failed = append(failed, k)
					mu.Unlock()
					say("shard %d/%d: %v (see %s)\n", k, p.Shards, err, p.ShardDir(k)+".log")
					continue
				}
				say("shard %d/%d: done\n", k, p.Shards)
			}
		}()
	}
feed:
	for k := 1; k <= p.Shards; k++ {
		select {
		case next <- k:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if ctx.Err() != nil {
		q := shellquote.Quote(p.Out) // the command is there to be pasted into a shell
		return fmt.Errorf("interrupted: the shards' results so far are in %s (atmlab report %s/shard-*/ --out %s merges them)", p.Out, q, q)
	}
	var dirs []string
	for k := 1; k <= p.Shards; k++ {
		if _, err := os.Stat(p.ShardDir(k)); err == nil {
			dirs = append(dirs, p.ShardDir(k))
		}
	}
	log := filepath.Join(p.Out, "merge.log")
	var mergeErr error
	if len(dirs) == 0 {
		mergeErr = errors.New("no shard wrote a results folder: nothing to merge")
	} else if err := runChild(ctx, p.Binary, MergeArgs(p.Out, dirs...), childEnv, out, filepath.Base(log)); err != nil {
		mergeErr = fmt.Errorf("merge: %v (see %s)", err, log)
	} else {
		say("merged %d shard folders: %s\n", len(dirs), filepath.Join(p.Out, "report.html"))
	}
	if len(failed) > 0 {
		slices.Sort(failed)
		return errors.Join(fmt.Errorf("shard(s) %s of %d failed: see %s/shard-K.log", joinInts(failed), p.Shards, p.Out), mergeErr)
	}
	return mergeErr
}

// runChild runs bin with args, its output to the file name in the
// campaign's folder dir.
func runChild(ctx context.Context, bin string, args, env []string, dir *results.Folder, name string) error {
	f, err := dir.Create(name)
	if err != nil {
		return err
	}
	log := dir.Join(name)
	defer f.Close()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = env
	// An interrupted shard tears its lab down itself: ask, then insist.
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 30 * time.Second
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("atmlab %s: %w: %s", strings.Join(args[:2], " "), err, lastLine(log))
	}
	return nil
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}

// lastLine returns the last line a child wrote to its log: why it failed.
func lastLine(log string) string {
	b, _ := os.ReadFile(log)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
