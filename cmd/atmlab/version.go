package main

import (
	"cmp"
	"fmt"
	"runtime"

	"github.com/atmlab/atmlab/harness/labrun"
)

// version and commit are set by the Makefile's build (-ldflags -X
// main.version=... -X main.commit=..., from git describe); a plain `go build`
// or `go install` leaves them empty and the Go toolchain's build stamp
// (the main module's version, vcs.revision, vcs.modified) stands in.
var version, commit string

// buildInfo is what `atmlab --version` prints.
type buildInfo struct {
	Version string `json:"version"`
	Commit  string `json:"commit"`
	Go      string `json:"go"`
}

// readBuildInfo fills buildInfo from the link-time overrides, then from
// the binary's own build stamp.
func readBuildInfo() buildInfo {
	b := buildInfo{Version: version, Commit: commit, Go: runtime.Version()}
	if module, rev, modified, ok := labrun.BuildStamp(); ok {
		b.Version = cmp.Or(b.Version, module)
		if b.Commit == "" && rev != "" {
			b.Commit = rev[:min(12, len(rev))]
			if modified {
				b.Commit += "-dirty"
			}
		}
	}
	if b.Version == "" {
		b.Version = "(devel)"
	}
	if b.Commit == "" {
		b.Commit = "unknown"
	}
	return b
}

// versionLine is cobra's --version output: one line, then the newline
// cobra's template adds.
func (b buildInfo) String() string {
	return fmt.Sprintf("%s (commit %s, %s)", b.Version, b.Commit, b.Go)
}
