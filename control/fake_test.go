package control

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/gopacket/pcapgo"

	"github.com/atmlab/atmlab/devices"
	"github.com/atmlab/atmlab/emulator"
	"github.com/atmlab/atmlab/emulator/sched"
	"github.com/atmlab/atmlab/internal/labtest"
	"github.com/atmlab/atmlab/topologies/labfile"
	"github.com/atmlab/atmlab/topologies/settings"
)

// fakeLab is a running lab without a kernel: an emulated network on a
// virtual clock, whose "loop goroutine" is whoever holds mu.
type fakeLab struct {
	name    string
	mu      sync.Mutex
	s       *sched.Scheduler
	net     *devices.Network
	start   time.Time
	changes []Changed
	asked   int // Set calls: the changes the socket passed on
}

func (f *fakeLab) Name() string              { return f.name }
func (f *fakeLab) Network() *devices.Network { return f.net }
func (f *fakeLab) Start() time.Time          { return f.start }

func (f *fakeLab) Query(ctx context.Context, fn func()) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	f.Do(fn)
	return nil
}

func (f *fakeLab) Do(fn func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn()
}

func (f *fakeLab) Stats(ctx context.Context) (st Stats, err error) {
	err = f.Query(ctx, func() {
		st = Snapshot(f.name, LoopStats{Uptime: f.s.Now()}, f.net, f.s.Now(), f.changes)
	})
	return st, err
}

func (f *fakeLab) Set(ctx context.Context, endpoint, direction string, c settings.Change) (rec Changed, err error) {
	qerr := f.Query(ctx, func() {
		f.asked++
		if _, rec, err = Apply(f.net, f.s.Now(), endpoint, direction, c); err == nil {
			f.changes = append(f.changes, rec)
		}
	})
	return rec, errors.Join(qerr, err)
}

var echoLab = labtest.Lab("two-hosts-switch", "echo")

// fakeServer serves lab echo's control socket over a fake lab.
func fakeServer(t *testing.T) (*fakeLab, *Server, string) {
	t.Helper()
	lab, err := labfile.Parse("echo.yaml", []byte(echoLab))
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeLab{name: "echo", s: sched.New(), start: time.Unix(1e9, 0)}
	f.net = devices.Build(lab, f.s)
	path := filepath.Join(t.TempDir(), "echo.sock")
	s, err := Listen(f, path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go s.Serve(ctx)
	t.Cleanup(func() { cancel(); s.Close(); s.wg.Wait() })
	return f, s, path
}

// broadcast sends n 98-byte broadcast frames from h1 and runs the model
// until they are delivered.
func (f *fakeLab) broadcast(n int) {
	f.Do(func() {
		for range n {
			d := make([]byte, 98)
			copy(d, "\xff\xff\xff\xff\xff\xff\x02\x00\x00\x00\x00\x01")
			f.net.Hosts["h1:eth0"].Input(&emulator.Frame{Data: d})
		}
		f.s.Run()
	})
}

// Stats and set answer over the socket from the lab's own counters; a set
// is in every later stats.
func TestStatsAndSet(t *testing.T) {
	f, _, path := fakeServer(t)
	f.broadcast(3)
	ctx := context.Background()
	st, err := QueryStats(ctx, "echo", path)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(st.Ports, func(p emulator.PortStats) bool { return p.Port == "h1:eth0" })
	j := slices.IndexFunc(st.Ports, func(p emulator.PortStats) bool { return p.Port == "h2:eth0" })
	if st.Lab != "echo" || i < 0 || j < 0 || st.Ports[i].TxFrames != 3 || st.Ports[j].RxFrames != 3 || st.Nodes["sw1"].Counters["filtered"] != 0 {
		t.Fatalf("stats = %+v", st)
	}
	if raw, _ := st.Sections["switch_filtered"]["sw1"].(json.RawMessage); string(raw) != "0" {
		t.Fatalf("switch_filtered over the socket = %v, want sw1's 0", st.Sections["switch_filtered"])
	}
	ch, err := settings.ParseChange([]string{"rate=10M"})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := SetLink(ctx, "echo", path, "h1:eth0", "", ch)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Endpoint != "h1:eth0" || len(rec.Directions) != 2 || !strings.Contains(rec.Directions[0], "rate=10M") {
		t.Fatalf("set = %+v", rec)
	}
	if _, err := SetLink(ctx, "echo", path, "h9:eth0", "", ch); err == nil {
		t.Error("set of a link the lab lacks: no error")
	}
	st, err = QueryStats(ctx, "echo", path)
	if err != nil || len(st.Changes) != 1 || st.Changes[0].String() != rec.String() {
		t.Fatalf("changes after set: %+v %v", st, err)
	}
}

// Two captures of one link each get every frame, with the lab's model
// times as timestamps; the link's tap is removed once the last goes.
func TestCaptureFanOut(t *testing.T) {
	f, s, path := fakeServer(t)
	type result struct {
		buf bytes.Buffer
		n   int
		err error
	}
	res := make([]*result, 2)
	var wg sync.WaitGroup
	for i := range res {
		res[i] = &result{}
		wg.Add(1)
		go func(r *result) {
			defer wg.Done()
			r.n, _, r.err = Capture(context.Background(), "echo", path, "sw1:p1", false, &r.buf, 2)
		}(res[i])
	}
	subscribers := func() (n int) {
		f.Do(func() {
			for _, subs := range s.captures {
				n += len(subs)
			}
		})
		return n
	}
	for deadline := time.Now().Add(5 * time.Second); subscribers() < 4; { // 2 clients x 2 directions
		if time.Now().After(deadline) {
			t.Fatalf("%d subscriptions, want 4", subscribers())
		}
		time.Sleep(time.Millisecond)
	}
	f.broadcast(2)
	wg.Wait()
	for i, r := range res {
		if r.err != nil || r.n != 2 {
			t.Fatalf("capture %d: %d frames, %v", i, r.n, r.err)
		}
		rd, err := pcapgo.NewReader(&r.buf)
		if err != nil {
			t.Fatal(err)
		}
		var stamps []time.Duration
		for {
			data, ci, err := rd.ReadPacketData()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil || len(data) != 98 {
				t.Fatalf("capture %d: %d bytes, %v", i, len(data), err)
			}
			stamps = append(stamps, ci.Timestamp.Sub(f.start))
		}
		// 98+4 bytes and the 8-byte preamble at 100M: 8.8 µs, the next
		// after a 0.96 µs gap at 18.56 µs; pcap keeps whole microseconds.
		if want := []time.Duration{8 * time.Microsecond, 18 * time.Microsecond}; !slices.Equal(stamps, want) {
			t.Errorf("capture %d: timestamps %v, want %v", i, stamps, want)
		}
	}
	for deadline := time.Now().Add(5 * time.Second); subscribers() > 0; {
		if time.Now().After(deadline) {
			t.Fatalf("%d subscriptions left after both captures ended", subscribers())
		}
		time.Sleep(time.Millisecond)
	}
	if _, _, err := Capture(context.Background(), "echo", path, "h9:eth0", false, io.Discard, 1); err == nil || !strings.Contains(err.Error(), "no link has this endpoint") {
		t.Errorf("capture of a missing link: %v", err)
	}
}
