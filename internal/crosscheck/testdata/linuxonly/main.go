// Command linuxonly calls an API only Linux has, in a file with no build
// constraint: a cross-build for macOS or Windows fails on it, and so must
// the type-check.
package main

import "golang.org/x/sys/unix"

func main() { unix.EpollCreate1(0) }
