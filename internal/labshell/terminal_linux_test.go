package labshell

import (
	"testing"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

func TestClosingTheTerminalGivesBackItsModeWhileALineIsRead(t *testing.T) {
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer ptmx.Close()
	defer tty.Close()
	canonical := func() bool {
		tio, err := unix.IoctlGetTermios(int(tty.Fd()), unix.TCGETS)
		if err != nil {
			t.Fatal(err)
		}
		return tio.Lflag&unix.ICANON != 0
	}
	if !canonical() {
		t.Fatal("a new pseudo-terminal is not in canonical mode")
	}
	in := NewTerminal(tty, tty, "t> ")
	go in.ReadLine()
	buf := make([]byte, 16)
	if _, err := ptmx.Read(buf); err != nil { // the prompt: the terminal is raw
		t.Fatal(err)
	}
	if canonical() {
		t.Fatal("the terminal is not raw while a line is read")
	}
	in.Close()
	if !canonical() {
		t.Error("after Close the terminal is still raw")
	}
}
