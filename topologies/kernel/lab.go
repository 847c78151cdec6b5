//go:build linux

package kernel

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"

	"golang.org/x/sys/unix"

	"github.com/atmlab/atmlab/emulator/sched"
	"github.com/atmlab/atmlab/topologies"
)

// RunDir holds each running lab's control socket: /run/atmlab for root,
// StateDir for a normal user's labs (rootless.go).
var RunDir = runDir()

// SocketPath is where a running lab answers `atmlab stats` and `capture`.
func SocketPath(lab string) string { return socketPath(lab) }

// Lab is a lab built in the kernel: its namespaces and TAPs, the emulated
// network between them, and the loop that drives it.
type Lab struct {
	Lab        *topologies.Lab
	Net        *topologies.Network
	Loop       *Loop
	namespaces []string
	server     *server
	restoreCC  func()
	Notes      []string // what Up changed outside the lab, for the user
}

// Up builds lab: a namespace per host, a TAP per host interface attached to
// the emulated network, and the control socket. On any failure it removes
// what it made. A previous run of the same lab that was killed is cleaned up
// first; a lab that is still running is an error.
func Up(lab *topologies.Lab) (_ *Lab, err error) {
	if err := RequireRoot(); err != nil {
		return nil, err
	}
	if err := prepareHolder(); err != nil {
		return nil, err
	}
	if running(lab.Name) {
		return nil, fmt.Errorf("lab %s is already up (its control socket %s answers): stop it, or run `atmlab down %s`", lab.Name, SocketPath(lab.Name), lab.Name)
	}
	if _, err := Down(lab.Name); err != nil {
		return nil, fmt.Errorf("remove what an earlier run of %s left: %w", lab.Name, err)
	}
	s := sched.New()
	network, err := topologies.Build(lab, s)
	if err != nil {
		return nil, err
	}
	loop, err := NewLoop(s)
	if err != nil {
		return nil, fmt.Errorf("event loop: %w", err)
	}
	k := &Lab{Lab: lab, Net: network, Loop: loop}
	defer func() {
		if err != nil {
			k.Close()
		}
	}()

	restore, note, err := allowCongestionControls(lab)
	k.restoreCC = restore
	if err != nil {
		return nil, err
	}
	if note != "" {
		k.Notes = append(k.Notes, note)
	}
	for _, node := range lab.Nodes {
		if node.Kind != topologies.KindHost {
			continue
		}
		name := lab.Namespace(node.Name)
		ns, err := createNamespace(lab.Name, name)
		if ns.IsOpen() || err == nil {
			k.namespaces = append(k.namespaces, name)
		}
		if err != nil {
			return nil, err
		}
		for _, iface := range node.Interfaces {
			offload := offloads(lab, topologies.Endpoint{Node: node.Name, Port: iface.Name})
			var flags uint16
			if offload {
				flags = unix.IFF_VNET_HDR
			}
			fd, err := openTAP(ns, iface.Name, flags)
			if err != nil {
				ns.Close()
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			port := network.Hosts[node.Name+":"+iface.Name]
			attach := loop.Attach
			if offload {
				attach = loop.AttachVNet
			}
			if err := attach(fd, port, func() error { return unix.Close(fd) }); err != nil {
				unix.Close(fd)
				ns.Close()
				return nil, err
			}
		}
		err = setupHost(lab, node, ns)
		ns.Close()
		if err != nil {
			return nil, err
		}
	}
	if k.Loop.VethRTT, err = probeVeth(lab.Name); err != nil {
		return nil, err
	}
	if k.server, err = listen(k); err != nil {
		return nil, err
	}
	if err := markHolder(lab.Name); err != nil {
		return nil, err
	}
	return k, nil
}

// Run drives the lab until ctx is cancelled.
func (k *Lab) Run(ctx context.Context) error {
	go k.server.serve(ctx)
	return k.Loop.Run(ctx)
}

// Close removes everything Up made: TAPs, namespaces and the processes in
// them, and the control socket. It is safe to call more than once.
func (k *Lab) Close() error {
	var errs []error
	if k.server != nil {
		errs = append(errs, k.server.close())
		k.server = nil
	}
	if k.Loop != nil {
		errs = append(errs, k.Loop.Close())
		k.Loop = nil
	}
	_, err := Remove(k.namespaces)
	k.namespaces = nil
	if k.restoreCC != nil {
		k.restoreCC()
		k.restoreCC = nil
	}
	unmarkHolder(k.Lab.Name)
	return errors.Join(append(errs, err)...)
}

// Namespaces returns the namespaces this lab created.
func (k *Lab) Namespaces() []string { return k.namespaces }

// Down removes whatever a run of the lab named name left behind: its marked
// namespaces (and processes in them) and a stale control socket. It returns
// the namespaces it removed. For a normal user it stops the lab's holder
// instead, and whatever the user started in it (rootless.go).
func Down(name string) ([]string, error) {
	if NeedsHolder() {
		return downRootless(name)
	}
	owned, err := Owned(name)
	if err != nil {
		return nil, err
	}
	removed, err := Remove(owned)
	if !running(name) {
		os.Remove(SocketPath(name))
	}
	return removed, err
}

// running reports whether a lab's control socket answers.
func running(name string) bool {
	c, err := net.Dial("unix", SocketPath(name))
	if err != nil {
		return false
	}
	c.Close()
	return true
}
