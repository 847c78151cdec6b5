package remote

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"
)

// Window is a message between parts: a part sends its own entry (its
// account); the first part, which relays, passes each other part every
// part's entry, with only the posts for that part.
type Window struct {
	Entries []Entry
}

// Entry is one part's account: its safe time and what it posted since its
// last.
type Entry struct {
	Part    uint16
	Op      Op
	Pending bool          // events left in its scheduler
	Going   bool          // a lead whose test is not done
	Now     time.Duration // its safe time (a lead's stop: where it stopped)
	Limit   time.Duration // a lead's limit
	Sent    uint32        // the posts it made since its last account, to any part
	Posts   []Post        // those for the receiver
}

// Post is an event handed to another part: bytes its process turns into
// the event, due at At there, scheduled at From by cut Origin.
type Post struct {
	Dst      uint16
	Origin   uint32
	At, From time.Duration
	Data     []byte
}

// Op is which step of the run an account belongs to: a lead's stop and
// its end are what the parts following it go by.
type Op uint8

// Ops.
const (
	OpUntil  Op = 1 // RunUntil, every part
	OpStart  Op = 2 // a lead's first window (no longer sent)
	OpLead   Op = 3 // a lead's account
	OpCatch  Op = 4 // the lead stopped: the others catch up with it
	OpEnd    Op = 5 // the lead's test is over
	OpFollow Op = 6 // a part following a lead
)

const (
	flagPending = 1 << iota
	flagGoing
)

const (
	entryLen = 2 + 1 + 1 + 8 + 8 + 4 + 4 // part, op, flags, now, limit, sent, posts
	postLen  = 2 + 4 + 8 + 8 + 4         // dst, origin, at, from, data length
	// MaxData bounds one post's data (a frame and its stamps).
	MaxData = 1 << 20
)

// Append appends w's encoding to b: a count of entries (2 octets), then
// each entry and its posts, big-endian.
func (w *Window) Append(b []byte) []byte {
	b = binary.BigEndian.AppendUint16(b, uint16(len(w.Entries)))
	for _, e := range w.Entries {
		var flags byte
		if e.Pending {
			flags |= flagPending
		}
		if e.Going {
			flags |= flagGoing
		}
		b = binary.BigEndian.AppendUint16(b, e.Part)
		b = append(b, byte(e.Op), flags)
		b = binary.BigEndian.AppendUint64(b, uint64(e.Now))
		b = binary.BigEndian.AppendUint64(b, uint64(e.Limit))
		b = binary.BigEndian.AppendUint32(b, e.Sent)
		b = binary.BigEndian.AppendUint32(b, uint32(len(e.Posts)))
		for _, p := range e.Posts {
			b = binary.BigEndian.AppendUint16(b, p.Dst)
			b = binary.BigEndian.AppendUint32(b, p.Origin)
			b = binary.BigEndian.AppendUint64(b, uint64(p.At))
			b = binary.BigEndian.AppendUint64(b, uint64(p.From))
			b = binary.BigEndian.AppendUint32(b, uint32(len(p.Data)))
			b = append(b, p.Data...)
		}
	}
	return b
}

var errShort = errors.New("window message cut short")

// Decode reads a window message: every count checked against what is
// left, nothing left over. Posts' data alias b.
func Decode(b []byte) (*Window, error) {
	if len(b) < 2 {
		return nil, errShort
	}
	n := int(binary.BigEndian.Uint16(b))
	b = b[2:]
	if n*entryLen > len(b) {
		return nil, fmt.Errorf("window message of %d entries holds %d octets, too few", n, len(b))
	}
	w := &Window{Entries: make([]Entry, n)}
	for i := range w.Entries {
		if len(b) < entryLen {
			return nil, errShort
		}
		e := &w.Entries[i]
		e.Part = binary.BigEndian.Uint16(b)
		e.Op = Op(b[2])
		if e.Op < OpUntil || e.Op > OpFollow {
			return nil, fmt.Errorf("window message: entry %d has no such step %d", i, b[2])
		}
		flags := b[3]
		if flags&^(flagPending|flagGoing) != 0 {
			return nil, fmt.Errorf("window message: entry %d has unknown flags %#x", i, flags)
		}
		e.Pending, e.Going = flags&flagPending != 0, flags&flagGoing != 0
		e.Now = time.Duration(binary.BigEndian.Uint64(b[4:]))
		e.Limit = time.Duration(binary.BigEndian.Uint64(b[12:]))
		e.Sent = binary.BigEndian.Uint32(b[20:])
		np := int(binary.BigEndian.Uint32(b[24:]))
		b = b[entryLen:]
		if np*postLen > len(b) || np < 0 {
			return nil, fmt.Errorf("window message: entry %d says %d posts in %d octets", i, np, len(b))
		}
		if np > 0 {
			e.Posts = make([]Post, np)
		}
		for j := range e.Posts {
			if len(b) < postLen {
				return nil, errShort
			}
			p := &e.Posts[j]
			p.Dst = binary.BigEndian.Uint16(b)
			p.Origin = binary.BigEndian.Uint32(b[2:])
			p.At = time.Duration(binary.BigEndian.Uint64(b[6:]))
			p.From = time.Duration(binary.BigEndian.Uint64(b[14:]))
			size := int(binary.BigEndian.Uint32(b[22:]))
			b = b[postLen:]
			if size > MaxData || size > len(b) {
				return nil, fmt.Errorf("window message: post %d of entry %d says %d octets, %d left", j, i, size, len(b))
			}
			p.Data = b[:size:size]
			b = b[size:]
		}
	}
	if len(b) > 0 {
		return nil, fmt.Errorf("window message: %d octets past its end", len(b))
	}
	return w, nil
}
