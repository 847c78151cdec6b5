package shellquote

import (
	"os/exec"
	"strings"
	"testing"
)

func TestQuote(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"empty", "", "''"},
		{"plain", "abc", "abc"},
		{"path", "/labs/sw-100_a.yaml", "/labs/sw-100_a.yaml"},
		{"punctuation", "host:1,a@b+c%d", "host:1,a@b+c%d"},
		{"space", "my lab", "'my lab'"},
		{"tab", "a\tb", "'a\tb'"},
		{"single quote", "it's", `'it'\''s'`},
		{"only a quote", "'", `''\'''`},
		{"double quote", `say "hi"`, `'say "hi"'`},
		{"command substitution", "x$(touch${IFS}P).yaml", "'x$(touch${IFS}P).yaml'"},
		{"backticks", "`id`", "'`id`'"},
		{"variable", "$HOME", "'$HOME'"},
		{"newline", "a\nb", "'a\nb'"},
		{"glob", "shard-*", "'shard-*'"},
		{"tilde", "~root", "'~root'"},
		{"assignment", "a=b", "'a=b'"},
		{"separators", "a;b|c&d", "'a;b|c&d'"},
		{"backslash", `a\b`, `'a\b'`},
		{"non-UTF-8", "\xff\xfe", "'\xff\xfe'"},
		{"UTF-8", "Zürich", "'Zürich'"},
		{"leading dash is the caller's", "-n", "-n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Quote(tc.in); got != tc.want {
				t.Errorf("Quote(%q) = %q, want %q", tc.in, got, tc.want)
			}
			roundTrip(t, tc.in)
		})
	}
}

// FuzzQuote checks that a shell reading the quoted text gets exactly one
// word back, and that word is the input, in every shell the scripts use.
func FuzzQuote(f *testing.F) {
	for _, s := range []string{"", "a b", "it's", "x$(touch${IFS}P)", "`id`\n", "\xff'\\\"", "-e"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, w string) {
		if strings.IndexByte(w, 0) >= 0 {
			t.Skip("a NUL byte ends a C string: no argument or script can carry one")
		}
		roundTrip(t, w)
	})
}

// roundTrip has sh (and bash, where there is one) parse a script holding
// Quote(w) as the argument of set and print how many words it got and the
// first: "1:" and w, or the quoting let the shell split, expand or run it.
func roundTrip(t *testing.T, w string) {
	t.Helper()
	script := "set -- " + Quote(w) + "\nprintf '%s:%s' \"$#\" \"$1\""
	for _, shell := range []string{"sh", "bash"} {
		path, err := exec.LookPath(shell)
		if err != nil {
			if shell == "sh" {
				t.Fatal(err)
			}
			continue
		}
		cmd := exec.Command(path, "-c", script)
		cmd.Dir = t.TempDir() // where a word that ran a command would leave its mark
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s -c %q: %v", shell, script, err)
		}
		if got := string(out); got != "1:"+w {
			t.Errorf("%s read Quote(%q) = %s back as %q, want %q", shell, w, Quote(w), got, "1:"+w)
		}
	}
}
