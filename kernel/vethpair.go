//go:build linux

package kernel

import (
	"fmt"

	"github.com/vishvananda/netns"
)

// VethPair makes the veth probe's two namespaces of lab (ProbeNamespaces),
// joined by a plain veth pair, 192.0.2.1 in the first and 192.0.2.2 in the
// second, and leaves them for programs to run in (ip netns exec): what the
// hosts' own kernels carry on this machine with no emulator between them,
// measured beside a lab's points. remove takes them away; Down removes
// them too if a run dies first.
func VethPair(lab string) (names [2]string, addrB string, remove func() error, err error) {
	names = ProbeNamespaces(lab)
	var made []string
	remove = func() error { _, err := Remove(made); return err }
	var ns [2]netns.NsHandle
	for i, name := range names {
		h, err := createNamespace(lab, name)
		if h.IsOpen() || err == nil {
			made = append(made, name)
			defer h.Close()
		}
		if err != nil {
			remove()
			return names, "", nil, err
		}
		ns[i] = h
	}
	if err := joinProbe(ns); err != nil {
		remove()
		return names, "", nil, fmt.Errorf("veth pair: %w", err)
	}
	return names, probeB.String(), remove, nil
}
