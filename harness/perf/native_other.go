//go:build !linux

package perf

import (
	"context"
	"errors"
	"time"
)

// nativeConn needs Linux's packet sockets; elsewhere openNative says so.
type nativeConn struct{}

func openNative(NativeVC, int) (*nativeConn, error) {
	return nil, errors.New("the native AAL tests need Linux's packet sockets")
}

var errTimeout = errors.New("native VC: timed out")

func (*nativeConn) bufs() (int, int)  { return 0, 0 }
func (*nativeConn) send([]byte) error { return errTimeout }
func (*nativeConn) recv(time.Duration) ([]byte, time.Time, error) {
	return nil, time.Time{}, errTimeout
}
func (*nativeConn) awaitFlush(context.Context) {}
func (*nativeConn) drops() uint64              { return 0 }
func (*nativeConn) close()                     {}

func isMsgSize(error) bool { return false }
func isNoBufs(error) bool  { return false }
