// Package cpuprofile writes a Go CPU profile of the process to a file,
// for atmlab up --cpuprofile: where the emulator's loop spends its time.
package cpuprofile

import (
	"os"
	"runtime/pprof"
)

// Start starts profiling into a new file at path (an existing one is
// truncated); stop ends the profile and closes the file.
func Start(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}
