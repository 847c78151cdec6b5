package clihelp

import (
	"io/fs"
	"strings"
	"testing"
)

// Every file's placeholders are filled, and nothing is left in braces
// that looks like one.
func TestHelpTextsFillTheirTables(t *testing.T) {
	names, err := fs.Glob(texts, "text/*.txt")
	if err != nil || len(names) == 0 {
		t.Fatalf("no help texts: %v", err)
	}
	for _, n := range names {
		verb := strings.TrimSuffix(strings.TrimPrefix(n, "text/"), ".txt")
		got := Text(verb)
		if strings.Contains(got, "{settings}") || strings.Contains(got, "{shell commands}") {
			t.Errorf("%s: a table was left unfilled", n)
		}
		if strings.HasSuffix(got, "\n") {
			t.Errorf("%s: the help ends in a newline (cobra adds its own)", n)
		}
	}
	if !strings.Contains(Text("set"), "  delay=20ms ") {
		t.Errorf("set's help lacks its settings table:\n%s", Text("set"))
	}
	if !strings.Contains(Text("shell"), "pingall") {
		t.Errorf("shell's help lacks its commands:\n%s", Text("shell"))
	}
}

func TestHelpTextOfAnUnknownVerbPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Text of a verb with no file did not panic")
		}
	}()
	Text("no-such-verb")
}
