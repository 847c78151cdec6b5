package virtual

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/gob"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/atmlab/atmlab/backend/virtual/remote"
	"github.com/atmlab/atmlab/devices"
	"github.com/atmlab/atmlab/emulator"
	"github.com/atmlab/atmlab/emulator/sched"
	"github.com/atmlab/atmlab/emulator/vhost"
	"github.com/atmlab/atmlab/harness/labrun"
	"github.com/atmlab/atmlab/harness/perf"
	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/split"
	"github.com/atmlab/atmlab/topologies/study"
)

// PartEnv, set to the run's address (remote.Listen's) in its environment, makes
// an `atmlab lab run FILE --clock virtual` one part's process of a point
// run as processes (ServePart) instead of a run.
const PartEnv = "ATMLAB_VIRTUAL_PART"

// PartTimeout is how long a part's process waits for another's window
// (or its start) before it gives up, naming the part.
var PartTimeout = time.Minute

// Procs is a split lab built for one process of a point run as processes:
// every part's models and hosts are built, as in Split, but only this
// process's part runs; the others are run by their own processes, and
// what crosses a cut between them travels as bytes (package
// backend/virtual/remote).
type Procs struct {
	Plan  *split.Plan
	Group *remote.Group
	Net   *devices.Network
	Parts []*vhost.Lab
	Hosts map[string]*vhost.Host
	index map[string]int
}

// BuildProcs builds part me's process of a split lab, joined to the other
// parts' processes by conns (remote.New's), with seed in place of the lab's.
func BuildProcs(lab *topologies.Lab, plan *split.Plan, seed uint64, me int, conns []*remote.Conn) (*Procs, error) {
	seeded := *lab
	seeded.Seed = seed
	pr := &Procs{Plan: plan, Hosts: map[string]*vhost.Host{}, index: map[string]int{}}
	scheds := make([]*sched.Scheduler, len(plan.Parts))
	for i, p := range plan.Parts {
		scheds[i] = sched.New()
		pr.index[p.Name] = i
	}
	pr.Group = remote.New(scheds[me], me, len(plan.Parts), plan.Lookahead(), conns)
	myName := plan.Parts[me].Name
	pr.Group.Deliver = func(origin uint32, at, from time.Duration, data []byte) {
		f, err := DecodeFrame(data)
		if err != nil {
			panic(&remote.Fault{Err: fmt.Errorf("a frame over cut %d: %w", origin, err)})
		}
		dst := pr.Net.Arrival(origin, myName)
		if dst == nil {
			panic(&remote.Fault{Err: fmt.Errorf("a frame over cut %d, which does not arrive in part %s", origin, myName)})
		}
		scheds[me].AtFrom(at, from, origin, func() { dst.Receive(f) })
	}
	pr.Net = devices.BuildSplit(&seeded, &devices.Split{Plan: plan,
		Sched: func(part string) *sched.Scheduler { return scheds[pr.index[part]] },
		Send: func(src, dst string, at, from time.Duration, origin uint32, f *emulator.Frame) {
			if src != myName {
				return // another process runs src
			}
			data, err := AppendFrame(nil, f)
			if err != nil {
				panic(&remote.Fault{Err: err})
			}
			f.Release()
			pr.Group.Post(pr.index[dst], at, from, origin, data)
		}})
	all, err := Specs(&seeded, pr.Net)
	if err != nil {
		return nil, err
	}
	for i, p := range plan.Parts {
		l, err := vhost.New(scheds[i], seed, partSpecs(plan, all, p.Name))
		if err != nil {
			pr.Close()
			return nil, err
		}
		if i > 0 {
			l.SharePorts(pr.Parts[0])
		}
		if i == me {
			l.Drive = func(done func() bool, limit time.Duration) { pr.Group.RunLead(done, limit) }
		}
		pr.Parts = append(pr.Parts, l)
		for name, h := range l.Hosts {
			pr.Hosts[name] = h
		}
	}
	return pr, nil
}

