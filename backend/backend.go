// Package backend is the runtime seam: a Backend brings a lab up in one
// runtime and hands back the Env that drives the experiment runner
// (labrun) over it, handing the runner its measuring as values, so that
// every call goes down. Each runtime is a package of its own beside this one, as
// wireguard-go keeps tun_linux.go beside tun/netstack: backend/linux (the
// kernel's namespaces, TAPs and the real-time loop; package kernel) and
// backend/virtual (netstack hosts in model time). backend/registry lists
// them; a lab run chooses one by its clock there, never in cmd.
package backend

import (
	"context"

	"github.com/atmlab/atmlab/harness/clock"
	"github.com/atmlab/atmlab/harness/labrun"
	"github.com/atmlab/atmlab/topologies"
)

// Backend brings labs up in one runtime.
type Backend interface {
	// Clock is the clock its labs' points are measured by.
	Clock() clock.Clock
	// Up brings a lab up (or readies it: a virtual lab is built afresh
	// for each point) and returns what runs the runner over it. The
	// caller closes it.
	Up(ctx context.Context, lab *topologies.Lab, o Options) (Env, error)
}

// Env is a lab a Backend brought up: what measures a run's points on it
// and what tears it down.
type Env interface {
	// Run measures r's points on the lab: it sets r.Env (its clock and
	// its measuring, as labrun.Env's values), readies what stays up for
	// the whole run, and runs r.
	Run(ctx context.Context, r *labrun.Runner) ([]labrun.Record, error)
	Close() error
}

// Options are what a lab run tells a backend beside the lab.
type Options struct {
	// Variant is the lab's variant's name ("base": the lab as written).
	Variant string
	// Self is the atmlab binary, run inside a real-time lab's hosts.
	Self string
	// Out is the results folder, where a backend records its setup beside
	// the results ("" for none).
	Out string
	// Split is how a lab with parts: runs in virtual time: "" each part on
	// a core of its own where a point allows, "whole" on one scheduler.
	Split string
}
