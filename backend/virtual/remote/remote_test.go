package remote

import (
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/atmlab/atmlab/emulator/sched"
)

// pair returns two parts' groups joined by a loopback TCP connection.
func pair(t testing.TB, lookahead time.Duration) (*Group, *Group) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return join(t, ln, ln.Addr().String(), lookahead)
}

// unixPair returns two parts' groups joined as Listen and Dial join a
// run's process and a part's on one machine: by a Unix socket.
func unixPair(t testing.TB, lookahead time.Duration) (*Group, *Group) {
	ln, addr, cleanup, err := Listen()
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	if !strings.HasPrefix(addr, "unix:") {
		t.Fatalf("listening at %s, want a Unix socket", addr)
	}
	return join(t, ln, addr, lookahead)
}

// join dials addr, where ln listens, and returns the two ends' groups.
func join(t testing.TB, ln net.Listener, addr string, lookahead time.Duration) (*Group, *Group) {
	c0, c1 := dialPair(t, ln, addr)
	g0 := New(sched.New(), 0, 2, lookahead, []*Conn{nil, NewConn(c0, "b", 5*time.Second)})
	g1 := New(sched.New(), 1, 2, lookahead, []*Conn{NewConn(c1, "a", 5*time.Second)})
	t.Cleanup(func() { c0.Close(); c1.Close() })
	return g0, g1
}

// dialPair dials addr, where ln listens: the listener's end, then the
// dialler's.
func dialPair(t testing.TB, ln net.Listener, addr string) (net.Conn, net.Conn) {
	c1, err := Dial(addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	c0, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	return c0, c1
}

// sharedPair returns two parts' groups joined as a run's process and a
// part's on one machine are: by a Unix socket, and memory shared over it
// (Share, TakeShared).
func sharedPair(t testing.TB, lookahead time.Duration) (*Group, *Group) {
	ln, addr, cleanup, err := Listen()
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	c0, c1 := dialPair(t, ln, addr)
	sh0, err := Share(c0, 2)
	if err != nil {
		t.Fatal(err)
	}
	sh1, err := TakeShared(c1)
	if err != nil || sh0 == nil || sh1 == nil {
		t.Fatalf("shared memory: %v, %v (%v)", sh0, sh1, err)
	}
	n0, n1 := NewConn(c0, "b", 5*time.Second), NewConn(c1, "a", 5*time.Second)
	n0.Use(sh0)
	n1.Use(sh1)
	g0 := New(sched.New(), 0, 2, lookahead, []*Conn{nil, n0})
	g1 := New(sched.New(), 1, 2, lookahead, []*Conn{n1})
	t.Cleanup(func() { n0.Close(); n1.Close() })
	return g0, g1
}

// both runs f on each group at once and returns their faults.
func both(g0, g1 *Group, f func(g *Group)) []error {
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i, g := range []*Group{g0, g1} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if r := recover(); r != nil {
					errs[i] = fmt.Errorf("%v", r)
				}
			}()
			f(g)
		}()
	}
	wg.Wait()
	return errs
}

// Two parts in windows of 10 ns hand each other events across the
// window's edge (a chain of pings, each sent a lookahead ahead) and
// every one runs at its time, in the order sent; a lead's test ends at the
// event that makes it done, the other part caught up to that instant.
func TestGroupsHandEventsOnOverTCP(t *testing.T) { handEventsOn(t, pair) }

// The same over a Unix socket, as a run's process and its parts' join.
func TestGroupsHandEventsOnOverUnixSocket(t *testing.T) { handEventsOn(t, unixPair) }

// The same with the safe times in shared memory, the posts over the socket.
func TestGroupsHandEventsOnInSharedMemory(t *testing.T) { handEventsOn(t, sharedPair) }