// Runs says whether this process runs node's part.
func (pr *Procs) Runs(node string) bool { return pr.index[pr.Plan.PartOf(node)] == pr.Group.Part }

// LabOf returns the part's lab that holds host.
func (pr *Procs) LabOf(host string) *vhost.Lab { return pr.Parts[pr.index[pr.Plan.PartOf(host)]] }

// Close destroys every part's stacks; the connections stay open (their
// owner's to close: they may serve the next point).
func (pr *Procs) Close() {
	for _, l := range pr.Parts {
		l.Close()
	}
}

// AppendFrame appends what a process needs of a frame crossing a cut to
// b: its ID (8 octets) and birth (8, nanoseconds), then its octets.
// Virtual hosts make no super-frames; one is refused.
func AppendFrame(b []byte, f *emulator.Frame) ([]byte, error) {
	if f.GSO.Segs > 0 {
		return b, fmt.Errorf("frame %d is a super-frame of %d segments, which may not cross to another process", f.ID, f.GSO.Segs)
	}
	b = binary.BigEndian.AppendUint64(b, f.ID)
	b = binary.BigEndian.AppendUint64(b, uint64(f.Born))
	return append(b, f.Data...), nil
}

// DecodeFrame reads AppendFrame's encoding into a frame of its own.
func DecodeFrame(b []byte) (*emulator.Frame, error) {
	if len(b) < 16 {
		return nil, fmt.Errorf("a frame of %d octets, shorter than its 16 of stamps", len(b))
	}
	return &emulator.Frame{ID: binary.BigEndian.Uint64(b), Born: time.Duration(binary.BigEndian.Uint64(b[8:])),
		Data: append([]byte(nil), b[16:]...)}, nil
}

// hello is what the run tells a part's process: the point (its variant
// and experiment by name), the digest of the variant's lab as the run
// planned it, and the part it runs.
type hello struct {
	Point labrun.Point
	Lab   [sha256.Size]byte
	Part  int
}

// figures are what a part's process measured, sent back to the run's at
// the point's end: the test's result if it led, its clock, and the
// background load's sender's bytes if it ran it.
type figures struct {
	Result    perf.Result
	Err       string
	Failed    bool
	Now       time.Duration
	Tx0, Tx1  uint64
	HasResult bool
}

// partsOf is how a point's other parts' processes are started: by
// default this atmlab again, `lab run FILE --clock virtual --split procs`
// with PartEnv set; tests start their own.
var partsOf = func(self string, lab *topologies.Lab, addr string) (*exec.Cmd, error) {
	cmd := exec.Command(self, "lab", "run", lab.File, "--clock", "virtual", "--split", string(Processes))
	cmd.Env = append(os.Environ(), PartEnv+"="+addr)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	return cmd, cmd.Start()
}

// PartProcs are the processes that run the other parts of a run's points
// split as processes. A set of them, a process for each part but the
// first, is started for the first such point and kept: it serves the
// run's points one after the other, each told its point in turn, so a
// point does not wait for processes to start and plan the lab again
// (0.07-0.14 s a point). Points measured at once take a set each. A
// part's process ends when the run hangs up (Close) or its process ends
// (the connection closes with it).
type PartProcs struct {
	self string // this executable
	mu   sync.Mutex
	idle []*partSet
}

// NewPartProcs returns a run's part processes, none started yet: each
// will be self again.
func NewPartProcs(self string) *PartProcs { return &PartProcs{self: self} }

// partSet is one set of part processes and the connections to them.
type partSet struct {
	conns   []*remote.Conn        // by part, 0 nil
	connect func() error          // accepts their connections; nil once they have
	stop    func(kill bool) error // waits for them to end (or kills them)
}

