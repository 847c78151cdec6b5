package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
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
	bi, ok := debug.ReadBuildInfo()
	if ok {
		if b.Version == "" && bi.Main.Version != "" {
			b.Version = bi.Main.Version
		}
		if b.Commit == "" {
			var rev, dirty string
			for _, s := range bi.Settings {
				switch s.Key {
				case "vcs.revision":
					rev = s.Value
				case "vcs.modified":
					if s.Value == "true" {
						dirty = "-dirty"
					}
				}
			}
			if rev != "" {
				b.Commit = rev[:min(12, len(rev))] + dirty
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
