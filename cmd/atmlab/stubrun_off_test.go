//go:build !atmlab_stub

package main

// stubRun: this is the package's own build, not make unit's second run
// with the tag atmlab_stub.
const stubRun = false
