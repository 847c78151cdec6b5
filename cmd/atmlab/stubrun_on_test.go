//go:build atmlab_stub

package main

// stubRun: this is the stub build's run of the package's tests (make
// unit's second run, tag atmlab_stub), beside the Linux build's.
const stubRun = true