func handEventsOn(t *testing.T, join func(testing.TB, time.Duration) (*Group, *Group)) {
	g0, g1 := join(t, 10)
	var logs [2][]string
	for i, g := range []*Group{g0, g1} {
		g.Deliver = func(origin uint32, at, from time.Duration, data []byte) {
			msg := string(data)
			g.Sched.AtFrom(at, from, origin, func() {
				logs[i] = append(logs[i], fmt.Sprintf("%v %s", g.Sched.Now(), msg))
				if n := len(msg); n < 6 {
					g.Post(1-i, g.Sched.Now()+10, g.Sched.Now(), 1, []byte(msg+"x"))
				}
			})
		}
	}
	g0.Sched.At(3, func() { g0.Post(1, 13, 3, 1, []byte("x")) })
	errs := both(g0, g1, func(g *Group) { g.RunUntil(100) })
	if errs[0] != nil || errs[1] != nil {
		t.Fatal(errs)
	}
	want0, want1 := "23ns xx|43ns xxxx|63ns xxxxxx", "13ns x|33ns xxx|53ns xxxxx"
	if got := strings.Join(logs[0], "|"); got != want0 {
		t.Errorf("part 0 ran %s, want %s", got, want0)
	}
	if got := strings.Join(logs[1], "|"); got != want1 {
		t.Errorf("part 1 ran %s, want %s", got, want1)
	}
	// A lead done at 150 ns: the other part, busy every nanosecond, says
	// its ticks as they stood there, less than a lookahead on at most.
	ticks := 0
	var tick func()
	tick = func() { ticks++; g1.Sched.After(1, tick) }
	g1.Sched.At(100, tick)
	g0.Sched.At(150, func() {})
	var at uint64
	errs = both(g0, g1, func(g *Group) {
		if g.Part == 0 {
			g.RunLead(func() bool { return g.Sched.Now() >= 150 }, 1000)
			g.End()
			return
		}
		at = g.Follow(0, func() uint64 { return uint64(ticks) })
	})
	if errs[0] != nil || errs[1] != nil {
		t.Fatal(errs)
	}
	if now := g1.Sched.Now(); at != 50 || now < 150 || now > 160 {
		t.Errorf("the follower said %d ticks at the lead's stop, its clock at %v; want 50, and 150-160ns", at, now)
	}
}

// BenchmarkWindowExchange is one window's exchange between two parts'
// groups, with nothing to run: what a process per part pays a window
// beyond the window's work, over loopback TCP and over a Unix socket.
func BenchmarkWindowExchange(b *testing.B) {
	for _, c := range []struct {
		name string
		join func(testing.TB, time.Duration) (*Group, *Group)
	}{{"tcp", pair}, {"unix", unixPair}, {"shared", sharedPair}} {
		b.Run(c.name, func(b *testing.B) {
			g0, g1 := c.join(b, time.Nanosecond)
			for _, g := range []*Group{g0, g1} {
				g.Deliver = func(uint32, time.Duration, time.Duration, []byte) {}
			}
			b.ResetTimer()
			errs := both(g0, g1, func(g *Group) { g.RunUntil(time.Duration(b.N)) })
			if errs[0] != nil || errs[1] != nil {
				b.Fatal(errs)
			}
		})
	}
}

// A part runs on without waiting for the others while its next event is
// before their safe times plus the lookahead, telling them its own as it
// goes (half the lookahead at a time), and stops there: here the
// far part says nothing, so part 0 runs its events before 10 ns (0 plus
// the lookahead) and not the one at 10, until the far part says it is at
// 30 ns.
func TestPartRunsAheadUpToTheOthersSafeTimePlusTheLookahead(t *testing.T) {
	g0, g1 := unixPair(t, 10)
	g0.Deliver = func(uint32, time.Duration, time.Duration, []byte) {}
	var mu sync.Mutex
	var ran []string
	for _, at := range []time.Duration{5, 9, 10, 15} {
		g0.Sched.At(at, func() { mu.Lock(); ran = append(ran, fmt.Sprint(at)); mu.Unlock() })
	}
	g0.Sched.At(3, func() { g0.Post(1, 13, 3, 7, []byte("early")) })
	errs := make(chan error, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				errs <- fmt.Errorf("%v", r)
			}
		}()
		g0.RunUntil(30)
		errs <- nil
	}()
	c := g1.conns[0]
	accounts := func(until time.Duration) string {
		var got []string
		for {
			kind, body, err := c.Read()
			if err != nil || kind != KindWindow {
				t.Fatalf("read %q, %v: want part 0's account", kind, err)
			}
			w, err := Decode(body)
			if err != nil || len(w.Entries) != 1 || w.Entries[0].Part != 0 {
				t.Fatalf("part 0 sent %+v, %v; want its own account", w, err)
			}
			e := w.Entries[0]
			s := fmt.Sprint(e.Now)
			for _, p := range e.Posts {
				s += fmt.Sprintf("+%s@%v", p.Data, p.At)
			}
			got = append(got, s)
			if e.Now >= until {
				return strings.Join(got, " ")
			}
		}
	}
	if got, want := accounts(10), "5ns+early@13ns 10ns"; got != want {
		t.Errorf("part 0 said %s, want %s", got, want)
	}
	mu.Lock()
	if got := strings.Join(ran, " "); got != "5ns 9ns" {
		t.Errorf("with the far part at 0, part 0 ran its events at %s, want 5ns 9ns", got)
	}
	mu.Unlock()
	g1.write(c, &Window{Entries: []Entry{{Part: 1, Op: OpUntil, Now: 30}}})
	if got, want := accounts(30), "15ns 20ns 25ns 30ns"; got != want {
		t.Errorf("part 0 said %s, want %s", got, want)
	}
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(ran, " "); got != "5ns 9ns 10ns 15ns" {
		t.Errorf("part 0 ran its events at %s, want 5ns 9ns 10ns 15ns", got)
	}
}

