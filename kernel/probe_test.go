//go:build linux

package kernel

import (
	"testing"
	"time"
)

// RFC 1071's worked example: the sum of 00 01 f2 03 f4 f5 f6 f7 is ddf2,
// the checksum its complement.
func TestInetChecksum(t *testing.T) {
	if got := inetChecksum([]byte{0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7}); got != ^uint16(0xddf2) {
		t.Errorf("checksum = %#04x, want %#04x", got, ^uint16(0xddf2))
	}
	if got := inetChecksum([]byte{0x01}); got != ^uint16(0x0100) {
		t.Errorf("odd length: %#04x, want %#04x", got, ^uint16(0x0100))
	}
}

func TestEchoRequest(t *testing.T) {
	b := echoRequest(0x1234, 7, 56)
	if len(b) != 64 || b[0] != 8 || b[1] != 0 || b[4] != 0x12 || b[5] != 0x34 || b[7] != 7 {
		t.Fatalf("echo request header % x", b[:8])
	}
	if inetChecksum(b) != 0 { // a packet with its checksum in sums to all ones
		t.Errorf("checksum does not verify: % x", b[:8])
	}
}

func TestIsReply(t *testing.T) {
	ip := make([]byte, 20)
	ip[0] = 0x45
	reply := append(ip, 0, 0, 0, 0, 0x12, 0x34, 0, 7)
	if !isReply(reply, 0x1234, 7) {
		t.Error("the reply to 0x1234/7 not recognised")
	}
	if isReply(reply, 0x1234, 8) || isReply(reply, 0x4321, 7) {
		t.Error("a reply to another echo accepted")
	}
	req := append(ip[:20:20], 8, 0, 0, 0, 0x12, 0x34, 0, 7)
	if isReply(req, 0x1234, 7) {
		t.Error("an echo request accepted as its reply")
	}
	if isReply(reply[:25], 0x1234, 7) || isReply(nil, 0, 0) {
		t.Error("a short packet accepted")
	}
}

func TestMedian(t *testing.T) {
	us := time.Microsecond
	if got := median([]time.Duration{9 * us, 1 * us, 5 * us}); got != 5*us {
		t.Errorf("odd: %v", got)
	}
	if got := median([]time.Duration{4 * us, 1 * us, 2 * us, 9 * us}); got != 3*us {
		t.Errorf("even: %v", got)
	}
}
