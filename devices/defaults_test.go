package devices

import (
	"testing"

	"github.com/atmlab/atmlab/emulator"
	"github.com/atmlab/atmlab/emulator/atm"
	"github.com/atmlab/atmlab/emulator/router"
	"github.com/atmlab/atmlab/topologies/defaults"
)

// The lab file's defaults, which Resolve writes into a lab (and spec.json),
// are the models' own: the lab-file package cannot import the models, so
// its constants are checked against theirs here.
func TestDefaultsAreTheModels(t *testing.T) {
	for _, c := range []struct {
		name        string
		lab, models int
	}{
		{"Ethernet impairment limit", defaults.Limit, emulator.DefaultLimit},
		{"ATM impairment limit", defaults.ATMLimit, atm.DefaultLimit},
		{"host CPU queue", defaults.CPUQueue, emulator.DefaultFrameQueue},
		{"router CPU queue", defaults.RouterQueue, router.DefaultCPUQueue},
	} {
		if c.lab != c.models {
			t.Errorf("%s: the lab file's default is %d, the model's %d", c.name, c.lab, c.models)
		}
	}
}
