package virtual

import (
	"fmt"
	"time"

	"github.com/atmlab/atmlab/devices"
	"github.com/atmlab/atmlab/emulator/sched"
	"github.com/atmlab/atmlab/emulator/sched/parallel"
	"github.com/atmlab/atmlab/emulator/vhost"
	"github.com/atmlab/atmlab/harness/labrun"
	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/split"
	"github.com/atmlab/atmlab/topologies/study"
)

// Split is a split lab built for virtual time in one process: each part's
// models and hosts on a scheduler of its own, each part on a goroutine of
// its own, running as far ahead as the others' safe times and the
// lookahead allow (package emulator/sched/parallel), what crosses a cut
// handed to the far part before it runs anything that late. Its results
// are those of the lab built whole (Build).
type Split struct {
	Plan  *split.Plan
	Group *parallel.Group
	Net   *devices.Network
	Parts []*vhost.Lab // in the plan's order
	Hosts map[string]*vhost.Host
	index map[string]int // part name -> index
}

// BuildSplit builds a lab with parts: as Split, with seed in place of the
// lab's.
func BuildSplit(lab *topologies.Lab, plan *split.Plan, seed uint64) (*Split, error) {
	seeded := *lab
	seeded.Seed = seed
	sp := &Split{Plan: plan, Hosts: map[string]*vhost.Host{}, index: map[string]int{}}
	scheds := make([]*sched.Scheduler, len(plan.Parts))
	for i, p := range plan.Parts {
		scheds[i] = sched.New()
		sp.index[p.Name] = i
	}
	sp.Group = parallel.New(scheds, plan.Lookahead())
	sp.Net = devices.BuildSplit(&seeded, &devices.Split{Plan: plan,
		Sched: func(part string) *sched.Scheduler { return scheds[sp.index[part]] },
		Post: func(src, dst string, at, from time.Duration, origin uint32, f func()) {
			sp.Group.Post(sp.index[src], sp.index[dst], at, from, origin, f)
		}})
	all, err := Specs(&seeded, sp.Net)
	if err != nil {
		return nil, err
	}
	for i, p := range plan.Parts {
		l, err := vhost.New(scheds[i], seed, partSpecs(plan, all, p.Name))
		if err != nil {
			sp.Close()
			return nil, err
		}
		if i > 0 {
			l.SharePorts(sp.Parts[0])
		}
		lead := i
		l.Drive = func(done func() bool, limit time.Duration) { sp.Group.RunLead(lead, done, limit) }
		sp.Parts = append(sp.Parts, l)
		for name, h := range l.Hosts {
			sp.Hosts[name] = h
		}
	}
	return sp, nil
}

// LabOf returns the part's lab that holds host.
func (sp *Split) LabOf(host string) *vhost.Lab {
	return sp.Parts[sp.index[sp.Plan.PartOf(host)]]
}

// Close destroys every part's stacks.
func (sp *Split) Close() {
	for _, l := range sp.Parts {
		l.Close()
	}
}

// Mode is how a point of a lab with parts: runs in virtual time.
type Mode string

// Modes.
const (
	// Auto splits a point's lab into its parts, each on a goroutine of its
	// own, when its test's two ends are in one part and so are its
	// background load's; else it runs whole.
	Auto Mode = ""
	// Whole runs the lab on one scheduler, its cut links as a split run
	// has them (devices.Build): the reference a split run equals.
	Whole Mode = "whole"
	// Processes runs each part of a point that Auto would split in a
	// process of its own, joined over TCP (Procs): the run's process runs
	// the first part and starts the others.
	Processes Mode = "procs"
)

// ParseMode reads lab run's --split.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case Auto, Whole, Processes:
		return m, nil
	}
	return "", fmt.Errorf("--split %q: give whole (one scheduler), procs (each part in a process of its own where a point allows), or leave it out (each part on a core of its own where a point allows)", s)
}

// pointLab is a point's lab, whole or split.
type pointLab struct {
	whole *Lab
	split *Split
	procs *Procs
	hosts map[string]*vhost.Host
	// The run's, of a point run as processes: the set of part processes
	// it took from pool, of its own if ownPool.
	set     *partSet
	pool    *PartProcs
	ownPool bool
}

// buildPoint builds a point's lab: split when mode and the point allow.
func buildPoint(lab *topologies.Lab, seed uint64, mode Mode, p labrun.Point, bg *study.Background, pr *procsRun) (*pointLab, error) {
	plan, err := split.Of(lab)
	if err != nil {
		return nil, err
	}
	within := func(a, b string) bool { return plan.PartOf(a) == plan.PartOf(b) }
	splits := plan != nil && len(plan.Cuts) > 0 && within(p.From, p.To) && (bg == nil || within(bg.From, bg.To))
	if splits && mode == Processes {
		return buildProcs(lab, plan, seed, p, pr)
	}
	if splits && mode == Auto {
		sp, err := BuildSplit(lab, plan, seed)
		if err != nil {
			return nil, err
		}
		return &pointLab{split: sp, hosts: sp.Hosts}, nil
	}
	l, err := Build(lab, seed)
	if err != nil {
		return nil, err
	}
	return &pointLab{whole: l, hosts: l.Hosts}, nil
}

func (l *pointLab) runUntil(t time.Duration) {
	if l.procs != nil {
		l.procs.Group.RunUntil(t)
		return
	}
	if l.split != nil {
		l.split.Group.RunUntil(t)
		return
	}
	l.whole.Sched.RunUntil(t)
}

// now is the model time every part has reached.
func (l *pointLab) now() time.Duration {
	switch {
	case l.procs != nil:
		return l.procs.Group.Now()
	case l.split != nil:
		return l.split.Group.Now()
	}
	return l.whole.Sched.Now()
}

func (l *pointLab) labOf(host string) *vhost.Lab {
	if l.procs != nil {
		return l.procs.LabOf(host)
	}
	if l.split != nil {
		return l.split.LabOf(host)
	}
	return l.whole.Lab
}

// done hands the point's part processes back, every part's figures
// gathered (the run's process): a pool of the point's own is closed, its
// processes told to end, and waited for.
func (l *pointLab) done() error {
	if l.set == nil {
		return nil
	}
	l.pool.put(l.set)
	l.set = nil
	if l.ownPool {
		return l.pool.Close()
	}
	return nil
}

func (l *pointLab) close() {
	if l.procs != nil {
		l.procs.Close()
		if l.set != nil { // the point failed: its part processes may be anywhere in it
			l.pool.drop(l.set)
		}
		return
	}
	if l.split != nil {
		l.split.Close()
		return
	}
	l.whole.Close()
}

// partSpecs is the specs of the hosts in the plan's part named part.
func partSpecs(plan *split.Plan, all []vhost.Spec, part string) []vhost.Spec {
	var specs []vhost.Spec
	for _, s := range all {
		if plan.PartOf(s.Name) == part {
			specs = append(specs, s)
		}
	}
	return specs
}
