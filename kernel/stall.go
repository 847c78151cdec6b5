//go:build linux

package kernel

import (
	"cmp"
	"runtime/metrics"
	"slices"
	"time"

	"golang.org/x/sys/unix"

	"github.com/atmlab/atmlab/netstat"
)

// StallMin is the longest the loop, awake, may go without reading its
// clock before the spell counts as a stall (netstat.Stall).
const StallMin = netstat.StallMin

// StallKeep is how many of its latest stalls the loop keeps, and how
// many of its longest besides: under load a loop stalls a few times over
// StallMin every 100 ms (a host's thread taking its core for a slice),
// and the latest alone would forget a long stall within seconds.
const StallKeep = 32

// stallEvery is how often the loop reads the counters that tell a stall's
// cause (its thread's schedstat, the process's garbage collections, the
// machine's steal): a stall's figures cover it and up to this much
// before it (and a quiet spell, if it came that soon after one). A
// reading costs ~6 µs here, 0.06 % of the loop's time, but ~50 µs after
// the thread slept 10 ms or more (its first system calls find the kernel
// cold): so none is taken on the way to frames that ended a quiet spell,
// nor in the stallEvery after it; the frames of a ping a second after the
// last waited for one before they were read.
const stallEvery = 10 * time.Millisecond

// counters are what tells a stall's cause, read at once.
type counters struct {
	at       time.Duration // the loop's clock
	ran      time.Duration // the loop thread's time on a CPU
	waited   time.Duration // its time runnable, waiting for a CPU
	switches uint64        // times it was switched onto a CPU
	gcs      uint64        // the process's finished garbage collections
	steal    time.Duration // the machine's stolen time
}

// stalls records the loop's stalls. Owned by the loop goroutine.
type stalls struct {
	read    func(at time.Duration) counters // reads the counters now
	last    counters                        // at the last reading
	due     time.Duration                   // when the next reading is due
	seen    time.Duration                   // the loop's last clock reading
	ring    [StallKeep]netstat.Stall        // the latest
	longest []netstat.Stall                 // the longest, StallKeep at most
	count   uint64
}

// start begins watching at the loop's clock now, reading the counters
// with read.
func (s *stalls) start(now time.Duration, read func(time.Duration) counters) {
	s.read, s.seen = read, now
	s.keep(read(now))
}

// keep makes c the last reading, and the next due stallEvery after it.
func (s *stalls) keep(c counters) {
	s.last, s.due = c, c.at+stallEvery
}

// clock is the loop's clock read at now: after it slept (or yielded the
// core), or while it was awake; frames says frames came that it serves
// next, which no reading that can wait goes before.
func (s *stalls) clock(now time.Duration, slept, frames bool) {
	if slept {
		s.slept(now, frames)
	} else {
		s.awake(now, frames)
	}
}

// awake is the loop's clock read at now while it was awake since the
// last reading: longer than StallMin apart, the spell between them is a
// stall, recorded with the counters read again at its end.
func (s *stalls) awake(now time.Duration, frames bool) {
	if now-s.seen > StallMin {
		c := s.read(now)
		st := netstat.Stall{
			At:       s.seen,
			Len:      now - s.seen,
			Window:   now - s.last.at,
			Ran:      c.ran - s.last.ran,
			Waited:   c.waited - s.last.waited,
			Switches: c.switches - s.last.switches,
			GCs:      c.gcs - s.last.gcs,
			Steal:    c.steal - s.last.steal,
		}
		s.ring[s.count%StallKeep] = st
		s.count++
		s.keepLongest(st)
		s.keep(c)
	} else if now >= s.due && !frames {
		s.keep(s.read(now))
	}
	s.seen = now
}

// slept is the loop's clock read at now after it slept (or yielded the
// core with nothing to do): the spell since the last reading was meant.
// After a quiet spell of stallEvery or more the next reading waits
// stallEvery: what woke the loop goes first.
func (s *stalls) slept(now time.Duration, frames bool) {
	if now-s.seen >= stallEvery {
		s.due = max(s.due, now+stallEvery)
	}
	s.seen = now
	if now >= s.due && !frames {
		s.keep(s.read(now))
	}
}

