// Command relay is the floor of atmlab's architecture, for `make bench`: a
// bare forwarder between two TAPs, with no model, no clock and no queue.
// What it carries is what any userspace emulator with TAP hosts can carry on
// this machine; TestBenchLoop measures atmlab beside it and beside a veth
// pair.
//
//	relay [-block [-delay D]] NS1 NS2
//
// creates a TAP named atmlabr0 in each of the two named network namespaces
// (/var/run/netns), prints "ready" and copies each frame read from one to
// the other until killed. By default one thread spins over both
// descriptors without ever sleeping, as atmlab's loop does while traffic
// flows (the least latency); with -block each direction has its own thread
// that sleeps in read (no core burnt while idle). With -delay each frame is
// written D after it was read, by a second thread per direction that
// sleeps until shortly before and spins the rest, as atmlab's loop waits
// out a link's delay: the floor for request/response over a delay.
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"time"
	"unsafe"

	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

func main() {
	block := flag.Bool("block", false, "a thread per direction, sleeping in read")
	delay := flag.Duration("delay", 0, "write each frame this long after it was read (with -block)")
	flag.Parse()
	if flag.NArg() != 2 || *delay < 0 || *delay > 0 && !*block {
		fmt.Fprintln(os.Stderr, "usage: relay [-block [-delay D]] NS1 NS2")
		os.Exit(2)
	}
	var fds [2]int
	for i, ns := range flag.Args() {
		fd, err := openTAP(ns, !*block)
		if err != nil {
			fmt.Fprintln(os.Stderr, "relay:", err)
			os.Exit(1)
		}
		fds[i] = fd
	}
	fmt.Println("ready")
	if *delay > 0 {
		go copyDelayed(fds[1], fds[0], *delay)
		copyDelayed(fds[0], fds[1], *delay)
	}
	if *block {
		go copyFrames(fds[1], fds[0])
		copyFrames(fds[0], fds[1])
	}
	spin(fds[0], fds[1])
}

// openTAP creates atmlabr0 in the namespace named ns.
func openTAP(ns string, nonblock bool) (int, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	orig, err := netns.Get()
	if err != nil {
		return -1, err
	}
	defer orig.Close()
	h, err := netns.GetFromName(ns)
	if err != nil {
		return -1, fmt.Errorf("namespace %s: %w", ns, err)
	}
	defer h.Close()
	if err := netns.Set(h); err != nil {
		return -1, err
	}
	defer func() {
		if err := netns.Set(orig); err != nil {
			panic(err)
		}
	}()
	flags := unix.O_RDWR | unix.O_CLOEXEC
	if nonblock {
		flags |= unix.O_NONBLOCK
	}
	fd, err := unix.Open("/dev/net/tun", flags, 0)
	if err != nil {
		return -1, err
	}
	ifr, err := unix.NewIfreq("atmlabr0")
	if err != nil {
		return -1, err
	}
	ifr.SetUint16(unix.IFF_TAP | unix.IFF_NO_PI)
	if err := unix.IoctlIfreq(fd, unix.TUNSETIFF, ifr); err != nil {
		return -1, fmt.Errorf("tap in %s: %w", ns, err)
	}
	return fd, nil
}

// spin forwards both ways from one thread that never sleeps.
func spin(a, b int) {
	runtime.LockOSThread()
	buf := make([]byte, 65536)
	for {
		forward(a, b, buf)
		forward(b, a, buf)
	}
}

// forward copies the frames waiting in from to to, until from is empty.
func forward(from, to int, buf []byte) {
	for {
		n, _, err := unix.RawSyscall(unix.SYS_READ, uintptr(from), uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)))
		if err != 0 || int(n) <= 0 {
			return
		}
		unix.RawSyscall(unix.SYS_WRITE, uintptr(to), uintptr(unsafe.Pointer(&buf[0])), n)
	}
}

// copyFrames forwards from one descriptor to the other, sleeping in read.
func copyFrames(from, to int) {
	buf := make([]byte, 65536)
	for {
		unix.Write(to, readFrame(from, buf))
	}
}

// readFrame sleeps in read until a frame comes from fd.
func readFrame(fd int, buf []byte) []byte {
	for {
		n, err := unix.Read(fd, buf)
		if err == nil {
			return buf[:n]
		}
		if err != unix.EINTR {
			fmt.Fprintln(os.Stderr, "relay:", err)
			os.Exit(1)
		}
	}
}

// copyDelayed forwards from one descriptor to the other, each frame d
// after it was read: a thread reads and stamps, another writes each when
// due, in order (every frame has the same delay). The writer wakes an
// eighth of the wait early (at most 1 ms) and spins the rest, as atmlab's
// loop does (kernel's earlyWake): a sleeping thread wakes tens of
// microseconds late here.
func copyDelayed(from, to int, d time.Duration) {
	spinLast := min(d/8, time.Millisecond)
	type frame struct {
		due time.Time
		b   []byte
	}
	q := make(chan frame, 4096)
	go func() {
		runtime.LockOSThread()
		buf := make([]byte, 65536)
		for {
			b := readFrame(from, buf)
			q <- frame{time.Now().Add(d), append([]byte(nil), b...)}
		}
	}()
	runtime.LockOSThread()
	for f := range q {
		if wait := time.Until(f.due) - spinLast; wait > 0 {
			ts := unix.NsecToTimespec(wait.Nanoseconds())
			for unix.Nanosleep(&ts, &ts) == unix.EINTR {
			}
		}
		for time.Now().Before(f.due) {
		}
		unix.Write(to, f.b)
	}
}
