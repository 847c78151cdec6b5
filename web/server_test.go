package web

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/atmlab/atmlab/harness/labrun"
	"github.com/atmlab/atmlab/harness/perf"
	"github.com/atmlab/atmlab/internal/labtest"
	"github.com/atmlab/atmlab/internal/webguard"
	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/labfile"
	"github.com/atmlab/atmlab/topologies/settings"
)

// fake is a lab for the view: a fixed topology, counters that count the
// snapshots taken, and the changes it was asked for.
type fake struct {
	mu      sync.Mutex
	spec    topologies.View
	nodes   map[string]any // the snapshot's per-node reports, if any
	stats   int
	changes []string
}

func (f *fake) Topology(context.Context) (topologies.View, error) { return f.spec, nil }

func (f *fake) Stats(context.Context) (any, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stats++
	up := time.Duration(f.stats) * 250 * time.Millisecond
	var ports []map[string]any
	for _, l := range f.spec.Links {
		for _, ep := range []string{l.A, l.B} {
			ports = append(ports, map[string]any{"port": ep, "tx_bytes": f.stats * 1_000_000, "rx_bytes": f.stats * 1_000_000,
				"busy_ns": int64(up) / 2, "queue_bytes": 3000, "drops": 0, "impair_drops": 0})
		}
	}
	return map[string]any{"lab": f.spec.Lab, "ports": ports, "nodes": f.nodes, "emulator": map[string]any{"uptime_ns": int64(up), "cpu": 0.1,
		"cpu_time_ns": int64(up) / 10, "veth_rtt_ns": 30000, "lateness": map[string]any{"p50_ns": 2000, "p99_ns": 9000}}}, nil
}

func (f *fake) Set(_ context.Context, endpoint, direction string, c settings.Change) (any, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if endpoint != "h1:eth0" && endpoint != "sw1:p1" && endpoint != "h2:eth0" && endpoint != "sw1:p2" {
		return nil, errors.New("no link has endpoint " + endpoint)
	}
	f.changes = append(f.changes, endpoint+" "+direction+" "+c.String())
	return map[string]any{"directions": []string{endpoint + " " + c.String()}}, nil
}

func (f *fake) snapshots() int { f.mu.Lock(); defer f.mu.Unlock(); return f.stats }

func sw100() topologies.View {
	lab, err := labfile.Parse("sw100.yaml", []byte(labtest.Lab("two-hosts-switch", "sw100")))
	if err != nil {
		panic(err)
	}
	return lab.View()
}

// serve starts a view of a fake sw100 on a loopback port.
func serve(t *testing.T) (*Server, *fake, string) {
	t.Helper()
	ln, err := webguard.Listen("127.0.0.1:0", false)
	if err != nil {
		t.Fatal(err)
	}
	f := &fake{spec: sw100()}
	s := New(ln, f)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Serve(ctx, ln); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return s, f, ln.Addr().String()
}

