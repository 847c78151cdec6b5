package labrun

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/atmlab/atmlab/harness/perf"
	"github.com/atmlab/atmlab/harness/vperf"
	"github.com/atmlab/atmlab/topologies/study"
)

// Atmlab is atmlab perf, the experiments' default tool (study.DefaultTool).
func (toolbox) Atmlab() Tool { return atmlabTool{} }

// atmlabTool runs atmlab's own client in the `from` host against the perf
// server the run keeps in the `to` host (startPerfServers); in virtual
// time, the same test between virtual hosts.
type atmlabTool struct{}

func (atmlabTool) Name() string { return study.DefaultTool }

// Virtual: atmlab perf's tests run between virtual hosts as they are.
func (atmlabTool) Virtual(*study.Experiment) (func(vperf.Test) (perf.Result, error), error) {
	return vperf.Run, nil
}

func (atmlabTool) Real(ctx context.Context, h *HostsEnv, p Point, e *study.Experiment) (perf.Result, error) {
	args := []string{h.Self, "perf", "client", "-H", target(h.Lab, p.From, p.To), "-p", strconv.Itoa(perfPort),
		"-t", p.Test, "-l", e.Duration.String(), "-o", "json"}
	if p.Size > 0 {
		if strings.HasSuffix(p.Test, "_RR") {
			args = append(args, "-r", fmt.Sprintf("%d,%d", p.Size, p.Size))
		} else {
			args = append(args, "-m", strconv.Itoa(p.Size))
		}
	}
	if p.SockBuf > 0 {
		args = append(args, "-s", strconv.Itoa(p.SockBuf), "-S", strconv.Itoa(p.SockBuf))
	}
	if e.Interval > 0 {
		args = append(args, "-i", e.Interval.String())
	}
	spec := perf.Spec{Test: p.Test}
	if err := NativeSpec(h.Lab, p.From, p.To, &spec); err != nil {
		return perf.Result{Schema: perf.SchemaVersion, Test: p.Test}, err
	}
	if spec.VC != nil {
		args = append(args, "--vc", spec.VC.String(), "--peer-vc", spec.PeerVC.String())
	}
	out, err := h.Hosts.Command(p.From, args...).Output()
	var res perf.Result
	if jerr := json.Unmarshal(out, &res); jerr != nil {
		if err == nil {
			err = jerr
		}
		return res, fmt.Errorf("perf client: %w: %s", err, stderrOf(err))
	}
	return res, nil
}

// perfReady is what atmlab perf server prints once it listens.
const perfReady = "perf server listening on "

// startPerfServers starts atmlab perf servers in the hosts and waits
// until each says it listens (serveTimeout at most); stop ends them.
func (h *HostsEnv) startPerfServers(hosts []string) (stop func(), err error) {
	var started []*server
	stop = func() {
		for _, s := range started {
			s.stop()
		}
	}
	for _, host := range hosts {
		s, err := h.startServer("perf server", host, func(line string) bool { return strings.HasPrefix(line, perfReady) },
			h.Self, "perf", "server", "-p", strconv.Itoa(perfPort))
		if err == nil {
			started = append(started, s)
			err = s.await(serveTimeout)
		}
		if err != nil {
			stop()
			return nil, err
		}
	}
	return stop, nil
}

// loadWarmup is how long an experiment's background load runs before the
// point starts: the load reaches steady state first.
const loadWarmup = time.Second

// startLoad starts an experiment's background load, an atmlab perf client
// that outlasts the point, and lets it warm up; a load that ends during
// its warm-up (its server unreachable, say) is the point's error.
func (h *HostsEnv) startLoad(e *study.Experiment) (*server, error) {
	bg := e.Background
	args := []string{h.Self, "perf", "client", "-H", target(h.Lab, bg.From, bg.To), "-p", strconv.Itoa(perfPort),
		"-t", bg.Test, "-m", strconv.Itoa(bg.Size), "-l", (time.Duration(runsAtMost(e))*(e.Duration+time.Second) + 3*time.Second).String()}
	if bg.SockBuf > 0 {
		args = append(args, "-s", strconv.Itoa(bg.SockBuf), "-S", strconv.Itoa(bg.SockBuf))
	}
	load, err := h.startServer("background load", bg.From, nil, args...)
	if err != nil {
		return nil, err
	}
	select {
	case err := <-load.exited:
		return nil, fmt.Errorf("background load %s from %s to %s ended before the point (%v): %s", bg.Test, bg.From, bg.To, err, cmp.Or(load.said.String(), "it said nothing"))
	case <-time.After(loadWarmup):
		return load, nil
	}
}