// Accounts too large to sit in the connection's buffer, sent both ways at
// once, still cross: a write that waits keeps what arrives meanwhile.
func TestLargeWindowsBothWaysCross(t *testing.T) {
	for _, c := range []struct {
		name string
		join func(testing.TB, time.Duration) (*Group, *Group)
	}{{"tcp", pair}, {"unix", unixPair}, {"shared", sharedPair}} {
		g0, g1 := c.join(t, 10)
		got := [2]int{}
		big := make([]byte, 600<<10)
		for i, g := range []*Group{g0, g1} {
			g.Deliver = func(_ uint32, _, _ time.Duration, data []byte) { got[i] += len(data) }
			g.Sched.At(2, func() {
				for range 4 {
					g.Post(1-i, 12, 2, 1, big)
				}
			})
		}
		errs := both(g0, g1, func(g *Group) { g.RunUntil(20) })
		if errs[0] != nil || errs[1] != nil {
			t.Fatalf("%s: %v", c.name, errs)
		}
		if want := 4 * len(big); got[0] != want || got[1] != want {
			t.Errorf("%s: the parts were handed %v octets, want %d each", c.name, got, want)
		}
	}
}

// Three parts: the first relays what the second sends the third and back,
// each post reaching only its part, at its time.
func TestRelayBetweenTwoOtherParts(t *testing.T) {
	gs := threeParts(t)
	var logs [3][]string
	for i, g := range gs {
		g.Deliver = func(origin uint32, at, from time.Duration, data []byte) {
			msg := string(data)
			g.Sched.AtFrom(at, from, origin, func() {
				logs[i] = append(logs[i], fmt.Sprintf("%v %s", g.Sched.Now(), msg))
				if i == 2 && msg == "ping" {
					g.Post(1, g.Sched.Now()+10, g.Sched.Now(), 2, []byte("pong"))
				}
			})
		}
	}
	gs[1].Sched.At(5, func() { gs[1].Post(2, 15, 5, 1, []byte("ping")) })
	gs[0].Sched.At(7, func() { gs[0].Post(2, 20, 7, 3, []byte("hello")) })
	errs := make([]error, 3)
	var wg sync.WaitGroup
	for i, g := range gs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if r := recover(); r != nil {
					errs[i] = fmt.Errorf("%v", r)
				}
			}()
			g.RunUntil(60)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	for i, want := range []string{"", "25ns pong", "15ns ping|20ns hello"} {
		if got := strings.Join(logs[i], "|"); got != want {
			t.Errorf("part %d ran %q, want %q", i, got, want)
		}
	}
}

// TestRelaySleepsWhileNoPartSends: the relay of three parts, waiting on
// parts that send nothing for a while, sleeps (rather than polling on, a
// core taken from the parts it waits for) and wakes when one sends.
func TestRelaySleepsWhileNoPartSends(t *testing.T) {
	parts := threeParts(t)
	relay := parts[0]
	const silence = 300 * time.Millisecond
	sent := make(chan time.Time, 1)
	go func() {
		time.Sleep(silence)
		sent <- time.Now()
		parts[1].report(OpUntil, 5, true)
	}()
	relay.await(func() bool { return relay.safe[1] >= 5 })
	woke := time.Now()
	if relay.sleeps == 0 {
		t.Errorf("the relay polled through %v of silence without sleeping", silence)
	}
	if late := woke.Sub(<-sent); late > 500*time.Millisecond {
		t.Errorf("the relay woke %v after a part sent", late)
	}
}

