// Command relay is the floor of atmlab's architecture, for `make bench`: a
// bare forwarder between two TAPs, with no model, no clock and no queue.
// What it carries is what any userspace emulator with TAP hosts can carry on
// this machine; TestBenchLoop measures atmlab beside it and beside a veth
// pair.
//
//	relay [-block] NS1 NS2
//
// creates a TAP named atmlabr0 in each of the two named network namespaces
// (/var/run/netns), prints "ready" and copies each frame read from one to
// the other until killed. By default one thread spins over both
// descriptors without ever sleeping, as atmlab's loop does while traffic
// flows (the least latency); with -block each direction has its own thread
// that sleeps in read (no core burnt while idle).
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"unsafe"

	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

func main() {
	block := flag.Bool("block", false, "a thread per direction, sleeping in read")
	flag.Parse()
	if flag.NArg() != 2 {
		fmt.Fprintln(os.Stderr, "usage: relay [-block] NS1 NS2")
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
		n, err := unix.Read(from, buf)
		if err != nil {
			if err == unix.EINTR {
				continue
			}
			fmt.Fprintln(os.Stderr, "relay:", err)
			os.Exit(1)
		}
		unix.Write(to, buf[:n])
	}
}
