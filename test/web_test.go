//go:build integration

package test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/atmlab/atmlab/control"
	"github.com/atmlab/atmlab/internal/headless"
	"github.com/atmlab/atmlab/topologies"
)

// liveView returns the URL (with its token) that up --web printed.
func (r *running) liveView() string {
	for _, l := range r.lines {
		if _, url, ok := strings.Cut(l, "live view: "); ok {
			return strings.Fields(url)[0]
		}
	}
	r.t.Fatalf("up --web printed no live view URL: %q", r.lines)
	return ""
}

// pageRate reads the rate the page shows for link 0 (h1:eth0 -> sw1:p1),
// bit/s, after the page's next poll.
func pageRate(t *testing.T, ctx context.Context) float64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	polls, err := chromedp.Run(ctx, chromedp.Evaluate[int](`Number(document.body.dataset.polls || 0)`))
	if err == nil {
		_, err = chromedp.Run(ctx, chromedp.Poll[bool](`Number(document.body.dataset.polls || 0) > `+strconv.Itoa(polls+1)))
	}
	var v chromedp.AttributeResult
	if err == nil {
		v, err = chromedp.Run(ctx, chromedp.AttributeValue(chromedp.CSS(`#link-0`), "data-ab"))
	}
	if err != nil {
		t.Fatal(err)
	}
	f, _ := strconv.ParseFloat(v.Value, 64)
	return f
}

// TestWebLive opens a running 100M lab's live view in headless chromium:
// the rate it shows for h1's link moves from nothing to the stream's while
// iperf3 runs through it; a delay set on the page raises ping's RTT by
// twice the change within 0.5 ms.
func TestWebLive(t *testing.T) {
	requireRoot(t, "iperf3", "ping")
	r := up(t, setLab, "--web", "127.0.0.1:0")
	url := r.liveView()
	ctx := headless.New(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS(`[data-node="sw1"]`))); err != nil {
		t.Fatal(err)
	}
	r.exec("h1", "ping", "-c", "1", "-W", "2", "10.0.0.2")
	if idle := pageRate(t, ctx); idle > 1e6 {
		t.Errorf("idle link shows %.0f bit/s", idle)
	}
	done := make(chan iperf, 1)
	go func() { done <- r.runIperfNoFatal("h1", "h2", "10.0.0.2", 5301, 4) }()
	time.Sleep(2 * time.Second) // the page shows the rate of the last second: read it mid-stream
	busy := pageRate(t, ctx)
	it := <-done
	if it.err != nil {
		t.Fatal(it.err)
	}
	stream := steady(t, it.Received, 1)
	t.Logf("page: h1:eth0 -> sw1:p1 at %.2f Mbit/s of frames while iperf3 received %.2f Mbit/s of TCP payload", busy/1e6, stream/1e6)
	// Frames carry 1514 bytes for 1448 of payload: the page's rate is the
	// stream's times 1514/1448, within 5 % (one 250 ms sample).
	if want := stream * 1514 / 1448; !within(busy, want, 0.05) {
		t.Errorf("page shows %.2f Mbit/s during the stream, want %.2f within 5%%", busy/1e6, want/1e6)
	}

	base := r.pingQuick(20)
	status, text := setOnPage(t, ctx, "delay=10ms")
	if status != "200" {
		t.Fatalf("set on the page: %s %q", status, text)
	}
	slow := r.pingQuick(20)
	t.Logf("ping RTT median %.3f ms, %.3f ms after delay=10ms on the page (%q)", base, slow, text)
	if d := slow - base; math.Abs(d-20) > 0.5 {
		t.Errorf("RTT rose by %.3f ms after delay=10ms both ways, want 20 within 0.5", d)
	}
}

// setOnPage applies settings to link 0, both directions, from the page's
// form, and returns the answer's status and text.
func setOnPage(t *testing.T, ctx context.Context, settings string) (status, text string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`#link-0 .hit`)),
		chromedp.SendKeys(chromedp.CSS(`#set-settings`), settings),
		chromedp.Click(chromedp.CSS(`#set-apply`)),
	)
	if err == nil {
		status, err = chromedp.Run(ctx, chromedp.Poll[string](`document.getElementById('set-result').dataset.status`))
	}
	if err == nil {
		text, err = chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`#set-result`)))
	}
	if err != nil {
		t.Fatal(err)
	}
	return status, text
}

