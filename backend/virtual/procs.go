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
	conns []*remote.Conn
}

// BuildProcs builds part me's process of a split lab, joined to the other
// parts' processes by conns (remote.New's), with seed in place of the lab's.
func BuildProcs(lab *topologies.Lab, plan *split.Plan, seed uint64, me int, conns []*remote.Conn) (*Procs, error) {
	seeded := *lab
	seeded.Seed = seed
	pr := &Procs{Plan: plan, Hosts: map[string]*vhost.Host{}, index: map[string]int{}, conns: conns}
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

// Close destroys every part's stacks and closes the connections.
func (pr *Procs) Close() {
	for _, l := range pr.Parts {
		l.Close()
	}
	for _, c := range pr.conns {
		if c != nil {
			c.Close()
		}
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

// startParts starts a point's other parts' processes and returns what
// connects them, filling conns by part (0 stays nil) and telling each its
// part, and what waits for them to end (or kills them).
func startParts(self string, lab *topologies.Lab, plan *split.Plan, p labrun.Point, conns []*remote.Conn) (func() error, func(kill bool) error, error) {
	d, err := digest(p.Variant, lab)
	if err != nil {
		return nil, nil, err
	}
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
			b, _ := json.Marshal(hello{Point: p, Lab: d, Part: i})
			if err := conns[i].Write(remote.KindJSON, b); err != nil {
				return err
			}
		}
		return nil
	}
	return connect, stop, nil
}

// buildProcs builds a point's lab for this process of the point run as
// processes: the run's starts the others first.
func buildProcs(lab *topologies.Lab, plan *split.Plan, seed uint64, p labrun.Point, pr *procsRun) (*pointLab, error) {
	pl := &pointLab{}
	if pr == nil {
		self, err := os.Executable()
		if err != nil {
			return nil, err
		}
		pr = &procsRun{self: self}
	}
	var connect func() error
	if pr.conns == nil { // the run's: the others start while it builds its lab
		conns := make([]*remote.Conn, len(plan.Parts))
		var err error
		if connect, pl.stop, err = startParts(pr.self, lab, plan, p, conns); err != nil {
			return nil, err
		}
		pr = &procsRun{conns: conns}
	}
	procs, err := BuildProcs(lab, plan, seed, pr.part, pr.conns)
	if err == nil && connect != nil {
		if err = connect(); err != nil {
			procs.Close()
		}
	}
	if err != nil {
		if pl.stop != nil {
			pl.stop(true)
		}
		return nil, err
	}
	pl.procs, pl.hosts = procs, procs.Hosts
	return pl, nil
}

// InPart says whether this process is a part's process of a point.
func InPart() bool { return os.Getenv(PartEnv) != "" }

// ServePart is a part's process: it connects to the run at PartEnv's
// address, is told its point and part, measures its part of the point
// beside the other parts' processes, and sends its figures back. file is
// the lab file as loaded; its variants are planned as the run planned
// them (with or without --quick: the one whose lab has the run's digest).
func ServePart(ctx context.Context, file *topologies.Lab) error {
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(1)
	}
	if os.Getenv("GOGC") == "" && os.Getenv("GOMEMLIMIT") == "" {
		debug.SetGCPercent(GCPercent)
		debug.SetMemoryLimit(MemoryLimit)
	}
	return servePart(ctx, os.Getenv(PartEnv), func(variant string, d [sha256.Size]byte) (*topologies.Lab, error) {
		for _, quick := range []bool{false, true} {
			vs, err := labrun.Plan(file, quick)
			if err != nil {
				return nil, err
			}
			for _, v := range vs {
				if dv, err := digest(v.Name, v.Lab); err == nil && v.Name == variant && dv == d {
					return v.Lab, nil
				}
			}
		}
		return nil, fmt.Errorf("%s: no variant %q planned as the run planned it: did the lab file change since the run began?", file.File, variant)
	})
}

// servePart serves one point at addr, its lab found by find.
func servePart(ctx context.Context, addr string, find func(variant string, d [sha256.Size]byte) (*topologies.Lab, error)) error {
	c, err := remote.Dial(addr, PartTimeout)
	if err != nil {
		return fmt.Errorf("a part's process: connecting to the run at %s: %w", addr, err)
	}
	conn := remote.NewConn(c, "the run's", PartTimeout)
	defer conn.Close()
	kind, body, err := conn.Read()
	if err != nil {
		return err
	}
	var h hello
	if err := json.Unmarshal(body, &h); kind != remote.KindJSON || err != nil {
		return fmt.Errorf("a part's process: the run at %s sent no point: %v", addr, err)
	}
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
	conns := make([]*remote.Conn, 1)
	conns[0] = conn
	_, _, err = measurePoint(ctx, lab, h.Point, ex, Processes, &procsRun{part: h.Part, conns: conns})
	if err != nil {
		var f *remote.Fault
		if errors.As(err, &f) {
			return err
		}
	}
	return nil
}

// procsRun is how this process takes part in a point run as processes:
// the run's (part 0, which starts the others from self) or a part's.
type procsRun struct {
	self  string
	part  int
	conns []*remote.Conn
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
