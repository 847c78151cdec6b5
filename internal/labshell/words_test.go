package labshell

import (
	"slices"
	"testing"

	"github.com/atmlab/atmlab/internal/shellquote"
)

func TestSplitReadsWordsAsAShellDoes(t *testing.T) {
	for _, tc := range []struct {
		line string
		want []string
	}{
		{"", nil},
		{"   \t ", nil},
		{"h1 ping h2", []string{"h1", "ping", "h2"}},
		{"  h1   ping\th2  ", []string{"h1", "ping", "h2"}},
		{`h1 sh -c 'echo $HOME; ls'`, []string{"h1", "sh", "-c", "echo $HOME; ls"}},
		{`h1 echo "a \"b\" \\ c"`, []string{"h1", "echo", `a "b" \ c`}},
		{`h1 echo "a\nb"`, []string{"h1", "echo", `a\nb`}},
		{`h1 echo a\ b`, []string{"h1", "echo", "a b"}},
		{`h1 echo ''`, []string{"h1", "echo", ""}},
		{`h1 echo x'y z'"w"`, []string{"h1", "echo", "xy zw"}},
		{"# a comment", nil},
		{"  #pingall", nil},
		{"h1 echo a#b #c", []string{"h1", "echo", "a#b", "#c"}},
	} {
		got, err := Split(tc.line)
		if err != nil {
			t.Errorf("Split(%q): %v", tc.line, err)
			continue
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("Split(%q) = %q, want %q", tc.line, got, tc.want)
		}
	}
}

func TestSplitRefusesAnUnfinishedLine(t *testing.T) {
	for _, line := range []string{`h1 echo 'abc`, `h1 echo "abc`, `h1 echo "a\"`, `h1 echo abc\`} {
		if got, err := Split(line); err == nil {
			t.Errorf("Split(%q) = %q, want an error", line, got)
		}
	}
}

func TestSubstituteReplacesNodeNamesWithTheirAddresses(t *testing.T) {
	addrs := map[string]string{"h1": "10.0.0.1", "h5": "10.0.0.5", "r1": "10.0.1.254"}
	for _, tc := range []struct {
		in, want []string
	}{
		{[]string{"ping", "h5"}, []string{"ping", "-c", "4", "10.0.0.5"}},
		{[]string{"ping", "-c", "1", "h5"}, []string{"ping", "-c", "1", "10.0.0.5"}},
		{[]string{"ping", "-c1", "h5"}, []string{"ping", "-c1", "10.0.0.5"}},
		{[]string{"ping", "-nc", "2", "h5"}, []string{"ping", "-nc", "2", "10.0.0.5"}},
		// -I takes a value: the c in it is not a count.
		{[]string{"ping", "-Ieth0c", "h5"}, []string{"ping", "-c", "4", "-Ieth0c", "10.0.0.5"}},
		{[]string{"iperf3", "-c", "h1", "-t", "3"}, []string{"iperf3", "-c", "10.0.0.1", "-t", "3"}},
		{[]string{"traceroute", "r1"}, []string{"traceroute", "10.0.1.254"}},
		// Only whole words are names; the command itself is never replaced.
		{[]string{"h1", "h1:eth0", "xh5"}, []string{"h1", "h1:eth0", "xh5"}},
		{[]string{"ip", "addr"}, []string{"ip", "addr"}},
	} {
		got := Substitute(tc.in, addrs)
		if !slices.Equal(got, tc.want) {
			t.Errorf("Substitute(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func FuzzSplit(f *testing.F) {
	for _, s := range []string{"h1 ping h2", `a 'b c' "d \" e" f\ g`, "# x", `"`, `\`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		words, err := Split(line)
		if err != nil {
			return
		}
		// A word holds no unquoted blank: splitting the words again, each
		// quoted, gives them back.
		var again string
		for _, w := range words {
			again += shellquote.Quote(w) + " "
		}
		back, err := Split(again)
		if err != nil || !slices.Equal(back, words) {
			t.Fatalf("Split(%q) = %q; requoted %q reads back %q, %v", line, words, again, back, err)
		}
	})
}
