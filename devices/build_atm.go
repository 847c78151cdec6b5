package devices

import (
	"github.com/atmlab/atmlab/emulator"
	"github.com/atmlab/atmlab/emulator/atm"
	"github.com/atmlab/atmlab/topologies"
)

// ATMLink is a built ATM link: a cell link each way and its capture taps.
type ATMLink struct {
	AB, BA   *atm.CellLink
	pduTaps  []emulator.Tapper
	cellTaps []emulator.Tapper
	AAL      atm.AAL
	VCMux    bool // PDUs are captured as SunATM records (atm.LinkTypeSunATM)
}

// atmLink builds both directions of an ATM link between the cell ends its
// devices give (a host's adapter, an atm-switch's port).
func (b *builder) atmLink(l *topologies.Link) {
	phy, aal, _ := l.ATM.Layers()
	ends := [2]topologies.Endpoint{l.A, l.B}
	dirs := [2]topologies.Direction{l.AB, l.BA}
	var rx [2]atm.CellReceiver
	var attach [2]func(*atm.CellLink)
	for i, e := range ends {
		d, ok := b.n.Device(e.Node).(cellDevice)
		if !ok {
			panic("devices: " + e.String() + " ends an ATM link but its device takes no cells (a programming fault: Resolve admits ATM links only between kinds that do)")
		}
		rx[i], attach[i] = d.cellEnd(b, l, e)
	}
	nl := &NetLink{Link: l, ATM: &ATMLink{AAL: aal, VCMux: l.ATM.Encap == topologies.VCMux}}
	for i := range 2 {
		im := dirs[i].Impair
		cfg := atm.LinkConfig{PHY: phy, Propagation: l.Propagation, Delay: im.Delay, Jitter: im.Jitter, CLR: im.Loss,
			Limit: im.Limit, Seed: seedOf(b.lab.Seed, ends[i].String())}
		cl := atm.NewCellLink(b.on(ends[i].Node), cfg, rx[1-i])
		attach[i](cl)
		if i == 0 {
			nl.ATM.AB = cl
		} else {
			nl.ATM.BA = cl
		}
		pdus := cl.NewTap(false, byte(i))
		pdus.SunATM = l.ATM.Encap == topologies.VCMux
		nl.ATM.pduTaps = append(nl.ATM.pduTaps, pdus)
		nl.ATM.cellTaps = append(nl.ATM.cellTaps, cl.NewTap(true, byte(i)))
	}
	b.n.Links = append(b.n.Links, nl)
}