// TestFiguresAfterTheLastWindowWaitForGather: a lead whose test is over
// sends its stop, its end and then its figures at once; the follower
// takes the stop and the end in its run and leaves the figures to be read
// after it (CI once failed on "sent a message of kind 'J' inside a run").
func TestFiguresAfterTheLastWindowWaitForGather(t *testing.T) {
	g0, g1 := unixPair(t, 10)
	g1.report(OpCatch, 5, false)
	g1.report(OpEnd, 5, false)
	if err := g1.conns[0].Write(KindJSON, []byte(`{"figure":1}`)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond) // all three arrive before the follower looks
	func() {
		defer func() {
			if r := recover(); r != nil {
				t.Fatalf("the follower failed in its run: %v", r)
			}
		}()
		g0.await(func() bool { return g0.ends > 0 })
	}()
	if g0.catches != 1 || g0.stop != 5 {
		t.Errorf("took %d stops, the last at %v; want 1 at 5ns", g0.catches, g0.stop)
	}
	kind, body, err := g0.conns[1].Read()
	if err != nil || kind != KindJSON || string(body) != `{"figure":1}` {
		t.Errorf("after the run read %q %q %v, want the figures", kind, body, err)
	}
}

// TestLeadEndsOnceItsFollowersCaughtUp: a lead whose test stopped ends
// only once its follower has caught up with the stop, and its process,
// its figures sent, stays Idle until the run's hangs up: the follower may
// still tell its safe time after (CI once failed on a follower writing to
// a lead gone: a broken pipe).
func TestLeadEndsOnceItsFollowersCaughtUp(t *testing.T) {
	for range 20 {
		g0, g1 := unixPair(t, 10)
		g1.Sched.RunUntil(50) // the lead's test stopped at 50 ns
		g1.report(OpCatch, 50, false)
		left := make(chan any, 1)
		go func() {
			defer func() { left <- recover() }()
			g1.End()
			if _, err := g1.Gather([]byte("{}")); err != nil {
				panic(err)
			}
			if _, _, ok, err := g1.conns[0].Idle(); ok || err != nil {
				panic(fmt.Sprintf("the lead, idle, read a message (%v) or failed (%v); want the run's hang-up", ok, err))
			}
			g1.conns[0].c.Close() // its process ends with the run
		}()
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Fatalf("the follower failed: %v", r)
				}
			}()
			g0.Follow(1, nil)
		}()
		all, err := g0.Gather([]byte("{}"))
		if err != nil || len(all) != 2 {
			t.Fatalf("the run gathered %q, %v; want both parts' figures", all, err)
		}
		g0.conns[1].Close()
		if r := <-left; r != nil {
			t.Fatalf("the lead failed: %v", r)
		}
		if now := g0.Sched.Now(); now < 50 || g0.safe[0] < 50 {
			t.Errorf("the follower stopped at %v, safe to %v; want both at least at the lead's stop, 50ns", now, g0.safe[0])
		}
	}
}

// threeParts returns three parts' groups (lookahead 10 ns), the first the
// relay, joined to each other over loopback TCP.
func threeParts(t *testing.T) [3]*Group {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var gs [3]*Group
	hub := []*Conn{nil, nil, nil}
	for i := 1; i < 3; i++ {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		s, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close(); s.Close() })
		hub[i] = NewConn(s, fmt.Sprint(i), 5*time.Second)
		gs[i] = New(sched.New(), i, 3, 10, []*Conn{NewConn(c, "0", 5*time.Second)})
	}
	gs[0] = New(sched.New(), 0, 3, 10, hub)
	return gs
}

// followed is what a Follow returned, or the panic it raised.
type followed struct {
	at  uint64
	err any
}

