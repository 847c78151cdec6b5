package linux

import (
	"context"
	"os"
	"path/filepath"
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

// atmlab up refuses a lab file with a problem before building anything,
// with the file's error at its line (or, without Linux, says it needs
// Linux before reading the file).
func TestUpRefusesABadLabFileBeforeBuilding(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(path, []byte("name: bad\ntopology:\n  nodes:\n    h1: {kind: toaster}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	err := Foreground{Log: &log}.Up(context.Background(), path)
	want := path + `:4: topology.nodes.h1.kind: unknown kind "toaster"`
	if NeedsKernel("up") != nil {
		want = NeedsLinux("up").Error()
	}
	if err == nil || !strings.Contains(err.Error(), want) || log.Len() != 0 {
		t.Errorf("Up(bad) = %v, log %q; want %q and nothing logged", err, log.String(), want)
	}
}
