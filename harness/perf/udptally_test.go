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

// sinkFeed is a sink's recv over the messages msgs, in order, counting
// its calls; once they are out it reports a timeout at once (a path with
// nothing more on its way).
type sinkFeed struct {
	msgs  [][]byte
	calls int
}

func (f *sinkFeed) recv(time.Duration) ([]byte, error) {
	f.calls++
	if len(f.msgs) == 0 {
		return nil, os.ErrDeadlineExceeded
	}
	m := f.msgs[0]
	f.msgs = f.msgs[1:]
	return m, nil
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
		return sink(f.recv, limit, finished), f.calls
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
