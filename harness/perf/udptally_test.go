package perf

import (
	"encoding/binary"
	"os"
	"testing"
	"time"
)

func TestUDPTally(t *testing.T) {
	var u UDPTally
	// 0, 2, 1 (late), 2 again (a duplicate), 70 (a second word of the bitset).
	for _, d := range []struct {
		seq     uint64
		transit time.Duration
		want    bool
	}{{0, 100, true}, {2, 116, true}, {1, 100, true}, {2, 500, false}, {70, 100, true}} {
		if got := u.Add(d.seq, d.transit); got != d.want {
			t.Errorf("Add(%d) = %v, want %v", d.seq, got, d.want)
		}
	}
	if u.Duplicates != 1 || u.Reordered != 1 {
		t.Errorf("duplicates %d, reordered %d; want 1, 1", u.Duplicates, u.Reordered)
	}
	// RFC 3550: J += (|D| - J)/16 over the transits 100, 116, 100, 100
	// (the duplicate does not count): 1, then 1.9375, then 1.81640625.
	if j := u.JitterNs(); j != 1.81640625 {
		t.Errorf("jitter %v ns, want 1.81640625", j)
	}
}

// sinkFeed is a sink's recv over the messages msgs, in order, each
// arriving at its time in at (none: no time, the sink reads its clock),
// counting its calls; once they are out it reports a timeout at once (a
// path with nothing more on its way).
type sinkFeed struct {
	msgs  [][]byte
	at    []time.Time
	calls int
}

func (f *sinkFeed) recv(time.Duration) ([]byte, time.Time, error) {
	f.calls++
	if len(f.msgs) == 0 {
		return nil, time.Time{}, os.ErrDeadlineExceeded
	}
	m := f.msgs[0]
	f.msgs = f.msgs[1:]
	var at time.Time
	if len(f.at) > 0 {
		at, f.at = f.at[0], f.at[1:]
	}
	return m, at, nil
}

// numbered is n datagrams of the client's format, sequence 0 to n-1.
func numbered(n int) [][]byte {
	var msgs [][]byte
	for i := range n {
		m := make([]byte, udpHeader+8)
		binary.BigEndian.PutUint64(m[0:8], uint64(i))
		binary.BigEndian.PutUint64(m[8:16], uint64(time.Now().UnixNano()))
		msgs = append(msgs, m)
	}
	return msgs
}

// A sink whose client is done stops as soon as every datagram the client
// sent has arrived, without waiting out the drain; one short of what was
// sent, or that saw a duplicate, still waits for what may be on its way
// and counts it.
func TestSinkEndsWhenEverythingSentHasArrived(t *testing.T) {
	limit := time.Now().Add(time.Minute)
	run := func(sent uint64, msgs [][]byte) (serverReport, int) {
		finished := make(chan done, 1)
		finished <- done{Sent: sent}
		f := &sinkFeed{msgs: msgs}
		return sink(f.recv, limit, 0, finished), f.calls
	}
	if rep, calls := run(5, numbered(5)); rep.Messages != 5 || rep.Lost != 0 || calls != 5 {
		t.Errorf("all 5 arrived: %d messages, %d lost, %d reads; want 5, 0 and 5 (none after the last)", rep.Messages, rep.Lost, calls)
	}
	if rep, calls := run(6, numbered(5)); rep.Messages != 5 || rep.Lost != 1 || calls != 6 {
		t.Errorf("5 of 6 arrived: %d messages, %d lost, %d reads; want 5, 1 and 6 (a drain)", rep.Messages, rep.Lost, calls)
	}
	dup := numbered(5)
	dup = append(dup[:3], append([][]byte{dup[2]}, dup[3:]...)...)
	if rep, calls := run(5, dup); rep.Messages != 5 || rep.Duplicates != 1 || calls != 7 {
		t.Errorf("5 and a copy arrived: %d messages, %d duplicates, %d reads; want 5, 1 and 7 (a drain for more copies)", rep.Messages, rep.Duplicates, calls)
	}
}

// A sink times a stream by its counted arrivals: a duplicate arriving
// after the last does not lengthen it, and a bare short message counts as
// any other.
func TestSinkTimesItsCountedArrivals(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	msgs := numbered(3)
	msgs = append(msgs, msgs[1]) // a copy of message 1, last of all
	f := &sinkFeed{msgs: msgs, at: []time.Time{ms(10), ms(11), ms(12), ms(40)}}
	if rep := sink(f.recv, time.Now().Add(time.Minute), 0, closedDone()); rep.Arrival != 3*time.Millisecond || rep.Messages != 3 || rep.Duplicates != 1 {
		t.Errorf("arrivals at 10, 11, 12 ms and a copy at 40: %v, %d messages, %d duplicates; want 3ms, 3, 1", rep.Arrival, rep.Messages, rep.Duplicates)
	}
	f = &sinkFeed{msgs: [][]byte{{1}, {2}}, at: []time.Time{ms(0), ms(5)}}
	if rep := sink(f.recv, time.Now().Add(time.Minute), 0, closedDone()); rep.Arrival != 10*time.Millisecond || rep.Messages != 2 {
		t.Errorf("two bare messages 5 ms apart: %v, %d messages; want 10ms, 2", rep.Arrival, rep.Messages)
	}
}

// closedDone is a client's word that it is done, saying nothing of what
// it sent.
func closedDone() chan done {
	c := make(chan done)
	close(c)
	return c
}

// A stream's arrival time is the median of its rates between marks, from
// its first mark to its last but one, over all its messages: a start, an
// end or a stretch the emulator delivered late does not count as the
// link's.
func TestArrivalsTimeTheStreamsMiddle(t *testing.T) {
	at := func(us ...int) arrivals {
		a := arrivals{every: 100 * time.Microsecond}
		for _, u := range us {
			a.note(time.Unix(0, int64(u)*1000))
		}
		return a
	}
	for _, c := range []struct {
		name string
		a    arrivals
		want time.Duration
	}{
		// Four at once, one every 50 µs, and the last two at once: marks
		// at 100 (4 before), 200 (6), 300 (8), 400 (10): windows of 50 µs a
		// message up to the last but one; 12 messages: 600 µs.
		{"bursts at both ends", at(0, 0, 0, 0, 100, 150, 200, 250, 300, 350, 400, 400), 600 * time.Microsecond},
		// Evenly 50 µs apart: 10 messages take 500 µs.
		{"even", at(0, 50, 100, 150, 200, 250, 300, 350, 400, 450), 500 * time.Microsecond},
		// Sixteen 50 µs apart, of which 11-13 came late, at 690 µs with
		// 14: marks at 100 (2), 200 (4), 300 (6), 400 (8), 500 (10), 690
		// (11), 700 (14); windows of 50, 50, 50, 50 and 190 µs a message:
		// the median, 50, over 16 messages (first mark to last but one
		// would give 65.6 µs a message, 1.05 ms).
		{"late before the end", at(0, 50, 100, 150, 200, 250, 300, 350, 400, 450, 500, 690, 690, 690, 700, 750), 800 * time.Microsecond},
		// A pause over several marks' lengths makes one mark, and counts:
		// marks at 100 (2 before), 500 (4), 600 (6); 2 messages in 400 µs,
		// 8 messages: 1.6 ms.
		{"a pause", at(0, 50, 100, 150, 500, 550, 600, 650), 1600 * time.Microsecond},
		// Fewer than three marks: first to last, 3 messages over 2 gaps.
		{"short", at(0, 30, 60), 90 * time.Microsecond},
		{"one message", at(0), 0},
		{"none", at(), 0},
	} {
		if got := c.a.elapsed(); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
