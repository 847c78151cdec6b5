package main

// version and commit are set by the Makefile's build (-ldflags -X
// main.version=... -X main.commit=..., from git describe); a plain `go build`
// or `go install` leaves them empty and the Go toolchain's build stamp
// (labrun.ReadBuild) stands in.
var version, commit string