// followTicking has g follow part 1 while an event ticks every nanosecond
// from from on; Follow's figure is the ticks so far. It returns the ticks
// and where Follow's outcome arrives.
func followTicking(g *Group, from time.Duration) (*int, <-chan followed) {
	g.Deliver = func(uint32, time.Duration, time.Duration, []byte) {}
	ticks := new(int)
	var tick func()
	tick = func() { *ticks++; g.Sched.After(1, tick) }
	g.Sched.At(from, tick)
	done := make(chan followed, 1)
	go func() {
		var f followed
		defer func() { f.err = recover(); done <- f }()
		f.at = g.Follow(1, func() uint64 { return uint64(*ticks) })
	}()
	return ticks, done
}

// readUntilSafe reads the follower's accounts on c until one says it is
// safe to until or later, and fails unless that one says until exactly.
func readUntilSafe(t *testing.T, c *Conn, until time.Duration) {
	t.Helper()
	for {
		kind, body, err := c.Read()
		if err != nil || kind != KindWindow {
			t.Fatalf("read %q, %v: want the follower's account", kind, err)
		}
		w, err := Decode(body)
		if err != nil || len(w.Entries) != 1 {
			t.Fatalf("the follower sent %+v, %v", w, err)
		}
		if now := w.Entries[0].Now; now >= until {
			if now != until {
				t.Fatalf("the follower said it was safe to %v, want %v", now, until)
			}
			return
		}
	}
}

// TestFollowerRunsPastTheLeadAndSaysItsFigureAtTheStop: a part following
// a lead runs up to the lead's safe time plus the lookahead, and when the
// lead stops before where it got, says its figure as it stood before its
// first event at the stop: here the lead says it is safe to 100 ns, the
// follower (ticking every nanosecond from 50 ns) runs to 110 ns, and the
// lead stops at 104 ns: 54 ticks then, 60 run.
func TestFollowerRunsPastTheLeadAndSaysItsFigureAtTheStop(t *testing.T) {
	g0, g1 := unixPair(t, 10)
	ticks, done := followTicking(g0, 50)
	c := g1.conns[0]
	readUntilSafe(t, c, 10) // the lead at 0: a lookahead on
	g1.write(c, &Window{Entries: []Entry{{Part: 1, Op: OpLead, Now: 100, Going: true}}})
	readUntilSafe(t, c, 110)
	g1.write(c, &Window{Entries: []Entry{{Part: 1, Op: OpCatch, Now: 104}, {Part: 1, Op: OpEnd, Now: 104}}})
	f := <-done
	if f.err != nil {
		t.Fatalf("the follower failed: %v", f.err)
	}
	if f.at != 54 || *ticks != 60 || g0.Sched.Now() != 110 {
		t.Errorf("the follower said %d ticks at the stop, ran %d, its clock at %v; want 54, 60, 110ns", f.at, *ticks, g0.Sched.Now())
	}
}

// TestFollowerSaysItsFigureWhereTheLeadEndedWithoutAStop: a lead that
// ends without having run its test (it failed before) stopped nowhere; the
// follower says its figure as it stood where the lead ended: ticking every
// nanosecond from 3 ns, 4 ticks before 7 ns, 7 run (to 10 ns, a lookahead
// past the lead at 0).
func TestFollowerSaysItsFigureWhereTheLeadEndedWithoutAStop(t *testing.T) {
	g0, g1 := unixPair(t, 10)
	ticks, done := followTicking(g0, 3)
	readUntilSafe(t, g1.conns[0], 10) // a lookahead past the lead at 0
	g1.report(OpEnd, 7, false)
	f := <-done
	if f.err != nil {
		t.Fatalf("the follower failed: %v", f.err)
	}
	if f.at != 4 || *ticks != 7 || g0.Sched.Now() != 10 {
		t.Errorf("the follower said %d ticks where the lead ended, ran %d, its clock at %v; want 4, 7, 10ns", f.at, *ticks, g0.Sched.Now())
	}
}

