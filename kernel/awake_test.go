//go:build linux

package kernel

import (
	"os"
	"strconv"
	"testing"
)

// The keeper's body runs only in the child its parent marked: with the
// variable unset, or naming another parent, it returns at once (a stray
// variable in a user's environment makes nothing spin).
func TestKeeperBodyRunsOnlyInTheChildItsParentMarked(t *testing.T) {
	for _, v := range []string{"", "1", strconv.Itoa(os.Getpid())} {
		t.Setenv(awakeEnv, v)
		KeepAwakeIfAsked() // would never return
	}
}