// keepLongest keeps st among the longest if it is longer than the
// shortest of them, or there is room.
func (s *stalls) keepLongest(st netstat.Stall) {
	if s.longest == nil {
		s.longest = make([]netstat.Stall, 0, StallKeep) // once: a stall allocates nothing after
	}
	if len(s.longest) < StallKeep {
		s.longest = append(s.longest, st)
		return
	}
	i := 0
	for k, l := range s.longest {
		if l.Len < s.longest[i].Len {
			i = k
		}
	}
	if st.Len > s.longest[i].Len {
		s.longest[i] = st
	}
}

// list returns the stalls kept, the latest and the longest, each once,
// oldest first.
func (s *stalls) list() []netstat.Stall {
	n := min(s.count, StallKeep)
	out := make([]netstat.Stall, 0, n+uint64(len(s.longest)))
	for i := s.count - n; i < s.count; i++ {
		out = append(out, s.ring[i%StallKeep])
	}
	latest := len(out)
	for _, l := range s.longest {
		if !slices.Contains(out[:latest], l) {
			out = append(out, l)
		}
	}
	slices.SortFunc(out, func(a, b netstat.Stall) int { return cmp.Compare(a.At, b.At) })
	return out
}

// threadCounters reads the calling thread's counters (open it on the
// loop's locked thread: /proc/thread-self is the thread that opens it),
// the process's garbage collections and the machine's steal. What cannot
// be opened reads 0.
type threadCounters struct {
	sched, stat int // descriptors, -1 if not open
	gc          []metrics.Sample
	buf         [256]byte
}

func openCounters() *threadCounters {
	c := &threadCounters{gc: []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}}
	c.sched, _ = unix.Open("/proc/thread-self/schedstat", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	c.stat, _ = unix.Open("/proc/stat", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	return c
}

func (c *threadCounters) read(at time.Duration) counters {
	r := counters{at: at}
	if n := c.pread(c.sched); n > 0 {
		f := fields(c.buf[:n], 3)
		r.ran, r.waited, r.switches = time.Duration(f[0]), time.Duration(f[1]), f[2]
	}
	if n := c.pread(c.stat); n > 5 && string(c.buf[:4]) == "cpu " {
		// user nice system idle iowait irq softirq steal, in USER_HZ ticks
		r.steal = time.Duration(fields(c.buf[4:n], 8)[7]) * (time.Second / 100)
	}
	metrics.Read(c.gc)
	if v := c.gc[0].Value; v.Kind() == metrics.KindUint64 {
		r.gcs = v.Uint64()
	}
	return r
}

// heap returns the process's finished garbage collections and the bytes
// it has allocated on the heap.
func heap() (cycles, allocated uint64) {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}, {Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	var v [2]uint64
	for i := range s {
		if s[i].Value.Kind() == metrics.KindUint64 {
			v[i] = s[i].Value.Uint64()
		}
	}
	return v[0], v[1]
}

func (c *threadCounters) pread(fd int) int {
	if fd < 0 {
		return 0
	}
	n, err := unix.Pread(fd, c.buf[:], 0)
	if err != nil {
		return 0
	}
	return n
}

func (c *threadCounters) close() {
	for _, fd := range []int{c.sched, c.stat} {
		if fd >= 0 {
			unix.Close(fd)
		}
	}
}

// fields parses the first n (at most 8) unsigned decimal numbers of b's
// first line, separated by anything else, without allocating; missing
// ones are 0.
func fields(b []byte, n int) [8]uint64 {
	var out [8]uint64
	i := 0
	for k := 0; k < n; k++ {
		for i < len(b) && (b[i] < '0' || b[i] > '9') {
			if b[i] == '\n' {
				return out
			}
			i++
		}
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			out[k] = out[k]*10 + uint64(b[i]-'0')
			i++
		}
	}
	return out
}
