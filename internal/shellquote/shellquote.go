// Package shellquote writes a string as one word of a POSIX shell command
// line, so that a script atmlab generates (a Slurm batch file, a submit
// script, a command it suggests) hands the shell's command exactly the
// string and the shell runs nothing that the string holds.
package shellquote

import "strings"

// Quote returns s as one shell word that sh, dash and bash read back as s:
// unchanged when it holds only characters no shell treats specially
// (letters, digits and _ . / : + , @ % -), otherwise in single quotes,
// inside which nothing is special, each single quote closing the quotes,
// adding an escaped one and reopening them:
//
//	Quote("it's")  == `'it'\''s'`
//	Quote("")      == `''`
//	Quote("a b")   == `'a b'`
//
// A word that starts with - is still an option to the command it is given
// to: keeping it from being one (with -- or ./) is the caller's business.
// s must hold no NUL byte: no argument, environment value or file name
// can, and shells drop it from script text.
func Quote(s string) string {
	if s != "" && plain(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// plain reports whether every byte of s is one that needs no quoting in
// any position of a command line: = is left out (NAME=x before a command
// is an assignment), as are ~ (a home folder), glob characters, quotes,
// $ and `, white space, control characters and every byte above ASCII.
func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("_./:+,@%-", c) >= 0:
		default:
			return false
		}
	}
	return true
}
