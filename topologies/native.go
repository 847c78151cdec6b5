package topologies

import "fmt"

// NativeEnd is one end of a native AAL PVC: the host's interface and its
// VC there (each end has its own VPI/VCI of the one PVC).
type NativeEnd struct {
	Iface string
	VC    VC
	AAL   AAL // the link's adaptation layer, which the adapter segments with
}

// NativePVC returns both ends of the native PVC from host from to host to
// (atm: native: true on both hosts' links), or an error that says what is
// missing.
func (l *Lab) NativePVC(from, to string) (a, b NativeEnd, err error) {
	fn, tn := l.Node(from), l.Node(to)
	if fn == nil || tn == nil {
		return a, b, fmt.Errorf("no host %s or %s", from, to)
	}
	end := func(n, peer *Node) (NativeEnd, bool) {
		for _, i := range n.Interfaces {
			for _, vc := range i.VCs {
				if !vc.Native {
					continue
				}
				for _, pi := range peer.Interfaces {
					if pi.IPv4.IsValid() && pi.IPv4.Addr() == vc.Peer {
						ln := l.LinkOf(Endpoint{Node: n.Name, Port: i.Name})
						return NativeEnd{Iface: i.Name, VC: vc, AAL: ln.ATM.AAL}, true
					}
				}
			}
		}
		return NativeEnd{}, false
	}
	a, ok1 := end(fn, tn)
	b, ok2 := end(tn, fn)
	if !ok1 || !ok2 {
		return a, b, fmt.Errorf("no native PVC from %s to %s: give both hosts' ATM links native: true", from, to)
	}
	return a, b, nil
}
