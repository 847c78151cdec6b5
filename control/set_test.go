package control

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/atmlab/atmlab/devices"
	"github.com/atmlab/atmlab/emulator/sched"
	"github.com/atmlab/atmlab/topologies/labfile"
	"github.com/atmlab/atmlab/topologies/settings"
)

// hostileSets are set requests a client can write by hand, each with a
// value outside the lab file's ranges, and what the socket answers.
var hostileSets = []struct{ change, want string }{
	{`{"rate":0}`, "rate 0 is out of range: a bit rate (k, M, G or a PHY name) from 1k to 1000G, such as 10M"},
	{`{"rate":-5}`, "rate -5 is out of range: a bit rate"},
	{`{"Delay":-1000000000}`, "delay -1s is out of range: a duration in Go syntax from 0 to 24h"},
	{`{"Delay":3600000000000000000}`, "delay 1000000h is out of range: a duration in Go syntax from 0 to 24h"},
	{`{"Jitter":7200000000000000000}`, "jitter 2000000h is out of range"},
	{`{"loss":5}`, "loss 500% is out of range: a percentage from 0% to 100%"},
	{`{"loss":-0.5,"Delay":1000000}`, "loss -50% is out of range"},
	{`{"buffer":-1}`, "buffer -1B is out of range: a size with B, KiB, MiB or GiB from 1518B to 1GiB"},
	{`{"buffer":1073741824000}`, "buffer 1000GiB is out of range"},
	{`{"limit":-7}`, "limit -7 is out of range: a whole number from 1 to 1048576"},
	{`{"limit":2000000000}`, "limit 2000000000 is out of range"},
	{`{"rate":1e30}`, "request field change.rate: want a whole number"},
	{`{"loss":"NaN"}`, "request field change.loss: want a number"},
}

// The control socket checks every change against the lab file's ranges
// before the lab is asked: a hand-written request with rate 0, a negative
// delay or a 500 % loss is refused, naming the key and its range, and
// nothing is applied. Before, each went into the model as it was.
func TestControlSetRefusesOutOfRange(t *testing.T) {
	f, _, path := fakeServer(t)
	configs := func() string {
		var s []string
		f.Do(func() {
			for _, l := range f.net.Links {
				s = append(s, fmt.Sprint(l.AB.Config(), l.BA.Config()))
			}
		})
		return strings.Join(s, "\n")
	}
	was := configs()
	for _, tc := range hostileSets {
		for _, dir := range []string{"", `"direction":"sw1:p1",`} {
			got := ask(t, path, []byte(`{"op":"set","endpoint":"h1:eth0",`+dir+`"change":`+tc.change+"}\n"))
			if !strings.Contains(got, tc.want) || !strings.Contains(got, `"error"`) {
				t.Errorf("set %s: %q, want an error with %q", tc.change, got, tc.want)
			}
		}
	}
	if f.asked != 0 || len(f.changes) != 0 || configs() != was {
		t.Fatalf("after refused changes: %d passed on, changes %v, links\n%s\nwere\n%s", f.asked, f.changes, configs(), was)
	}
	// In range, the same request is applied.
	got := ask(t, path, []byte(`{"op":"set","endpoint":"h1:eth0","change":{"rate":1000,"Delay":86400000000000,"loss":1,"limit":0}}`+"\n"))
	if !strings.Contains(got, "rate=1k delay=24h0m0s") || f.asked != 1 {
		t.Fatalf("set at the ends of the ranges: %q", got)
	}
}

// atmlab set with a change the lab would refuse says so at once, without
// asking the lab; one that cannot be written as JSON (a NaN) is said at
// once too, not after the server's 5 s wait for a request that never came.
func TestSetLinkRefusesAtOnce(t *testing.T) {
	f, _, path := fakeServer(t)
	nan := math.NaN()
	ctx := context.Background()
	start := time.Now()
	_, err := SetLink(ctx, "echo", path, "h1:eth0", "", settings.Change{Loss: &nan})
	if err == nil || !strings.Contains(err.Error(), "loss NaN% is out of range: a percentage from 0% to 100%") {
		t.Fatalf("SetLink(loss NaN) = %v", err)
	}
	_, _, _, err = dial(ctx, "echo", path, request{Op: "set", Endpoint: "h1:eth0", Change: &settings.Change{Loss: &nan}})
	if err == nil || !strings.Contains(err.Error(), "cannot write the set request: json: unsupported value: NaN") {
		t.Fatalf("dial with a NaN = %v", err)
	}
	if d := time.Since(start); d > time.Second || f.asked != 0 {
		t.Fatalf("refused after %v, %d changes passed on", d, f.asked)
	}
}

// FuzzSetRequest decodes arbitrary bytes as a control request: it never
// panics, and a set whose change passes the check holds only values within
// the lab file's ranges, which the network then takes without a range error.
func FuzzSetRequest(f *testing.F) {
	for _, tc := range hostileSets {
		f.Add([]byte(`{"op":"set","endpoint":"h1:eth0","change":` + tc.change + "}"))
	}
	f.Add([]byte(`{"op":"set","endpoint":"sw1:p2","direction":"sw1:p2","change":{"rate":10000000,"Delay":20000000,"Jitter":1000000,"loss":0.01,"limit":1000,"buffer":65536,"reset":true}}`))
	f.Add([]byte(`{"op":"set","change":{"loss":1e-320,"limit":0}}`))
	f.Add([]byte(`{"op":"stats"}`))
	f.Add([]byte(`[1,2]`))
	lab, err := labfile.Parse("echo.yaml", []byte(echoLab))
	if err != nil {
		f.Fatal(err)
	}
	n := devices.Build(lab, sched.New())
	f.Fuzz(func(t *testing.T, line []byte) {
		req, err := decodeRequest(line)
		if err != nil || req.Op != "set" || req.Change == nil {
			return
		}
		c := *req.Change
		in := func(key string, v float64) {
			s := settings.Settings[key]
			if !(v >= s.Min && v <= s.Max) && !(key == "limit" && v == 0) {
				t.Fatalf("%s %v passed the check, outside %s", key, v, s.Range())
			}
		}
		if c.Rate != nil {
			in("rate", float64(*c.Rate))
		}
		if c.Delay != nil {
			in("delay", float64(*c.Delay))
		}
		if c.Jitter != nil {
			in("jitter", float64(*c.Jitter))
		}
		if c.Loss != nil {
			in("loss", *c.Loss)
		}
		if c.Limit != nil {
			in("limit", float64(*c.Limit))
		}
		if c.Buffer != nil {
			in("buffer", float64(*c.Buffer))
		}
		if _, err := n.Set("sw1:p2", "", c); err != nil && strings.Contains(err.Error(), "out of range") {
			t.Fatalf("a change that passed the socket's check: %v", err)
		}
	})
}
