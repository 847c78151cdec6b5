// Command linuxbody imports a package of the module whose function body
// calls an API only Linux has: a cross-build for macOS fails on it, and so
// must the type-check.
package main

import "github.com/atmlab/atmlab/internal/crosscheck/testdata/linuxlib"

func main() { linuxlib.Poll() }