// take returns an idle set for plan's parts, or starts one (fresh).
func (pp *PartProcs) take(lab *topologies.Lab, plan *split.Plan) (s *partSet, fresh bool, err error) {
	pp.mu.Lock()
	for i, s := range pp.idle {
		if len(s.conns) == len(plan.Parts) {
			pp.idle = append(pp.idle[:i], pp.idle[i+1:]...)
			pp.mu.Unlock()
			return s, false, nil
		}
	}
	pp.mu.Unlock()
	s = &partSet{conns: make([]*remote.Conn, len(plan.Parts))}
	if s.connect, s.stop, err = startParts(pp.self, lab, plan, s.conns); err != nil {
		return nil, false, err
	}
	return s, true, nil
}

// put hands back a set whose point ended with every part's figures.
func (pp *PartProcs) put(s *partSet) {
	pp.mu.Lock()
	pp.idle = append(pp.idle, s)
	pp.mu.Unlock()
}

// drop ends a set whose point failed: its processes are killed.
func (pp *PartProcs) drop(s *partSet) {
	s.close()
	s.stop(true)
}

func (s *partSet) close() {
	for _, c := range s.conns {
		if c != nil {
			c.Close()
		}
	}
}

// Close hangs up on every idle set and waits for its processes to end.
func (pp *PartProcs) Close() error {
	pp.mu.Lock()
	idle := pp.idle
	pp.idle = nil
	pp.mu.Unlock()
	var errs []error
	for _, s := range idle {
		s.close()
		errs = append(errs, s.stop(false))
	}
	return errors.Join(errs...)
}

// tell tells each part's process of s its point, p of the lab whose
// digest is d, and its part.
func (s *partSet) tell(p labrun.Point, d [sha256.Size]byte) error {
	for i, c := range s.conns {
		if c == nil {
			continue
		}
		b, _ := json.Marshal(hello{Point: p, Lab: d, Part: i})
		if err := c.Write(remote.KindJSON, b); err != nil {
			return err
		}
	}
	return nil
}

// startParts starts a set of part processes for plan's parts and returns
// what connects them, filling conns by part (0 stays nil), and what waits
// for them to end (or kills them).
func startParts(self string, lab *topologies.Lab, plan *split.Plan, conns []*remote.Conn) (func() error, func(kill bool) error, error) {
	ln, addr, cleanup, err := remote.Listen()
	if err != nil {
		return nil, nil, err
	}
	type child struct {
		cmd  *exec.Cmd
		done chan struct{} // closed when it has ended, err its Wait's
		err  error
	}
	var children []*child
	exited := make(chan *child, len(plan.Parts))
	stop := func(kill bool) error {
		cleanup()
		var errs []error
		for _, c := range children {
			if kill {
				c.cmd.Process.Kill()
			}
			<-c.done
			if c.err != nil && !kill {
				errs = append(errs, fmt.Errorf("a part's process: %w", c.err))
			}
		}
		return errors.Join(errs...)
	}
	for range plan.Parts[1:] {
		cmd, err := partsOf(self, lab, addr)
		if err != nil {
			stop(true)
			return nil, nil, fmt.Errorf("starting a part's process: %w", err)
		}
		c := &child{cmd: cmd, done: make(chan struct{})}
		children = append(children, c)
		go func() {
			c.err = cmd.Wait()
			close(c.done)
			exited <- c
		}()
	}
	connect := func() error {
		defer cleanup()
		if d, ok := ln.(interface{ SetDeadline(time.Time) error }); ok {
			d.SetDeadline(time.Now().Add(PartTimeout))
		}
		type accepted struct {
			c   net.Conn
			err error
		}
		for i := 1; i < len(conns); i++ {
			got := make(chan accepted, 1)
			go func() {
				c, err := ln.Accept()
				got <- accepted{c, err}
			}()
			var a accepted
			select {
			case a = <-got:
			case c := <-exited: // ended before it connected: it said why on stderr
				a.err = fmt.Errorf("part %s's process ended before it connected: %v", plan.Parts[i].Name, c.err)
			}
			if a.err != nil { // buildProcs stops the others
				if a.c == nil && !strings.HasPrefix(a.err.Error(), "part ") {
					a.err = fmt.Errorf("part %s's process did not connect within %v: %w", plan.Parts[i].Name, PartTimeout, a.err)
				}
				return a.err
			}
			conns[i] = remote.NewConn(a.c, plan.Parts[i].Name, PartTimeout)
			sh, err := remote.Share(a.c, len(plan.Parts))
			if err != nil {
				return fmt.Errorf("part %s's process: %w", plan.Parts[i].Name, err)
			}
			conns[i].Use(sh)
		}
		return nil
	}
	return connect, stop, nil
}

