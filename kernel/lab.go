//go:build linux

package kernel

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/atmlab/atmlab/control"
	"github.com/atmlab/atmlab/devices"
	"github.com/atmlab/atmlab/emulator/sched"
	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/labfile"
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
	Net        *devices.Network
	Loop       *Loop
	namespaces []string
	server     *control.Server
	lock       *fileLock // held for the lab's life
	Notes      []string  // what Up changed outside the lab, for the user
	// Events, if set, gets a line per run-time change (the lab's event log).
	Events  io.Writer
	changes []control.Changed // only the loop goroutine touches it

	hostMu sync.Mutex
	hosts  map[string]*hostReader // each host's kernel counters, opened by Stats

	// Cuts, if set, gives a split lab's part's rows of its cut links
	// (backend/cut) for Stats; it runs on the loop goroutine.
	Cuts func() []control.CutStats
}

// Up builds lab: a namespace per host, a TAP per host interface attached to
// the emulated network, and the control socket. It first takes the lab's
// lock (LockPath): if another process holds it, the lab is up or starting
// and Up returns an error having touched nothing. Then it cleans up what a
// killed run of the lab left. On any failure it removes what it made, and
// only that.
func Up(lab *topologies.Lab) (*Lab, error) { return UpPart(lab, nil, nil) }

// UpPart is Up for one part of a split lab: the hosts named in standIns
// are the far ends of its cut links, built as models only (no namespace,
// no TAP), whose ports the caller attaches to the cut (backend/cut).
// whole, if not nil, is the split lab: the hosts' files name all its
// hosts, so that a host reaches one in another part by its name.
func UpPart(lab *topologies.Lab, standIns []string, whole *topologies.Lab) (_ *Lab, err error) {
	names := lab
	if whole != nil {
		names = whole
	}
	if err := RequireRoot(); err != nil {
		return nil, err
	}
	if err := prepareHolder(); err != nil {
		return nil, err
	}
	lock, err := tryLock(LockPath(lab.Name))
	if err != nil {
		return nil, lockedLab(lab.Name, err, "this run changed nothing")
	}
	defer func() {
		if err != nil && lock != nil {
			lock.release()
		}
	}()
	if _, err := down(lab.Name); err != nil {
		return nil, fmt.Errorf("remove what an earlier run of %s left: %w", lab.Name, err)
	}
	s := sched.New()
	network := devices.Build(lab, s)
	loop, err := NewLoop(s)
	if err != nil {
		return nil, fmt.Errorf("event loop: %w", err)
	}
	k := &Lab{Lab: lab, Net: network, Loop: loop, lock: lock}
	lock = nil // k.Close releases it
	defer func() {
		if err != nil {
			k.Close()
		}
	}()

	note, err := hostCC.allow(lab.Name, wantedCongestionControls(lab))
	if err != nil {
		return nil, err
	}
	if note != "" {
		k.Notes = append(k.Notes, note)
	}
	for _, node := range lab.Nodes {
		if node.Kind != topologies.KindHost || slices.Contains(standIns, node.Name) {
			continue
		}
		name := lab.Namespace(node.Name)
		ns, err := createNamespace(lab.Name, name)
		if ns.IsOpen() { // made by this run, so this run removes it
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
			b := wireOf(lab, topologies.Endpoint{Node: node.Name, Port: iface.Name}).bucket(iface.MTU) // setupHost gives it to tc
			loop.setBucket(port, &b)
		}
		err = setupHost(lab, node, ns)
		ns.Close()
		if err != nil {
			return nil, err
		}
		if err := writeHosts(names, name); err != nil && !slices.Contains(k.Notes, err.Error()) {
			k.Notes = append(k.Notes, err.Error()) // once: a rootless lab's every host fails alike
		}
	}
	if k.Loop.VethRTT, err = probeVeth(lab.Name); err != nil {
		return nil, err
	}
	if k.server, err = control.Listen(k, SocketPath(lab.Name)); err != nil {
		return nil, err
	}
	if err := markHolder(lab.Name); err != nil {
		return nil, err
	}
	return k, nil
}

// Run drives the lab until ctx is cancelled, collecting garbage only
// once per Headroom of it meanwhile (collectPast).
func (k *Lab) Run(ctx context.Context) error {
	defer collectPast(Headroom, os.Getenv)()
	go k.server.Serve(ctx)
	return k.Loop.Run(ctx)
}

// Close removes everything Up made: TAPs, namespaces and the processes in
// them, the control socket and the congestion controls it allowed, then
// releases the lab's lock. It is safe to call more than once.
func (k *Lab) Close() error {
	var errs []error
	if k.server != nil {
		errs = append(errs, k.server.Close())
		k.server = nil
	}
	if k.Loop != nil {
		errs = append(errs, k.Loop.Close())
		k.Loop = nil
	}
	k.closeHostReaders()
	_, err := Remove(k.namespaces)
	k.namespaces = nil
	errs = append(errs, err)
	if k.lock != nil {
		errs = append(errs, hostCC.restore(k.Lab.Name))
		unmarkHolder(k.Lab.Name)
		k.lock.release()
		k.lock = nil
	}
	return errors.Join(errs...)
}

// Namespaces returns the namespaces this lab created.
func (k *Lab) Namespaces() []string { return k.namespaces }

// Down removes whatever a stopped or killed run of the lab named name left
// behind: its marked namespaces (and processes in them), its control socket
// and the congestion controls it allowed. It returns the namespaces it
// removed. A lab that is running (its lock is held) is an error, and
// nothing is touched. For a normal user it stops the lab's holder instead,
// and whatever the user started in it (rootless.go).
func Down(name string) ([]string, error) {
	if err := labfile.CheckLabName(name); err != nil {
		return nil, err
	}
	if NeedsHolder() {
		removed, err := downRootless(name)
		// The lock file of a holder killed with -9: its lock frees once the
		// signalled holder has exited, which may be a moment after
		// downRootless returns. Without one there is nothing to wait for
		// (and the state directory is not made here).
		AwaitStopped(name, 2500*time.Millisecond)
		return removed, err
	}
	lock, err := tryLock(LockPath(name))
	if err != nil {
		return nil, lockedLab(name, err, "nothing was removed")
	}
	defer lock.release()
	return down(name)
}

// down is Down with the lab's lock held.
func down(name string) ([]string, error) {
	owned, err := Owned(name)
	if err != nil {
		return nil, err
	}
	removed, err := Remove(owned)
	os.Remove(SocketPath(name))
	os.Remove(webPath(RunDir, name))
	return removed, errors.Join(err, hostCC.restore(name))
}

// AwaitStopped waits up to d for a run of the lab named name to let go of
// its lock, and reports whether it did (or there is none). A process
// killed with -9 leaves its namespaces before the kernel has closed its
// files, the lock's among them, and closing its TAPs takes a while: a
// down right after such a kill would find the lab still up.
func AwaitStopped(name string, d time.Duration) bool {
	for deadline := time.Now().Add(d); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Lstat(LockPath(name)); err != nil {
			return true
		}
		if l, err := tryLock(LockPath(name)); err == nil {
			l.release()
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
	}
}

// lockedLab explains a failure to take a lab's lock.
func lockedLab(name string, err error, outcome string) error {
	var le *LockedError
	if !errors.As(err, &le) {
		return err
	}
	if le.PID == 0 {
		return fmt.Errorf("lab %s is up or starting in another process (it holds %s): stop it with Ctrl-C first; %s", name, le.Path, outcome)
	}
	return fmt.Errorf("lab %s is up or starting in pid %d: stop it with Ctrl-C or kill -INT %d first; %s", name, le.PID, le.PID, outcome)
}
