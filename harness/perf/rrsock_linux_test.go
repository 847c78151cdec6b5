package perf

import (
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"testing"
)

// TestRRSocketLeavesGosNetpoller: the socket a request/response test runs
// on is watched by no epoll instance of the process (Go's netpoller), so a
// message that comes wakes only the thread blocked in read, as netperf's;
// and the socket still carries the test's messages.
func TestRRSocketLeavesGosNetpoller(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			accepted <- c
		}
		close(accepted)
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	server := <-accepted
	if server == nil {
		t.Fatal("no connection accepted")
	}
	defer server.Close()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()

	socks := map[string]rrSock{}
	for _, tc := range []struct {
		name string
		conn syscall.Conn
		sock func() (rrSock, error)
	}{
		{"TCP client", c.(syscall.Conn), func() (rrSock, error) { return rrSocket(c) }},
		{"TCP server", server.(syscall.Conn), func() (rrSock, error) { return rrSocket(server) }},
		{"UDP server", pc.(syscall.Conn), func() (rrSock, error) { return rrPacketSocket(pc, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 9}) }},
	} {
		ino := socketInode(t, tc.conn)
		if !inNetpoller(t, ino) {
			t.Fatalf("%s: a Go connection's socket is not in any epoll set; the test cannot tell", tc.name)
		}
		s, err := tc.sock()
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		defer s.Close()
		socks[tc.name] = s
		if inNetpoller(t, ino) {
			t.Errorf("%s: the request/response socket is still in Go's netpoller: every message wakes its thread too", tc.name)
		}
	}

	// The two TCP ends, now both blocking sockets, carry a transaction.
	cs, ss := socks["TCP client"], socks["TCP server"]
	buf := make([]byte, 8)
	if _, err := cs.Write([]byte("req")); err != nil {
		t.Fatal(err)
	}
	if n, err := ss.Read(buf); err != nil || string(buf[:n]) != "req" {
		t.Fatalf("server read %q, %v", buf[:n], err)
	}
	if _, err := ss.Write([]byte("resp")); err != nil {
		t.Fatal(err)
	}
	if n, err := cs.Read(buf); err != nil || string(buf[:n]) != "resp" {
		t.Fatalf("client read %q, %v", buf[:n], err)
	}
}

// socketInode is the inode of c's socket, as epoll's fdinfo names it.
func socketInode(t *testing.T, c syscall.Conn) uint64 {
	t.Helper()
	raw, err := c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var st syscall.Stat_t
	var serr error
	raw.Control(func(fd uintptr) { serr = syscall.Fstat(int(fd), &st) })
	if serr != nil {
		t.Fatal(serr)
	}
	return st.Ino
}

var epollTarget = regexp.MustCompile(`(?m)^tfd:.*\bino:([0-9a-f]+)`)

// inNetpoller says whether any epoll instance of this process watches the
// socket with inode ino (/proc/self/fdinfo of each eventpoll descriptor).
func inNetpoller(t *testing.T, ino uint64) bool {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	for _, fd := range fds {
		if l, _ := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); l != "anon_inode:[eventpoll]" {
			continue
		}
		info, err := os.ReadFile(filepath.Join("/proc/self/fdinfo", fd.Name()))
		if err != nil {
			continue
		}
		for _, m := range epollTarget.FindAllStringSubmatch(string(info), -1) {
			if v, err := strconv.ParseUint(m[1], 16, 64); err == nil && v == ino {
				return true
			}
		}
	}
	return false
}