// buildProcs builds a point's lab for this process of the point run as
// processes. The run's takes a set of part processes from pr's pool (a
// pool of its own, for this point alone, if pr is nil) and tells them
// the point:
// a set started before builds its lab while this process builds its own,
// a set just started while it plans the lab.
func buildProcs(lab *topologies.Lab, plan *split.Plan, seed uint64, p labrun.Point, pr *procsRun) (*pointLab, error) {
	if pr != nil && pr.conns != nil { // a part's process
		procs, err := BuildProcs(lab, plan, seed, pr.part, pr.conns)
		if err != nil {
			return nil, err
		}
		return &pointLab{procs: procs, hosts: procs.Hosts}, nil
	}
	pl := &pointLab{}
	if pr != nil {
		pl.pool = pr.pool
	} else {
		self, err := os.Executable()
		if err != nil {
			return nil, err
		}
		pl.pool, pl.ownPool = NewPartProcs(self), true
	}
	d, err := digest(p.Variant, lab)
	if err != nil {
		return nil, err
	}
	set, fresh, err := pl.pool.take(lab, plan)
	if err == nil && !fresh {
		if err = set.tell(p, d); err != nil { // it ended while idle: a new set
			pl.pool.drop(set)
			set, fresh, err = pl.pool.take(lab, plan)
		}
	}
	if err != nil {
		return nil, err
	}
	procs, err := BuildProcs(lab, plan, seed, 0, set.conns)
	if err == nil && fresh {
		if err = set.connect(); err == nil {
			procs.Group.Connected()
			err = set.tell(p, d)
		}
		if err != nil {
			procs.Close()
		}
	}
	if err != nil {
		pl.pool.drop(set)
		return nil, err
	}
	pl.procs, pl.hosts, pl.set = procs, procs.Hosts, set
	return pl, nil
}

// InPart says whether this process is a part's process of a point.
func InPart() bool { return os.Getenv(PartEnv) != "" }

// ServePart is a part's process: it connects to the run at PartEnv's
// address and, for each point it is told in turn (its part and the
// point), measures its part of the point beside the other parts'
// processes and sends its figures back, until the run hangs up. file is
// the lab file as loaded; its variants are planned as the run planned
// them (with or without --quick: the one whose lab has the run's digest),
// once for all the points.
func ServePart(ctx context.Context, file *topologies.Lab) error {
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(1)
	}
	if os.Getenv("GOGC") == "" && os.Getenv("GOMEMLIMIT") == "" {
		debug.SetGCPercent(GCPercent)
		debug.SetMemoryLimit(MemoryLimit)
	}
	type planned struct {
		name string
		d    [sha256.Size]byte
	}
	labs := map[planned]*topologies.Lab{}
	return servePart(ctx, os.Getenv(PartEnv), func(variant string, d [sha256.Size]byte) (*topologies.Lab, error) {
		if l := labs[planned{variant, d}]; l != nil {
			return l, nil
		}
		for _, quick := range []bool{false, true} {
			vs, err := labrun.Plan(file, quick)
			if err != nil {
				return nil, err
			}
			for _, v := range vs {
				if dv, err := digest(v.Name, v.Lab); err == nil && v.Name == variant && dv == d {
					labs[planned{variant, d}] = v.Lab
					return v.Lab, nil
				}
			}
		}
		return nil, fmt.Errorf("%s: no variant %q planned as the run planned it: did the lab file change since the run began?", file.File, variant)
	})
}