// do sends a request to addr with the given Host, Origin and token.
func do(t *testing.T, method, addr, path, host, origin, token, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, "http://"+addr+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	if token != "" {
		req.Header.Set(TokenHeader, token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// Only requests addressed to the listening address are answered: a name
// that resolves to it (DNS rebinding) is refused.
func TestHostChecked(t *testing.T) {
	_, _, addr := serve(t)
	_, port, _ := net.SplitHostPort(addr)
	for host, want := range map[string]int{
		"":                          200, // the address itself
		"localhost:" + port:         200,
		"LOCALHOST:" + port:         200,
		"evil.example:" + port:      403,
		"127.0.0.1:1":               403,
		"127.0.0.1.nip.io:" + port:  403,
		"localhost.evil.example:80": 403,
	} {
		if code, body := do(t, "GET", addr, "/api/topology", host, "", "", ""); code != want {
			t.Errorf("Host %q: %d %s, want %d", host, code, body, want)
		}
	}
}

// Another site's page is refused, even with a right Host.
func TestOriginChecked(t *testing.T) {
	s, f, addr := serve(t)
	if code, _ := do(t, "GET", addr, "/api/stats", "", "http://"+addr, "", ""); code != 200 {
		t.Errorf("own origin: %d", code)
	}
	for _, o := range []string{"http://evil.example", "https://" + addr, "null", "http://" + addr + ".evil.example"} {
		if code, _ := do(t, "POST", addr, "/api/set", "", o, s.Token, `{"endpoint":"h1:eth0","settings":"delay=1ms"}`); code != 403 {
			t.Errorf("origin %q: %d, want 403", o, code)
		}
	}
	if len(f.changes) != 0 {
		t.Errorf("a refused request changed the lab: %v", f.changes)
	}
}

// Changes need the token; without it the view is read-only.
func TestSetNeedsToken(t *testing.T) {
	s, f, addr := serve(t)
	if len(s.Token) != 32 {
		t.Fatalf("token %q: want 128 random bits in hex", s.Token)
	}
	body := `{"endpoint":"h1:eth0","direction":"h1:eth0","settings":"delay=20ms"}`
	for _, tok := range []string{"", "wrong", s.Token[:31]} {
		code, msg := do(t, "POST", addr, "/api/set", "", "", tok, body)
		if code != 403 || !strings.Contains(msg, "token") {
			t.Errorf("token %q: %d %s, want 403 naming the token", tok, code, msg)
		}
	}
	if len(f.changes) != 0 {
		t.Fatalf("changed without the token: %v", f.changes)
	}
	if code, msg := do(t, "GET", addr, "/api/stats", "", "", "", ""); code != 200 {
		t.Errorf("read without the token: %d %s", code, msg)
	}
	code, msg := do(t, "POST", addr, "/api/set", "", "", s.Token, body)
	if code != 200 || len(f.changes) != 1 || f.changes[0] != "h1:eth0 h1:eth0 delay=20ms" {
		t.Fatalf("with the token: %d %s, changes %q", code, msg, f.changes)
	}
	if code, _ := do(t, "GET", addr, "/api/set?endpoint=h1:eth0&settings=delay=1ms", "", "", s.Token, ""); code == 200 || len(f.changes) != 1 {
		t.Errorf("GET set: %d, changes %q: only POST changes", code, f.changes)
	}
}

// A bad change gets a clear error and reaches nothing.
func TestSetBadChange(t *testing.T) {
	s, f, addr := serve(t)
	for body, want := range map[string]string{
		`{"endpoint":"h1:eth0","settings":"delay=soon"}`: "bad delay",
		`{"endpoint":"h1:eth0","settings":""}`:           "nothing to change",
		`{"endpoint":"h9:eth0","settings":"delay=1ms"}`:  "no link has endpoint",
		`not json`: "bad change",
	} {
		code, msg := do(t, "POST", addr, "/api/set", "", "", s.Token, body)
		if code != 400 || !strings.Contains(msg, want) {
			t.Errorf("%s: %d %s, want 400 %q", body, code, msg, want)
		}
	}
	if code, msg := do(t, "POST", addr, "/api/set", "", "", s.Token, `{"endpoint":"h2:eth0","reset":true}`); code != 200 || f.changes[0] != "h2:eth0  --reset" {
		t.Errorf("reset: %d %s %q", code, msg, f.changes)
	}
}

// The page's change is held to the lab file's ranges, as atmlab set's
// words are: before, loss=NaN, delay=1000000h, limit=2000000000 and
// buffer=1000GiB reached the lab.
func TestSetRefusesOutOfRange(t *testing.T) {
	s, f, addr := serve(t)
	for settings, want := range map[string]string{
		"loss=NaN":         `bad loss \"NaN\": a percentage from 0% to 100%, such as 0.1%`,
		"loss=NaN%":        `bad loss \"NaN%\": a percentage from 0% to 100%`,
		"delay=1000000h":   `bad delay \"1000000h\": a duration in Go syntax from 0 to 24h`,
		"jitter=2000000h":  `bad jitter \"2000000h\": a duration in Go syntax from 0 to 24h`,
		"limit=2000000000": `bad limit \"2000000000\": a whole number from 1 to 1048576`,
		"buffer=1000GiB":   `bad buffer \"1000GiB\": a size with B, KiB, MiB or GiB from 1518B to 1GiB`,
		"rate=-5":          `bad rate \"-5\": a bit rate (k, M, G or a PHY name) from 1k to 1000G`,
	} {
		body := `{"endpoint":"h1:eth0","settings":"delay=1ms ` + settings + `"}`
		code, msg := do(t, "POST", addr, "/api/set", "", "", s.Token, body)
		if code != 400 || !strings.Contains(msg, want) {
			t.Errorf("%s: %d %s, want 400 %s", settings, code, msg, want)
		}
	}
	if len(f.changes) != 0 {
		t.Fatalf("refused changes reached the lab: %q", f.changes)
	}
}

// However many pages poll, the lab is asked at most once an interval, and
// never with no page open.
func TestSnapshotsBounded(t *testing.T) {
	s, f, addr := serve(t)
	s.Interval = time.Hour
	time.Sleep(50 * time.Millisecond)
	if n := f.snapshots(); n != 0 {
		t.Fatalf("%d snapshots with no page open", n)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 10 {
				do(t, "GET", addr, "/api/stats", "", "", "", "")
			}
		}()
	}
	wg.Wait()
	if n := f.snapshots(); n != 1 {
		t.Fatalf("80 polls took %d snapshots within one interval, want 1", n)
	}
	s.Interval = 0
	do(t, "GET", addr, "/api/stats", "", "", "", "")
	if n := f.snapshots(); n != 2 {
		t.Fatalf("a poll after the interval: %d snapshots, want 2", n)
	}
}

func TestStatsAndRun(t *testing.T) {
	s, _, addr := serve(t)
	p := labrun.Point{Experiment: "streams", Test: "TCP_STREAM", Size: 1024}
	s.Watch(labrun.Progress{Variant: "base", Done: 0, Total: 2, ETA: -1, Point: &p})
	s.Watch(labrun.Progress{Variant: "base", Done: 1, Total: 2, ETA: 3 * time.Second, Point: &p,
		Result: &labrun.Record{Point: p, Result: perf.Result{ThroughputBps: 94e6}, Ceiling: 94.9e6}})
	code, body := do(t, "GET", addr, "/api/stats", "", "", "", "")
	if code != 200 {
		t.Fatal(code, body)
	}
	var snap struct {
		Up    bool `json:"up"`
		Stats struct {
			Lab   string           `json:"lab"`
			Ports []map[string]any `json:"ports"`
		} `json:"stats"`
		Run runState `json:"run"`
	}
	if err := json.Unmarshal([]byte(body), &snap); err != nil {
		t.Fatal(err)
	}
	if !snap.Up || snap.Stats.Lab != "sw100" || len(snap.Stats.Ports) != 4 {
		t.Errorf("stats %+v", snap)
	}
	r := snap.Run
	if r.Progress.Done != 1 || r.Progress.Total != 2 || r.Progress.ETA != 3*time.Second || r.Progress.Point.Size != 1024 || r.Progress.Result != nil ||
		len(r.Results) != 1 || r.Results[0].Throughput != 94e6 || r.Results[0].Ceiling != 94.9e6 || r.Results[0].Test != "TCP_STREAM" {
		t.Errorf("run %+v", r)
	}
	s.SetSource(nil)
	if code, _ := do(t, "GET", addr, "/api/topology", "", "", "", ""); code != 503 {
		t.Errorf("topology with no lab: %d, want 503", code)
	}
	s.Interval = 0
	if _, body := do(t, "GET", addr, "/api/stats", "", "", "", ""); !strings.Contains(body, `"up":false`) || !strings.Contains(body, `"results"`) {
		t.Errorf("stats with no lab: %s", body)
	}
}

// The page and its script are embedded and load nothing from elsewhere.
func TestAssetsOffline(t *testing.T) {
	_, _, addr := serve(t)
	code, body := do(t, "GET", addr, "/", "", "", "", "")
	if code != 200 || !strings.Contains(body, `src="app.js"`) {
		t.Fatalf("index: %d %.200s", code, body)
	}
	url := regexp.MustCompile(`(?i)(https?:)?//[a-z0-9.-]+\.[a-z]{2,}`)
	fs.WalkDir(assets, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, _ := fs.ReadFile(assets, path)
		for _, m := range url.FindAllString(string(b), -1) {
			if m != "http://www.w3.org" { // the SVG namespace, a name, not a fetch
				t.Errorf("%s refers to %s: assets must be embedded", path, m)
			}
		}
		return nil
	})
	for _, p := range []string{"/app.js", "/style.css"} {
		if code, _ := do(t, "GET", addr, p, "", "", "", ""); code != 200 {
			t.Errorf("%s: %d", p, code)
		}
	}
}

// The sawtooth explorer is mounted at /explorer/, behind the same Host
// check, with a lab run's results folder once given.
func TestExplorerMounted(t *testing.T) {
	s, _, addr := serve(t)
	if code, body := do(t, "GET", addr, "/explorer/", "", "", "", ""); code != 200 || !strings.Contains(body, "explorer.js") {
		t.Fatalf("explorer page: %d %.200s", code, body)
	}
	code, body := do(t, "GET", addr, "/explorer/figures?size=1472", "", "", "", "")
	if code != 200 || !strings.Contains(body, `"rows"`) {
		t.Fatalf("explorer figures: %d %.300s", code, body)
	}
	if code, _ := do(t, "GET", addr, "/explorer/figures?size=1472", "evil.example", "", "", ""); code != 403 {
		t.Errorf("explorer with a foreign Host: %d, want 403", code)
	}
	s.ExplorerResults(t.TempDir()) // an empty folder: a lab run before its first point
	if code, body := do(t, "GET", addr, "/explorer/figures?size=1472", "", "", "", ""); code != 200 {
		t.Errorf("explorer over an empty results folder: %d %.300s", code, body)
	}
}
