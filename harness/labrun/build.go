package labrun

import (
	"cmp"
	"fmt"
	"runtime"
)

// Build is what `atmlab --version` prints: atmlab's version and commit,
// and the Go that built it.
type Build struct {
	Version string `json:"version"`
	Commit  string `json:"commit"`
	Go      string `json:"go"`
}

// ReadBuild fills a Build from version and commit, what the Makefile's
// build links in, then from the binary's own build stamp (the main
// module's version, vcs.revision, vcs.modified), where they are empty.
func ReadBuild(version, commit string) Build {
	b := Build{Version: version, Commit: commit, Go: runtime.Version()}
	if module, rev, modified, ok := BuildStamp(); ok {
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

// String is cobra's --version output: one line, then the newline cobra's
// template adds.
func (b Build) String() string {
	return fmt.Sprintf("%s (commit %s, %s)", b.Version, b.Commit, b.Go)
}
