package linux

// The verbs' side of a running lab: what they call to reach it, on every
// system. verbs_linux.go reaches the kernel; verbs_other.go says "needs
// Linux" in its place (elsewhere, and in a Linux build with the tag
// atmlab_stub, which tests it).

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"
)

// NeedsLinux is the error of a verb that builds namespaces and TAPs on a
// system without them.
func NeedsLinux(verb string) error {
	return fmt.Errorf("atmlab %s needs Linux (network namespaces and TAPs), not %s: run it on a Linux machine; here validate, calc, sim, report, perf and lab run --clock virtual work", verb, runtime.GOOS)
}

// RunningLab is a lab whose control socket answers (atmlab ls).
type RunningLab struct {
	Name  string    `json:"name"`
	Owner string    `json:"owner"`
	Since time.Time `json:"since"`
	Web   string    `json:"web,omitempty"`
}

// Loop tunes the real-time loop (up's --spin, --linger, --idle-spin).
type Loop struct{ Spin, Linger, IdleSpin time.Duration }

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
