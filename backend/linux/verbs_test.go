package linux

import (
	"slices"
	"strings"
	"testing"
)

func TestHostShellPromptNamesLabAndNode(t *testing.T) {
	t.Setenv("SHELL", "")
	argv, env := hostShell("sw100", "h1")
	if !slices.Equal(argv, []string{"/bin/sh"}) {
		t.Errorf("argv %q, want /bin/sh without $SHELL", argv)
	}
	if !slices.ContainsFunc(env, func(s string) bool { return strings.HasPrefix(s, "PS1=[sw100:h1] ") }) ||
		!slices.Contains(env, `PROMPT_COMMAND=PS1="$ATMLAB_PS1"`) {
		t.Errorf("env %q lacks the prompt", env)
	}
	t.Setenv("SHELL", "/bin/bash")
	if argv, _ := hostShell("sw100", "h1"); argv[0] != "/bin/bash" {
		t.Errorf("argv %q, want $SHELL", argv)
	}
}
