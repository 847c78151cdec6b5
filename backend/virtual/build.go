package virtual

import (
	"fmt"

	"github.com/atmlab/atmlab/devices"
	"github.com/atmlab/atmlab/emulator/sched"
	"github.com/atmlab/atmlab/emulator/vhost"
	"github.com/atmlab/atmlab/topologies"
)

// Lab is a lab file's lab built for virtual time: its network of models
// and its hosts as netstack stacks, on one new scheduler.
type Lab struct {
	*vhost.Lab
	Net *devices.Network
}

// Build builds a lab's network and its virtual hosts on a new scheduler,
// with seed in place of the lab's.
func Build(lab *topologies.Lab, seed uint64) (*Lab, error) {
	seeded := *lab
	seeded.Seed = seed
	n := devices.Build(&seeded, sched.New())
	specs, err := Specs(&seeded, n)
	if err != nil {
		return nil, err
	}
	l, err := vhost.New(n.Sched, seed, specs)
	if err != nil {
		return nil, err
	}
	return &Lab{Lab: l, Net: n}, nil
}

// Specs are a lab's hosts as vhost makes them, attached to their ports in
// n (built by devices.Build): their settings from their sysctls, their
// interfaces and routes.
func Specs(lab *topologies.Lab, n *devices.Network) ([]vhost.Spec, error) {
	var specs []vhost.Spec
	for _, node := range lab.Nodes {
		if node.Kind != topologies.KindHost {
			continue
		}
		set, err := SettingsOf(lab, node)
		if err != nil {
			return nil, err
		}
		s := vhost.Spec{Name: node.Name, Where: fmt.Sprintf("%s:%d", lab.File, node.Line), Settings: set}
		for _, iface := range node.Interfaces {
			e := topologies.Endpoint{Node: node.Name, Port: iface.Name}
			s.NICs = append(s.NICs, vhost.NIC{Name: iface.Name, Port: n.Hosts[e.String()], MTU: iface.MTU, MAC: string(lab.MAC(e)), Addr: iface.IPv4})
		}
		for _, r := range node.Routes {
			s.Routes = append(s.Routes, vhost.Route{To: r.To, Via: r.Via, Where: fmt.Sprintf("%s:%d", lab.File, r.Line)})
		}
		specs = append(specs, s)
	}
	return specs, nil
}

// SettingsOf returns a host's settings from its sysctls. A sysctl netstack
// has no equivalent for is an error that names its line and says so,
// rather than a setting silently not applied.
func SettingsOf(lab *topologies.Lab, node *topologies.Node) (vhost.Settings, error) {
	s := vhost.Defaults()
	for _, kv := range node.Sysctls {
		if err := s.Sysctl(kv.Key, kv.Value); err != nil {
			return s, fmt.Errorf("%s:%d: host %s: sysctl %s=%s: %s", lab.File, node.Line, node.Name, kv.Key, kv.Value, err)
		}
	}
	return s, nil
}