// startURL starts an atmlab command and returns the live view URL it
// prints (on stdout or stderr); cleanup interrupts it.
func startURL(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(atmlab, args...)
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Signal(syscall.SIGINT); cmd.Wait(); pw.Close() })
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			if _, u, ok := strings.Cut(sc.Text(), "live view: "); ok {
				urls <- strings.Fields(u)[0]
			}
		}
	}()
	select {
	case u := <-urls:
		return u
	case <-time.After(30 * time.Second):
		t.Fatalf("atmlab %s printed no live view URL", strings.Join(args, " "))
		return ""
	}
}

// getJSON reads a live view's API path into v.
func getJSON(t *testing.T, url, path string, v any) {
	t.Helper()
	resp, err := http.Get(strings.Replace(url, "/?token=", path+"?token=", 1))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET %s: %d %s", path, resp.StatusCode, b)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
}

// TestWebAttach: atmlab web NAME attaches to a running lab through its
// control socket: the topology, the counters, and a change with the token.
func TestWebAttach(t *testing.T) {
	requireRoot(t, "ping")
	r := up(t, setLab)
	url := startURL(t, "web", r.name, "--listen", "127.0.0.1:0")
	var spec topologies.View
	getJSON(t, url, "/api/topology", &spec)
	if spec.Lab != r.name || len(spec.Nodes) != 3 || len(spec.Links) != 2 {
		t.Fatalf("topology %+v", spec)
	}
	r.exec("h1", "ping", "-c", "3", "-i", "0.2", "-W", "2", "10.0.0.2")
	var snap struct {
		Stats control.Stats `json:"stats"`
	}
	getJSON(t, url, "/api/stats", &snap)
	if p := port(t, snap.Stats, "h1:eth0"); p.Tx < 3 {
		t.Errorf("h1:eth0 sent %d frames after 3 pings, per the view", p.Tx)
	}
	_, token, _ := strings.Cut(url, "token=")
	req, _ := http.NewRequest("POST", strings.Replace(url, "/?token="+token, "/api/set", 1), strings.NewReader(`{"endpoint":"h1:eth0","settings":"delay=5ms"}`))
	req.Header.Set("X-Atmlab-Token", token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("set through the attached view: %d", resp.StatusCode)
	}
	if st := r.stats(); len(st.Changes) != 1 || st.Changes[0].Change != "delay=5ms" {
		t.Errorf("the lab's changes after the view's set: %+v", st.Changes)
	}
}

// TestWebLabRun: lab run --web shows the point being measured and each
// result as it lands (the first of two: the view ends with the run).
func TestWebLabRun(t *testing.T) {
	requireRoot(t)
	file := filepath.Join(t.TempDir(), "lab.yaml")
	lab := strings.ReplaceAll(setLab, "NAME", labName()) + `experiments:
  - {name: s, from: h1, to: h2, tests: [UDP_STREAM], sizes: [1472], repetitions: 2, duration: 2s}
`
	if err := os.WriteFile(file, []byte(lab), 0o644); err != nil {
		t.Fatal(err)
	}
	url := startURL(t, "lab", "run", file, "--out", t.TempDir(), "--web", "127.0.0.1:0")
	var snap struct {
		Up  bool `json:"up"`
		Run struct {
			Progress struct {
				Done, Total int
				Point       *struct{ Experiment string }
			} `json:"progress"`
			Results []struct {
				Throughput float64 `json:"throughput_bps"`
				Ceiling    float64 `json:"ceiling_bps"`
			} `json:"results"`
		} `json:"run"`
	}
	sawPoint := false
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(300 * time.Millisecond) {
		getJSON(t, url, "/api/stats", &snap)
		if snap.Run.Progress.Point != nil && snap.Run.Progress.Done == 0 && snap.Up {
			sawPoint = true
		}
		if len(snap.Run.Results) > 0 {
			break
		}
	}
	res := snap.Run.Results
	if !sawPoint || len(res) != 1 || snap.Run.Progress.Total != 2 || res[0].Ceiling == 0 || res[0].Throughput <= 0.9*res[0].Ceiling || res[0].Throughput > res[0].Ceiling*1.001 {
		t.Fatalf("saw the point measured: %v; results %+v (total %d), want the first of two UDP results, at its ceiling", sawPoint, res, snap.Run.Progress.Total)
	}
	t.Logf("lab run's result on the view: %.2f Mbit/s of a %.2f ceiling", res[0].Throughput/1e6, res[0].Ceiling/1e6)
}
