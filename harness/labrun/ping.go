package labrun

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"time"
)

// pathPings is how many echoes measure a path's round trip when a lab
// comes up, 10 ms apart: a tenth of a second a path.
const pathPings = 10

// pingPaths pings, once before the points, every host pair the points
// measure between two hosts: the median round trip through the
// emulator, by [from, to]. A path whose ping fails has none.
func (h *HostsEnv) pingPaths(ctx context.Context, pts []Point) map[[2]string]time.Duration {
	rtts := map[[2]string]time.Duration{}
	for _, p := range pts {
		k := [2]string{p.From, p.To}
		if _, done := rtts[k]; done || p.From == p.To || ctx.Err() != nil {
			continue
		}
		out, _ := h.Hosts.Command(p.From, "ping", "-n", "-c", strconv.Itoa(pathPings), "-i", "0.01", "-W", "1", target(h.Lab, p.From, p.To)).Output()
		rtts[k] = medianPing(out) // 0 when nothing came back
	}
	return rtts
}

// medianPing is the median of the round trips ping printed ("time=0.123
// ms"), 0 if none.
func medianPing(out []byte) time.Duration {
	var rtts []time.Duration
	for _, l := range strings.Split(string(out), "\n") {
		_, after, ok := strings.Cut(l, " time=")
		if !ok {
			continue
		}
		v, unit, _ := strings.Cut(after, " ")
		ms, err := strconv.ParseFloat(v, 64)
		if err != nil || unit != "ms" {
			continue
		}
		rtts = append(rtts, time.Duration(ms*float64(time.Millisecond)))
	}
	if len(rtts) == 0 {
		return 0
	}
	slices.Sort(rtts)
	return rtts[len(rtts)/2]
}
