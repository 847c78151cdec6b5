package labshell

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"golang.org/x/term"
)

// Lines is where the shell reads its command lines.
type Lines interface {
	// ReadLine returns the next line, or io.EOF at the end of the input.
	ReadLine() (string, error)
}

// Loop reads lines and runs each until exit, quit or the end of the
// input, or until ctx ends (SIGTERM), which also stops the running
// command; a read then in progress is left behind, for the process is
// ending. A signal on interrupts (Ctrl-C) cancels the running command,
// not the shell. It returns how many lines failed.
func (s *Shell) Loop(ctx context.Context, in Lines, interrupts <-chan os.Signal) int {
	failed := 0
	type read struct {
		line string
		err  error
	}
	for ctx.Err() == nil {
		next := make(chan read, 1)
		go func() {
			line, err := in.ReadLine()
			next <- read{line, err}
		}()
		var r read
		select {
		case r = <-next:
		case <-ctx.Done():
			return failed
		}
		line, err := r.line, r.err
		if err != nil {
			if !errors.Is(err, io.EOF) {
				fmt.Fprintf(s.Stderr, "atmlab shell: %v\n", err)
				failed++
			}
			return failed
		}
		for len(interrupts) > 0 { // a Ctrl-C typed between commands
			<-interrupts
		}
		lineCtx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			select {
			case <-interrupts:
				cancel()
			case <-done:
			}
		}()
		err = s.Run(lineCtx, line)
		close(done)
		interrupted := lineCtx.Err() != nil
		cancel()
		switch {
		case errors.Is(err, ErrExit):
			return failed
		case interrupted && s.Stdin != nil && !s.nodeCommand(line):
			// After the terminal's ^C; a node's command (ping) ends its
			// own line.
			fmt.Fprintln(s.Stdout)
		case err != nil && !interrupted:
			fmt.Fprintf(s.Stderr, "%v\n", err)
			failed++
		}
	}
	return failed
}

// Script reads lines from a file or pipe, without prompt or line editing.
type Script struct{ sc *bufio.Scanner }

func NewScript(r io.Reader) *Script { return &Script{sc: bufio.NewScanner(r)} }

func (s *Script) ReadLine() (string, error) {
	if s.sc.Scan() {
		return s.sc.Text(), nil
	}
	if err := s.sc.Err(); err != nil {
		return "", err
	}
	return "", io.EOF
}

// Terminal reads lines from a terminal with a prompt, line editing and
// history (golang.org/x/term), in raw mode only while it reads: a command
// then runs on the terminal as the user set it up, and Ctrl-C sends it
// SIGINT as usual.
type Terminal struct {
	fd  int
	in  *ctrlC
	t   *term.Terminal
	out io.Writer

	mu     sync.Mutex
	old    *term.State // the mode to restore, while raw
	closed bool
}

// NewTerminal reads from the terminal in and shows the prompt on out.
func NewTerminal(in *os.File, out io.Writer, prompt string) *Terminal {
	c := &ctrlC{r: in}
	return &Terminal{fd: int(in.Fd()), in: c, out: out, t: term.NewTerminal(struct {
		io.Reader
		io.Writer
	}{c, out}, prompt)}
}

// ReadLine reads one line. Ctrl-C there drops the line, as a shell does;
// Ctrl-D on an empty line is the end of the input.
func (t *Terminal) ReadLine() (string, error) {
	for {
		if w, h, err := term.GetSize(t.fd); err == nil {
			t.t.SetSize(w, h)
		}
		if err := t.raw(); err != nil {
			return "", err
		}
		line, err := t.t.ReadLine()
		t.restore()
		if errors.Is(err, term.ErrPasteIndicator) {
			err = nil
		}
		if err == nil && t.in.cancelled() {
			continue
		}
		if errors.Is(err, io.EOF) {
			fmt.Fprintln(t.out)
		}
		return line, err
	}
}

func (t *Terminal) raw() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return io.EOF
	}
	old, err := term.MakeRaw(t.fd)
	t.old = old
	return err
}

func (t *Terminal) restore() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.old != nil {
		term.Restore(t.fd, t.old)
		t.old = nil
	}
}

// Close gives the terminal back as it was, also while a line is being
// read (the shell ends on SIGTERM), and reads no more.
func (t *Terminal) Close() error {
	t.restore()
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closed = true
	return nil
}

// ctrlC reads a terminal in raw mode and turns Ctrl-C into Enter, because
// x/term's line editor ends the input on Ctrl-C; it notes, for each key
// that ends a line, whether it was Ctrl-C, so that line is dropped. Lines
// typed ahead (read at once) keep their order.
type ctrlC struct {
	r      io.Reader
	ends   []bool // for each line ending read and not yet taken: was it Ctrl-C
	lastCR bool   // the last byte read was a CR (a LF after it ends no line)
}

func (c *ctrlC) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	for i := range p[:n] {
		switch b := p[i]; {
		case b == 3:
			p[i] = '\r'
			c.ends = append(c.ends, true)
		case b == '\r', b == '\n' && !c.lastCR:
			c.ends = append(c.ends, false)
		}
		c.lastCR = p[i] == '\r'
	}
	return n, err
}

// cancelled takes the oldest line ending: whether the line it ended was
// dropped with Ctrl-C.
func (c *ctrlC) cancelled() bool {
	if len(c.ends) == 0 {
		return false
	}
	end := c.ends[0]
	c.ends = c.ends[1:]
	return end
}

// nodeCommand reports whether line runs a command in a host.
func (s *Shell) nodeCommand(line string) bool {
	words, _ := Split(line)
	return len(words) > 0 && s.isHost(words[0])
}
