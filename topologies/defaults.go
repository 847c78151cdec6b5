package topologies

import "github.com/atmlab/atmlab/emulator/units"

// Defaults applied when a lab file does not say: their values here and
// nowhere else (each kind's row in package kinds applies its own), so that a
// resolved lab (spec.json) holds every value the models are built with.
const (
	DefaultMTU  = 1500
	DefaultRate = units.Gbps

	// DefaultATMMTU is Classical IP over ATM's MTU (RFC 1626, kept by RFC 2225).
	DefaultATMMTU = 9180

	// DefaultSwitchBuffer is a switch's output queue per port.
	DefaultSwitchBuffer units.Size = 128 << 10

	// DefaultRepeater is a hub's repeater class: 100BASE-TX hubs are class II.
	DefaultRepeater = Class2

	// An ATM link's layers and first VC unless its atm: says.
	DefaultPHY   PHY = "oc3"
	DefaultAAL       = AAL5
	DefaultEncap     = LLC
	DefaultVCI       = 100

	// DefaultATMSwitchQueue is an atm-switch's output queue per port, in
	// cells (about 12 ms at OC-3c).
	DefaultATMSwitchQueue = 4096

	// DefaultDiscard is an atm-switch's discard policy: cell by cell.
	DefaultDiscard = DiscardNone

	// DefaultLimit bounds the frames in an impaired Ethernet direction's
	// pipe: netem's default of 1000 packets (emulator.DefaultLimit).
	DefaultLimit = 1000
	// DefaultATMLimit bounds the cells in an ATM link's: 1000 PDUs of the
	// 192 cells a 9180-octet AAL5 PDU takes (atm.DefaultLimit).
	DefaultATMLimit = 1000 * 192

	// DefaultCPUQueue is the frames waiting for a slow host's or a
	// software switch's CPU (emulator.DefaultFrameQueue).
	DefaultCPUQueue = 64
	// DefaultRouterQueue is the packets waiting for a software router's
	// CPU: a NIC ring's worth (router.DefaultCPUQueue).
	DefaultRouterQueue = 1000
)

// The models' constants these equal are checked in package devices
// (TestDefaultsAreTheModels), which imports both.