// servePart serves the run at addr its points, one after the other, each
// one's lab found by find, until the run hangs up.
func servePart(ctx context.Context, addr string, find func(variant string, d [sha256.Size]byte) (*topologies.Lab, error)) error {
	c, err := remote.Dial(addr, PartTimeout)
	if err != nil {
		return fmt.Errorf("a part's process: connecting to the run at %s: %w", addr, err)
	}
	c.SetReadDeadline(time.Now().Add(PartTimeout))
	sh, err := remote.TakeShared(c)
	if err != nil {
		c.Close()
		return fmt.Errorf("a part's process: the run at %s: %w", addr, err)
	}
	conn := remote.NewConn(c, "the run's", PartTimeout)
	conn.Use(sh)
	defer conn.Close()
	for {
		kind, body, ok, err := conn.Idle()
		if err != nil || !ok {
			return err
		}
		var h hello
		if err := json.Unmarshal(body, &h); kind != remote.KindJSON || err != nil {
			return fmt.Errorf("a part's process: the run at %s sent no point: %v", addr, err)
		}
		if err := serveOne(ctx, conn, h, find); err != nil {
			return err
		}
	}
}

// serveOne measures this part of the point h tells, beside the run's.
func serveOne(ctx context.Context, conn *remote.Conn, h hello, find func(variant string, d [sha256.Size]byte) (*topologies.Lab, error)) error {
	fail := func(err error) error {
		conn.Write(remote.KindFail, []byte(err.Error()))
		return err
	}
	lab, err := find(h.Point.Variant, h.Lab)
	if err != nil {
		return fail(err)
	}
	ex := experiment(lab, h.Point.Experiment)
	if ex == nil {
		return fail(fmt.Errorf("%s has no experiment %q", lab.File, h.Point.Experiment))
	}
	plan, err := split.Of(lab)
	if err != nil || plan == nil || h.Part < 1 || h.Part >= len(plan.Parts) {
		return fail(fmt.Errorf("%s: no part %d to run", lab.File, h.Part))
	}
	conn.Name = plan.Parts[0].Name
	pr := &procsRun{part: h.Part, conns: []*remote.Conn{conn}}
	_, _, err = measurePoint(ctx, lab, h.Point, ex, Processes, pr)
	var f *remote.Fault
	switch {
	case errors.As(err, &f):
		return err
	case err != nil && !pr.gathered: // it left the point before its figures
		return fail(err)
	}
	return nil // the point's own error (its test's) is in the figures
}

// procsRun is how this process takes part in a point run as processes:
// the run's (part 0, the others' processes from pool) or a part's (its
// part, its connection to the run's).
type procsRun struct {
	pool     *PartProcs
	part     int
	conns    []*remote.Conn
	gathered bool // a part's: its figures went to the run's
}

// gather ends a point run as processes: every process's figures to the
// run's, which returns the lead's result and error and the background
// load's figures; the others return their own.
func (pl *pointLab) gather(lead, bgPart int, f figures) (figures, error) {
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(f); err != nil {
		return f, err
	}
	all, err := pl.procs.Group.Gather(buf.Bytes())
	if err != nil || all == nil {
		return f, err
	}
	got := make([]figures, len(all))
	for i, b := range all {
		if err := gob.NewDecoder(bytes.NewReader(b)).Decode(&got[i]); err != nil {
			return f, fmt.Errorf("part %s's figures: %w", pl.procs.Plan.Parts[i].Name, err)
		}
	}
	out := got[lead]
	if bgPart >= 0 {
		out.Tx0, out.Tx1 = got[bgPart].Tx0, got[bgPart].Tx1
	}
	return out, nil
}

// experiment returns lab's experiment called name, nil if none.
func experiment(lab *topologies.Lab, name string) *study.Experiment {
	for _, e := range lab.Experiments {
		if e.Name == name {
			return e
		}
	}
	return nil
}
