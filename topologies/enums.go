package topologies

import (
	"time"

	"github.com/atmlab/atmlab/cells"
	"github.com/atmlab/atmlab/emulator/atm/phy"
	"github.com/atmlab/atmlab/emulator/units"
)

// The lab file's enumerations, typed: the decoder admits only their
// constants, so what reads a resolved lab switches over them and never
// parses or compares a free string again. They are strings so that a
// resolved lab (spec.json) reads as the lab file does.

// Kind is a node's kind.
type Kind string

// Node kinds.
const (
	KindHost      Kind = "host"
	KindSwitch    Kind = "switch"
	KindHub       Kind = "hub"
	KindATMSwitch Kind = "atm-switch"
	KindRouter    Kind = "router"
	// KindWire is a wire: two Ethernet links joined store and forward.
	KindWire Kind = "wire"
)

// PHY names an ATM physical layer (package phy's table).
type PHY string

// Layer returns the PHY's cell clock; a resolved lab names only PHYs the
// table has.
func (p PHY) Layer() phy.PHY { return phy.PHYs[string(p)] }

// AAL is an ATM adaptation layer.
type AAL string

// Adaptation layers.
const (
	AAL5  AAL = "aal5"
	AAL34 AAL = "aal34"
)

// Encap is an RFC 2684 encapsulation.
type Encap string

// Encapsulations.
const (
	LLC   Encap = "llc"
	VCMux Encap = "vcmux"
)

// Layers returns the link's PHY, adaptation layer and encapsulation as
// the models and theory take them (values of packages phy and cells); a
// resolved lab holds only values they have.
func (a *ATM) Layers() (phy.PHY, cells.AAL, cells.Encap) {
	aal, encap := cells.AAL5, cells.LLC
	if a.AAL == AAL34 {
		aal = cells.AAL34
	}
	if a.Encap == VCMux {
		encap = cells.VCMux
	}
	return a.PHY.Layer(), aal, encap
}

// Discard is an atm-switch's packet discard policy.
type Discard string

// Discard policies: none, partial packet discard, early packet discard.
const (
	DiscardNone Discard = "none"
	DiscardPPD  Discard = "ppd"
	DiscardEPD  Discard = "epd"
)

// Repeater is a hub's 802.3u repeater class.
type Repeater string

// Repeater classes.
const (
	Class1 Repeater = "class1"
	Class2 Repeater = "class2"
)

// Impair is one direction's netem-style impairments as the lab file gives
// them; the emulator's Impair has the same fields.
type Impair struct {
	Delay  time.Duration // added to every frame (or cell)
	Jitter time.Duration // uniform in [-Jitter, +Jitter]; order is kept
	Loss   float64       // probability in [0, 1] that a frame (cell) is dropped
	Limit  int           // frames (cells) held in the pipe at most; Resolve sets the default where there is a pipe, 0: none
	Rate   units.BitRate // an extra bottleneck counting frame bytes only; 0 = none (Ethernet only)
}

// IsZero reports whether the impairment changes nothing.
func (im Impair) IsZero() bool { return im == Impair{} }
