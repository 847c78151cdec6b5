//go:build !unix

package remote

import (
	"net"
	"time"
)

// sock is the descriptor access unix systems give; elsewhere reads and
// writes go through net.Conn and wait.
type sock struct{ nowait bool }

func newSock(net.Conn) *sock { return nil }

func (*sock) Read([]byte) (int, error) { return 0, nil }

func (*sock) keep() {}

func (*sock) write([]byte, func(), time.Duration) error { return nil }

// SpinFor is how long the relay polls before it sleeps a moment.
var SpinFor = 2 * time.Millisecond

// waitReadable sleeps a moment: without descriptors to poll, the
// relay's reads are tried again after it.
func waitReadable(_ []*Conn, d time.Duration) { time.Sleep(min(d, 100*time.Microsecond)) }
