//go:build linux

package kernel

import (
	"bytes"
	"testing"

	"golang.org/x/sys/unix"
)

// The raw reads and writes carry a frame's buffers whole and in order,
// skip empty ones, and report an empty descriptor as EAGAIN, as the
// x/sys/unix calls they replace did.
func TestRawReadsAndWrites(t *testing.T) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fds[0])
	defer unix.Close(fds[1])
	var w, r iovecs
	w.set([]byte("head"), nil, []byte("payload"))
	if w.n != 2 {
		t.Fatalf("%d vectors for two buffers and an empty one; want 2", w.n)
	}
	if n, err := writevRaw(fds[0], &w); n != 11 || err != nil {
		t.Fatalf("writev = %d, %v; want 11, nil", n, err)
	}
	if n, err := writeRaw(fds[0], []byte("second")); n != 6 || err != nil {
		t.Fatalf("write = %d, %v; want 6, nil", n, err)
	}
	hdr, body := make([]byte, 4), make([]byte, 64)
	r.set(hdr, body)
	if n, err := readvRaw(fds[1], &r); n != 11 || err != nil || string(hdr) != "head" || !bytes.HasPrefix(body, []byte("payload")) {
		t.Fatalf("readv = %d, %v, %q %q; want 11, nil, head payload", n, err, hdr, body[:7])
	}
	if n, err := readRaw(fds[1], body); n != 6 || err != nil || string(body[:6]) != "second" {
		t.Fatalf("read = %d, %v, %q; want 6, nil, second", n, err, body[:6])
	}
	if n, err := readvRaw(fds[1], &r); n != -1 || err != unix.EAGAIN {
		t.Fatalf("readv of an empty descriptor = %d, %v; want -1, EAGAIN", n, err)
	}
	if n, err := readRaw(fds[1], body); n != -1 || err != unix.EAGAIN {
		t.Fatalf("read of an empty descriptor = %d, %v; want -1, EAGAIN", n, err)
	}
	w.clear()
	if w.n != 0 || w.v[0].Base != nil || w.v[1].Base != nil {
		t.Fatalf("cleared vectors still hold their buffers: %+v", w)
	}
}
