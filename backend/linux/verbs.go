package linux

// The verbs' side of a running lab: what they call to reach it, on every
// system. verbs_linux.go reaches the kernel; verbs_other.go says "needs
// Linux" in its place (elsewhere, and in a Linux build with the tag
// atmlab_stub, which tests it).

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/atmlab/atmlab/control"
	"github.com/atmlab/atmlab/harness/clock"
	"github.com/atmlab/atmlab/harness/labrun"
	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/labfile"
	"github.com/atmlab/atmlab/validate"
)

// NeedsLinux is the error of a verb that builds namespaces and TAPs on a
// system without them.
func NeedsLinux(verb string) error {
	return fmt.Errorf("atmlab %s needs Linux (network namespaces and TAPs), not %s: run it on a Linux machine; here validate, calc, sim, report, perf and lab run --clock virtual work", verb, runtime.GOOS)
}

// Up is atmlab up past its flags: the lab file loaded (its warnings on
// f.Log, unless a holder's child runs this again), handed to a rootless
// holder where one is needed, else built in the kernel and run until ctx
// ends (Run). Without Linux it says so before reading anything.
func (f Foreground) Up(ctx context.Context, file string) error {
	if err := NeedsKernel("up"); err != nil {
		return err
	}
	lab, err := labfile.Load(file)
	if err != nil {
		return err
	}
	if !InHolder() { // a holder's child runs this command again
		validate.Warnings(f.Log, lab)
	}
	if NeedsHolder() {
		return RunHolder(lab)
	}
	return f.Run(ctx, lab)
}

// RunningLab is a lab whose control socket answers (atmlab ls).
type RunningLab struct {
	Name  string    `json:"name"`
	Owner string    `json:"owner"`
	Since time.Time `json:"since"`
	Web   string    `json:"web,omitempty"`
}

// Loop tunes the real-time loop (up's --spin, --linger, --idle-spin) and
// whether the machine's CPUs are kept from going idle while the lab is up
// (--keep-cpus-awake: kernel.KeepCPUsAwake).
type Loop struct {
	Spin, Linger, IdleSpin time.Duration
	KeepAwake              bool
}

// Part is up --part: one part of a split lab, its cut socket's address and
// its peers' (PART=HOST:PORT values), and how long to wait for them.
type Part struct {
	Name, Listen string
	Peers        []string
	Wait         time.Duration
}

// Check refuses a part up cannot run: its flags incomplete, or a normal
// user's, whose holder's network namespace no peer could reach.
func (p Part) Check() error {
	switch {
	case p.Name == "":
		if p.Listen != "" || len(p.Peers) > 0 {
			return fmt.Errorf("--cut-listen and --cut-peer go with --part NAME")
		}
		return nil
	case p.Listen == "" || len(p.Peers) == 0:
		return fmt.Errorf("--part %s needs --cut-listen HOST:PORT and --cut-peer PART=HOST:PORT for each part it has a cut link to", p.Name)
	case NeedsHolder():
		return fmt.Errorf("--part needs root: a normal user's lab lives in a namespace of its own that no other instance can reach")
	}
	return nil
}

// hostShell is the interactive shell `atmlab exec LAB NODE` (no command)
// runs in the host: $SHELL, or /bin/sh, with a prompt that names the lab
// and the node, and env, what to add to its environment. PS1 sets the
// prompt of sh and dash; bash's ~/.bashrc usually sets its own PS1, so
// PROMPT_COMMAND sets it again before each prompt.
func hostShell(lab, node string) (argv, env []string) {
	sh := os.Getenv("SHELL")
	if sh == "" {
		sh = "/bin/sh"
	}
	prompt := "[" + lab + ":" + node + "] # "
	if os.Geteuid() != 0 {
		prompt = "[" + lab + ":" + node + "] $ "
	}
	return []string{sh}, []string{
		"PS1=" + prompt, "ATMLAB_PS1=" + prompt, `PROMPT_COMMAND=PS1="$ATMLAB_PS1"`,
		"ATMLAB_LAB=" + lab, "ATMLAB_NODE=" + node,
	}
}

// shellIn sets the environment of hostShell and returns its command line.
func shellIn(lab, node string) []string {
	argv, env := hostShell(lab, node)
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		os.Setenv(k, v)
	}
	return argv
}

// LockOrHold takes the machine-wide measuring lock for a run in real
// time, waiting for another run and saying so on log; a rootless run in
// real time is handed to a holder, and this process exits with its code.
// release gives the lock back.
func LockOrHold(clocks clock.Choice, variants []labrun.Variant, log io.Writer) (release func(), err error) {
	release = func() {}
	if clocks.Has(clock.Real) && !InHolder() { // virtual time takes no lock
		release, err = MeasureLock(func(pid int) {
			fmt.Fprintf(log, "another lab run (pid %d) is measuring on this machine: waiting for it (%s)\n", pid, MeasureLockPath())
		})
		if err != nil {
			return nil, fmt.Errorf("measuring lock: %w", err)
		}
	}
	if NeedsHolder() && clocks.Has(clock.Real) { // virtual time needs no namespaces
		labs := make([]*topologies.Lab, len(variants))
		for i, v := range variants {
			labs[i] = v.Lab
		}
		code, err := HolderRun(labs...)
		release() // the holder measured (or failed); os.Exit runs no deferred call
		if err != nil {
			return nil, err
		}
		os.Exit(code)
	}
	return release, nil
}

// CaptureFile is atmlab capture: the link that has endpoint captured to
// file, which a capture that got nothing leaves as it was; the records
// captured are kept, with the error that ended the capture. It says on
// log how many were written, and how to decode AAL3/4 cells.
func CaptureFile(ctx context.Context, lab, endpoint string, cells bool, file string, count int, log io.Writer) error {
	if err := NeedsKernel("capture"); err != nil {
		return err // before the file is made
	}
	// The file would be root's, in root's directory: the user's capture
	// is theirs to write.
	if err := RefuseUserLab(lab); err != nil {
		return err
	}
	f, err := control.NewReplacement(file)
	if err != nil {
		return err
	}
	n, aal34, err := Capture(ctx, lab, endpoint, cells, f, count)
	if cerr := f.Finish(err == nil || n > 0); err == nil {
		err = cerr
	}
	if err != nil && n == 0 {
		return err
	}
	fmt.Fprintf(log, "%d records written to %s\n", n, file)
	if aal34 {
		fmt.Fprintf(log, "AAL3/4 cells: decode them with atmlab's dissector (`atmlab capture --lua-dissector aal34.lua` writes it):\n"+
			"  tshark -X lua_script:aal34.lua -r %s\n", file)
	}
	return err
}

// Remove is atmlab down: what the lab named arg (or the lab file arg
// names) left behind removed, and said on w as format says (table or
// json). Root's down of a user's rootless lab runs as that user.
func Remove(arg string, w io.Writer, format string) error {
	name := arg
	if strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".yml") {
		if _, err := os.Stat(name); err == nil {
			lab, err := labfile.Load(name)
			if err != nil {
				return err
			}
			name = lab.Name
		}
	}
	if err := AsLabUser(name); err != nil {
		return err
	}
	removed, err := Down(name)
	if err != nil && len(removed) == 0 {
		return err
	}
	if format == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.Encode(map[string]any{"lab": name, "removed": removed})
	} else if len(removed) > 0 {
		fmt.Fprintf(w, "lab %s: removed %s\n", name, strings.Join(removed, " "))
	} else if err == nil { // a failure says so itself
		fmt.Fprintf(w, "lab %s: nothing to remove\n", name)
	}
	return err
}
