package labrun

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"sync"
	"time"

	"github.com/atmlab/atmlab/harness/perf"
	"github.com/atmlab/atmlab/topologies/study"
)

// VethPairer is a lab that can set a bare veth pair beside its hosts on
// the same machine: a short point's tool, run over it, measures what the
// hosts' own kernels carry with no emulator between them
// (Record.VethFrameRate).
type VethPairer interface {
	// VethPair makes the pair: run runs a program in its first (0) or
	// second (1) end, to is the second's address, and remove takes the
	// pair away.
	VethPair() (run func(end int, args ...string) *exec.Cmd, to string, remove func() error, err error)
}

// toolIperf3 is iperf3's name in a lab file, its tool's own.
var toolIperf3 = iperf3Tool{}.Name()

// vethSecs is how long a veth pair's frame rate is measured.
const vethSecs = 2

// vethKey is what a veth pair's frame rate was measured with.
type vethKey struct {
	tool          string
	size, sockbuf int
}

// vethFrameRate is the datagrams a second a bare veth pair beside the lab
// carries with p's tool, size and socket buffers (a UDP stream for
// vethSecs); 0 when the lab cannot make one, the tool is neither iperf3
// nor atmlab perf, or it failed. The runner keeps what it measured
// (FrameRates).
func (h *HostsEnv) vethFrameRate(ctx context.Context, p Point) float64 {
	vp, ok := h.Hosts.(VethPairer)
	if !ok || p.Size <= 0 || p.Tool != toolIperf3 && p.Tool != study.DefaultTool {
		return 0
	}
	v, err := measureVeth(ctx, vp, h.Self, p)
	if err != nil {
		return 0
	}
	return v
}

// FrameRates are the bare veth pair's frame rates (Env.FrameRate) a run
// has measured, by tool, size and socket buffers. The pair is the
// machine's, the same beside every variant's lab, so the runners of one
// campaign share them: each is measured once a run, not once a variant
// (2-3 s each).
type FrameRates struct {
	mu sync.Mutex
	m  map[vethKey]float64
}

// get is p's frame rate, measured by measure the first time (a failure,
// 0, is kept too: it would fail again).
func (f *FrameRates) get(ctx context.Context, p Point, measure func(context.Context, Point) float64) float64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	k := vethKey{p.Tool, p.Size, p.SockBuf}
	if v, ok := f.m[k]; ok {
		return v
	}
	v := measure(ctx, p)
	if ctx.Err() != nil {
		return v // cut short: not the rate
	}
	if f.m == nil {
		f.m = map[vethKey]float64{}
	}
	f.m[k] = v
	return v
}

// measureVeth runs p's tool over a veth pair from vp and returns the
// datagrams a second that arrived.
func measureVeth(ctx context.Context, vp VethPairer, self string, p Point) (float64, error) {
	run, to, remove, err := vp.VethPair()
	if err != nil {
		return 0, err
	}
	defer remove()
	size, secs := strconv.Itoa(p.Size), strconv.Itoa(vethSecs)
	var srv *exec.Cmd
	var client []string
	if p.Tool == toolIperf3 {
		srv = run(1, "iperf3", "-s", "-1", "-p", strconv.Itoa(iperf3Port))
		client = []string{"iperf3", "-c", to, "-p", strconv.Itoa(iperf3Port), "-J", "-u", "-b", "0", "-l", size, "-t", secs}
		if p.SockBuf > 0 {
			client = append(client, "-w", strconv.Itoa(p.SockBuf))
		}
	} else {
		srv = run(1, self, "perf", "server")
		client = []string{self, "perf", "client", "-o", "json", "-H", to, "-t", perf.UDPStream, "-m", size, "-l", secs}
		if p.SockBuf > 0 {
			client = append(client, "-s", strconv.Itoa(p.SockBuf), "-S", strconv.Itoa(p.SockBuf))
		}
	}
	if err := srv.Start(); err != nil {
		return 0, err
	}
	defer func() { srv.Process.Kill(); srv.Wait() }()
	for try := 0; ; try++ { // until the server listens
		if err := sleepCtx(ctx, 100*time.Millisecond); err != nil {
			return 0, err
		}
		out, err := run(0, client...).Output()
		if err == nil || try == 20 {
			if err != nil {
				return 0, err
			}
			return vethRate(p.Tool, p.Size, out)
		}
	}
}

// vethRate reads the datagrams a second that arrived from a veth run's
// output: iperf3 -J's or atmlab perf -o json's.
func vethRate(tool string, size int, out []byte) (float64, error) {
	if tool == toolIperf3 {
		var res struct {
			End struct {
				Sum struct {
					Seconds float64 `json:"seconds"`
					Packets int     `json:"packets"`
					Lost    int     `json:"lost_packets"`
				} `json:"sum"`
			} `json:"end"`
		}
		if err := json.Unmarshal(out, &res); err != nil {
			return 0, err
		}
		s := res.End.Sum
		if s.Seconds <= 0 {
			return 0, errors.New("iperf3 over the veth pair: no seconds in its report")
		}
		return float64(s.Packets-s.Lost) / s.Seconds, nil
	}
	var res perf.Result
	if err := json.Unmarshal(out, &res); err != nil {
		return 0, err
	}
	if res.Error != "" {
		return 0, fmt.Errorf("atmlab perf over the veth pair: %s", res.Error)
	}
	return res.ThroughputBps / float64(8*size), nil
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}
