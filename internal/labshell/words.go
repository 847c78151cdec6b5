package labshell

import (
	"fmt"
	"strings"
)

// Split cuts a command line into words as a POSIX shell does for plain
// commands: blanks separate words, single quotes keep everything up to the
// next one, double quotes keep everything but \" and \\, and a backslash
// outside quotes keeps the next character. A line whose first word starts
// with # is a comment: no words. Nothing is expanded ($, *, ~ stay as
// they are): the words go to the command as typed.
func Split(line string) ([]string, error) {
	var words []string
	var w strings.Builder
	inWord := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		case c == '#' && !inWord && len(words) == 0:
			return nil, nil
		case c == '\'':
			j := strings.IndexByte(line[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("unterminated ' at column %d", i+1)
			}
			w.WriteString(line[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '"':
			start := i
			for i++; ; i++ {
				if i >= len(line) {
					return nil, fmt.Errorf("unterminated \" at column %d", start+1)
				}
				if line[i] == '"' {
					break
				}
				if line[i] == '\\' && i+1 < len(line) && (line[i+1] == '"' || line[i+1] == '\\') {
					i++
				}
				w.WriteByte(line[i])
			}
			inWord = true
		case c == '\\':
			if i+1 >= len(line) {
				return nil, fmt.Errorf("a \\ at the end of the line escapes nothing")
			}
			i++
			w.WriteByte(line[i])
			inWord = true
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, w.String())
	}
	return words, nil
}

// Substitute returns a command's arguments with each word that is a node's
// name replaced by that node's address, as Mininet's CLI does (`h1 ping h5`
// pings 10.0.0.5). A ping with no count gets -c 4, so that it ends.
func Substitute(argv []string, addrs map[string]string) []string {
	out := make([]string, 0, len(argv)+2)
	for i, a := range argv {
		if i > 0 {
			if addr, ok := addrs[a]; ok {
				a = addr
			}
		}
		out = append(out, a)
	}
	if len(out) > 0 && out[0] == "ping" && !hasCount(out[1:]) {
		out = append([]string{"ping", "-c", "4"}, out[1:]...)
	}
	return out
}

// hasCount reports whether ping's arguments give a count (-c N, -cN, or c
// among a cluster of single-letter flags such as -nc).
func hasCount(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if len(a) > 1 && a[0] == '-' && a[1] != '-' {
			// In a cluster, the letters before the first one that takes a
			// value are flags; -c is found if it comes first of those.
			for _, f := range a[1:] {
				if f == 'c' {
					return true
				}
				if !strings.ContainsRune("46aAbBdDfhLnOqrRUv", f) {
					break // f takes a value: the rest is that value
				}
			}
		}
	}
	return false
}
