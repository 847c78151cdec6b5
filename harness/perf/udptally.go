package perf

import (
	"time"
)

// UDPTally counts a UDP_STREAM receiver's datagrams by the sequence number
// and send time the client writes in each (udpHeader): duplicates,
// reordering (a datagram below the highest seen so far), and RFC 3550's
// interarrival jitter of their transit times. The real server and the
// virtual-time one (harness/vperf) both count with it.
type UDPTally struct {
	Duplicates, Reordered uint64

	seen        []uint64 // bitset of sequence numbers received
	next        uint64   // one past the highest sequence seen
	prevTransit time.Duration
	jitter      float64 // ns
	started     bool
}

// Add counts the datagram seq that took transit from its sender; it
// returns false for a duplicate, which is not a message received.
func (u *UDPTally) Add(seq uint64, transit time.Duration) bool {
	word, bit := seq/64, seq%64
	for uint64(len(u.seen)) <= word {
		u.seen = append(u.seen, 0)
	}
	if u.seen[word]&(1<<bit) != 0 {
		u.Duplicates++
		return false
	}
	u.seen[word] |= 1 << bit
	if seq < u.next {
		u.Reordered++
	} else {
		u.next = seq + 1
	}
	if u.started {
		d := float64(transit - u.prevTransit)
		u.jitter += (max(d, -d) - u.jitter) / 16
	}
	u.prevTransit, u.started = transit, true
	return true
}

// JitterNs is the interarrival jitter so far, in nanoseconds.
func (u *UDPTally) JitterNs() float64 { return u.jitter }
