package main

import (
	"os"
	"strings"
)

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
