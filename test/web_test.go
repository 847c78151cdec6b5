//go:build integration

package test

import (
	"context"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/atmlab/atmlab/internal/headless"
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
	time.Sleep(2 * time.Second)
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
		chromedp.Click(chromedp.CSS(`#link-0 text`)),
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
