//go:build !linux

package remote

import (
	"fmt"
	"net"
	"sync/atomic"
)

// Shared is memory two parts' processes share on Linux; here the parts
// go by their connection alone.
type Shared struct{}

func (*Shared) safe(int) *atomic.Int64     { panic("remote: no shared memory here") }
func (*Shared) accounts(int) *atomic.Int64 { panic("remote: no shared memory here") }
func (*Shared) sleeping(int) *atomic.Int64 { panic("remote: no shared memory here") }

// Close does nothing.
func (*Shared) Close() {}

const noShare = 'N'

// Share tells a part's process over a Unix socket that there is no
// memory to share.
func Share(c net.Conn, _ int) (*Shared, error) {
	if _, ok := c.(*net.UnixConn); !ok {
		return nil, nil
	}
	_, err := c.Write([]byte{noShare})
	return nil, err
}

// TakeShared reads the run's word that there is no memory to share.
func TakeShared(c net.Conn) (*Shared, error) {
	if _, ok := c.(*net.UnixConn); !ok {
		return nil, nil
	}
	b := make([]byte, 1)
	if _, err := c.Read(b); err != nil {
		return nil, err
	}
	if b[0] != noShare {
		return nil, fmt.Errorf("the run's process offered memory, which this system does not share")
	}
	return nil, nil
}
