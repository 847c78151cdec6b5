// Package linuxlib calls an API only Linux has inside a function body, in
// a file with no build constraint: its exported API is the same on every
// system, so only a check of the body finds it.
package linuxlib

import "golang.org/x/sys/unix"

// Poll makes an epoll instance.
func Poll() (int, error) { return unix.EpollCreate1(0) }
