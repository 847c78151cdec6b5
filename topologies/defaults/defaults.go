// Package defaults holds the values a lab file gets where it does not say:
// their values here and nowhere else (each kind's row in package kinds
// applies its own), so that a resolved lab (spec.json) holds every value
// the models are built with. Call sites read defaults.MTU.
package defaults

import (
	"github.com/atmlab/atmlab/emulator/units"
	"github.com/atmlab/atmlab/topologies"
)

// The defaults, applied when a lab file does not say.
const (
	MTU  = 1500
	Rate = units.Gbps

	// ATMMTU is Classical IP over ATM's MTU (RFC 1626, kept by RFC 2225).
	ATMMTU = 9180

	// SwitchBuffer is a switch's output queue per port.
	SwitchBuffer units.Size = 128 << 10

	// Repeater is a hub's repeater class: 100BASE-TX hubs are class II.
	Repeater = topologies.Class2

	// An ATM link's layers and first VC unless its atm: says.
	PHY   topologies.PHY = "oc3"
	AAL                  = topologies.AAL5
	Encap                = topologies.LLC
	VCI                  = 100

	// ATMSwitchQueue is an atm-switch's output queue per port, in cells
	// (about 12 ms at OC-3c).
	ATMSwitchQueue = 4096

	// Discard is an atm-switch's discard policy: cell by cell.
	Discard = topologies.DiscardNone

	// Limit bounds the frames in an impaired Ethernet direction's pipe:
	// netem's default of 1000 packets (emulator.DefaultLimit).
	Limit = 1000
	// ATMLimit bounds the cells in an ATM link's: 1000 PDUs of the 192
	// cells a 9180-octet AAL5 PDU takes (atm.DefaultLimit).
	ATMLimit = 1000 * 192

	// CPUQueue is the frames waiting for a slow host's or a software
	// switch's CPU (emulator.DefaultFrameQueue).
	CPUQueue = 64
	// RouterQueue is the packets waiting for a software router's CPU: a
	// NIC ring's worth (router.DefaultCPUQueue).
	RouterQueue = 1000
)

// The models' constants these equal are checked in package devices
// (TestDefaultsAreTheModels), which imports both.
