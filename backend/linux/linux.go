//go:build linux && !atmlab_stub

// Package linux is the real-time backend: a lab in the kernel's network
// namespaces, its hosts' TAPs fed by the emulator's real-time loop
// (package kernel), measured by tools run in the hosts through atmlab
// exec.
package linux

import (
	"context"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/atmlab/atmlab/backend"
	"github.com/atmlab/atmlab/emulator/hist"
	"github.com/atmlab/atmlab/harness/clock"
	"github.com/atmlab/atmlab/harness/labrun"
	"github.com/atmlab/atmlab/kernel"
	"github.com/atmlab/atmlab/netstat"
	"github.com/atmlab/atmlab/topologies"
)

// Backend brings labs up in the kernel, in real time.
type Backend struct{}

func (Backend) Clock() clock.Clock { return clock.Real }

// Up builds the lab in the kernel and starts its real-time loop; Close
// stops the loop and tears the lab down.
func (Backend) Up(_ context.Context, lab *topologies.Lab, o backend.Options) (backend.Env, error) {
	k, err := kernel.Up(lab)
	if err != nil {
		return nil, err
	}
	loopCtx, stop := context.WithCancel(context.Background())
	e := &Env{k: k, stop: stop}
	e.HostsEnv = &labrun.HostsEnv{Hosts: e, Lab: lab, Self: o.Self}
	e.wg.Add(1)
	go func() { defer e.wg.Done(); k.Run(loopCtx) }()
	return e, nil
}

// Env is a lab up in the kernel: its hosts run commands through atmlab
// exec, its emulator reports its health; the runner measures it as a
// labrun.HostsEnv of those hosts.
type Env struct {
	*labrun.HostsEnv
	k    *kernel.Lab
	stop context.CancelFunc
	wg   sync.WaitGroup
}

var (
	_ labrun.Hosts = (*Env)(nil)
	_ backend.Env  = (*Env)(nil)
)

// Kernel is the lab in the kernel (the live view shows it).
func (e *Env) Kernel() *kernel.Lab { return e.k }

// Close stops the loop, then tears the lab down (which releases the loop).
func (e *Env) Close() error {
	e.stop()
	e.wg.Wait()
	return e.k.Close()
}

// VethPair makes a bare veth pair beside the lab, its ends run through ip
// netns exec (labrun.VethPairer): what the hosts' kernels carry with no
// emulator between them.
func (e *Env) VethPair() (func(int, ...string) *exec.Cmd, string, func() error, error) {
	names, to, remove, err := kernel.VethPair(e.k.Lab.Name)
	if err != nil {
		return nil, "", nil, err
	}
	run := func(end int, args ...string) *exec.Cmd {
		return exec.Command("ip", append([]string{"netns", "exec", names[end]}, args...)...)
	}
	return run, to, remove, nil
}

// VethRTT is the plain veth pair's ping when the lab came up.
func (e *Env) VethRTT() time.Duration { return e.k.Loop.VethRTT }

// Steal reads this machine's steal time.
func (e *Env) Steal() (time.Duration, error) { return netstat.Steal() }

func (e *Env) Command(node string, args ...string) *exec.Cmd {
	return exec.Command(e.Self, append([]string{"exec", e.k.Lab.Name, node, "--"}, args...)...)
}

// Changes lists the lab's run-time changes so far.
func (e *Env) Changes(ctx context.Context) []string {
	var out []string
	for _, c := range e.k.Changes(ctx) {
		out = append(out, c.String())
	}
	return out
}

func (e *Env) Emulator(ctx context.Context) (labrun.Health, error) {
	st, err := e.k.Stats(ctx)
	if err != nil {
		return labrun.Health{}, err
	}
	// The loop's whole lateness record, copied on its goroutine: a point's
	// lateness is the difference of two (Stats has only a digest).
	late, spacing := new(hist.Histogram), new(hist.Histogram)
	if err := e.k.Loop.Query(ctx, func() { *late, *spacing = e.k.Loop.Lateness, e.k.Loop.ReleaseSpacing() }); err != nil {
		return labrun.Health{}, err
	}
	sent := map[string]uint64{}
	for _, p := range st.Ports {
		if _, ok := e.k.Net.Hosts[p.Port]; ok {
			node, _, _ := strings.Cut(p.Port, ":")
			sent[node] += p.TxBytes
		}
	}
	h := labrun.Health{CPU: st.Loop.CPUTime, HostDrops: st.HostDrops(), LateHeld: st.Loop.LateHeld, LateDropped: st.Loop.LateDropped, Hosts: st.HostKernel(), Lateness: late, Spacing: spacing, Sent: sent}
	h.Uptime, h.Stalls, h.StallCount, h.GCCycles, h.Allocated = st.Loop.Uptime, st.Loop.Stalls, st.Loop.StallCount, st.Loop.GCCycles, st.Loop.Allocated
	h.QdiscDrops, h.QdiscRequeues = st.QdiscDrops()
	h.LabCPU = kernel.OwnCPU() + e.k.HostsCPU()
	h.Busy, _ = netstat.Busy() // 0 when unknown: no other load is recorded
	return h, nil
}
