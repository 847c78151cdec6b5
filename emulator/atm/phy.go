// Package atm models ATM links and switches with real cells: a host's
// adapter that turns its Ethernet frames into AAL5 or AAL3/4 PDUs in
// RFC 2684 encapsulation and back (answering ATMARP itself), cell links that
// send one 53-octet cell per slot of the PHY's cell clock, and a cell switch
// that translates VPI/VCI per port and queues cells per output port. Facts:
// docs/reference.md §5.
package atm

import "github.com/atmlab/atmlab/emulator/atm/phy"

// PHY is a physical layer's cell clock (package phy, which the lab-file
// package reads without importing the model).
type PHY = phy.PHY

// PHYs are the physical layers a lab can name.
var PHYs = phy.PHYs

// PHYNames lists the PHYs, sorted.
func PHYNames() []string { return phy.Names() }

// LookupPHY returns the PHY named name or an error listing the known ones.
func LookupPHY(name string) (PHY, error) { return phy.Lookup(name) }