// TestAwaitReadsNothingWhileThePartMayGoOn: a part whose bound already
// lets it go on does not read (a system call saved); what was sent to it
// is taken in at its next wait.
func TestAwaitReadsNothingWhileThePartMayGoOn(t *testing.T) {
	g0, g1 := unixPair(t, 10)
	g1.report(OpUntil, 5, false)
	time.Sleep(20 * time.Millisecond) // it has arrived
	g0.await(func() bool { return true })
	if g0.safe[1] != 0 {
		t.Fatalf("part 1's safe time read as %v by a wait that had no need of it, want 0 (unread)", g0.safe[1])
	}
	g0.await(func() bool { return g0.bound() > 10 })
	if g0.safe[1] != 5 {
		t.Errorf("part 1's safe time read as %v, want 5ns", g0.safe[1])
	}
}

// A part's process idle between points drops the run's accounts of the
// point before and returns its next message, the next point; once the
// run hangs up it says so, with no error.
func TestIdleDropsAccountsUntilTheNextPoint(t *testing.T) {
	g0, g1 := unixPair(t, 10)
	g0.report(OpFollow, 5, false)
	g0.report(OpFollow, 10, false)
	if err := g0.conns[1].Write(KindJSON, []byte(`{"point":2}`)); err != nil {
		t.Fatal(err)
	}
	kind, body, ok, err := g1.conns[0].Idle()
	if !ok || err != nil || kind != KindJSON || string(body) != `{"point":2}` {
		t.Fatalf("idle read %q %q %v %v, want the next point", kind, body, ok, err)
	}
	if g1.conns[0].Timeout != 5*time.Second {
		t.Errorf("after idling the timeout is %v, want 5s again", g1.conns[0].Timeout)
	}
	g0.report(OpFollow, 15, false)
	g0.conns[1].Close()
	if _, _, ok, err := g1.conns[0].Idle(); ok || err != nil {
		t.Errorf("idle after the run hung up: %v, %v; want not ok and no error", ok, err)
	}
}

// Two parts that share memory tell each other their safe times there and
// write nothing to the connection while the other is awake; a part that
// sleeps waiting is sent the account over the connection too, and an
// account with a post is always sent, and read before the safe time
// beside it is believed. At a point's end each clears its safe time, so
// that the next point does not start from it.
func TestSharedSafeTimesAndWhatStillTravelsTheConnection(t *testing.T) {
	g0, g1 := sharedPair(t, 10)
	var got []string
	g0.Deliver = func(origin uint32, at, from time.Duration, data []byte) {
		got = append(got, fmt.Sprintf("%s at %v from %v by %d", data, at, from, origin))
	}
	g1.report(OpUntil, 5, false)
	g1.report(OpUntil, 10, false)
	if g1.pc.wrote != 0 || !g0.pollShared() || g0.safe[1] != 10 {
		t.Fatalf("wrote %d accounts, part 0 read part 1 safe to %v; want none written and 10ns", g1.pc.wrote, g0.safe[1])
	}
	g0.sh.sleeping(0).Store(1)
	g1.report(OpUntil, 15, false)
	if g1.pc.wrote != 1 {
		t.Fatalf("to a sleeping part wrote %d accounts, want 1", g1.pc.wrote)
	}
	kind, body, err := g0.pc.Read()
	if w, derr := Decode(body); err != nil || derr != nil || kind != KindWindow || w.Entries[0].Now != 15 {
		t.Fatalf("the sleeping part read %q %v %v, want the account of 15ns", kind, err, derr)
	}
	g0.sh.sleeping(0).Store(0)
	g1.Post(0, 30, 20, 1, []byte("f"))
	g1.report(OpUntil, 20, false)
	if g1.pc.wrote != 2 || g1.sh.accounts(1).Load() != 2 {
		t.Fatalf("with a post wrote %d accounts, said %d; want 2", g1.pc.wrote, g1.sh.accounts(1).Load())
	}
	if !g0.pollShared() || g0.safe[1] != 20 || strings.Join(got, "|") != "f at 30ns from 20ns by 1" {
		t.Errorf("part 0 took part 1 safe to %v and %q; want 20ns and the post", g0.safe[1], got)
	}
	if _, err := g1.Gather([]byte("{}")); err != nil {
		t.Fatal(err)
	}
	if all, err := g0.Gather([]byte("{}")); err != nil || len(all) != 2 {
		t.Fatalf("gathered %q, %v", all, err)
	}
	if a, b := g0.sh.safe(0).Load(), g1.sh.safe(1).Load(); a != 0 || b != 0 {
		t.Errorf("after the point the safe times read %d and %d, want 0", a, b)
	}
}
