package topologies

import (
	"fmt"
	"strings"

	"github.com/atmlab/atmlab/topologies/labyaml"
)

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

// checkNative checks the experiments that name a native AAL test: atmlab's
// tool measures them, over a native PVC between their hosts.
func checkNative(lab *Lab) []error {
	var errs []error
	for i, e := range lab.Experiments {
		for _, t := range e.Tests {
			if !strings.HasPrefix(t, "AAL") {
				continue
			}
			key := fmt.Sprintf("experiments[%d].tests", i)
			if e.Tool != "atmlab" {
				errs = append(errs, &labyaml.Error{File: lab.File, Line: e.Line, Key: key, Msg: fmt.Sprintf("%s is atmlab's own test of the native AAL API; %s has none: leave out tool: %s", t, e.Tool, e.Tool)})
			} else if _, _, err := lab.NativePVC(e.From, e.To); err != nil {
				errs = append(errs, &labyaml.Error{File: lab.File, Line: e.Line, Key: key, Msg: fmt.Sprintf("%s: %v", t, err)})
			}
			break
		}
	}
	return errs
}
