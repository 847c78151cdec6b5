package labrun

// A lab run's progress line where it goes: a terminal, or a log.

import (
	"bytes"
	"io"
	"os"
)

// ProgressWriter is where a lab run's progress line goes: w itself on a
// terminal, where each update overwrites the last with a carriage return;
// elsewhere (lab run 2> log) a plainLines that writes each update as a
// line of its own.
func ProgressWriter(w io.Writer) io.Writer {
	if isTerminal(w) {
		return w
	}
	return &plainLines{w: w}
}

// isTerminal says whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// plainLines turns a progress line redrawn with "\r" into plain lines: each
// write is one update and ends as a line (its padding trimmed), and a
// newline after a line already ended is dropped.
type plainLines struct {
	w       io.Writer
	pending []byte // the current line, not yet ended
	ended   bool   // the last thing written was a line end
}

func (p *plainLines) Write(b []byte) (int, error) {
	var out []byte
	for _, c := range b {
		switch c {
		case '\r', '\n':
			line := bytes.TrimRight(p.pending, " ")
			if len(line) > 0 || (c == '\n' && !p.ended) {
				out = append(append(out, line...), '\n')
				p.ended = true
			}
			p.pending = p.pending[:0]
		default:
			p.pending = append(p.pending, c)
			p.ended = false
		}
	}
	if line := bytes.TrimRight(p.pending, " "); len(line) > 0 {
		out = append(append(out, line...), '\n')
		p.pending, p.ended = p.pending[:0], true
	}
	if len(out) > 0 {
		if _, err := p.w.Write(out); err != nil {
			return 0, err
		}
	}
	return len(b), nil
}
