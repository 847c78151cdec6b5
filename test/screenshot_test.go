//go:build integration

package test

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/atmlab/atmlab/internal/headless"
)

// TestLiveViewScreenshot takes docs/live-view.md's picture of the live view
// during the praktikum demo's quick run, once the page shows its link
// colours' legend, directions named by their ends and its header in plain
// words: ATMLAB_SCREENSHOT=../docs/live-view.png.
func TestLiveViewScreenshot(t *testing.T) {
	out := os.Getenv("ATMLAB_SCREENSHOT")
	if out == "" {
		t.Skip("takes docs/live-view.png: run with ATMLAB_SCREENSHOT=PATH")
	}
	requireRoot(t, "iperf3")
	cmd := exec.Command(atmlab, "lab", "run", "../topologies/praktikum.yaml", "--quick", "--out", t.TempDir(), "--web", "127.0.0.1:0")
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Signal(syscall.SIGINT); cmd.Wait() }()
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Split(scanLinesOrReturns)
		for sc.Scan() {
			if _, u, ok := strings.Cut(sc.Text(), "live view: "); ok {
				urls <- strings.Fields(u)[0]
			}
		}
	}()
	var url string
	select {
	case url = <-urls:
	case <-time.After(30 * time.Second):
		t.Fatal("lab run printed no live view URL")
	}
	ctx := headless.New(t)
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	err := chromedp.Do(ctx, chromedp.EmulateViewport(1400, 860), chromedp.Navigate(url))
	if err == nil {
		// Task II's hub path being measured, two of its points landed
		_, err = chromedp.Run(ctx, chromedp.Poll[bool](`document.getElementById('run-point').textContent.startsWith('task2-hub ') && document.querySelectorAll('#run-chart circle').length >= 2`))
	}
	if err == nil {
		err = chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-node="hub1"]`)), chromedp.Sleep(3*time.Second))
	}
	if err == nil {
		// what the picture must show: the links' colours explained, each
		// direction named by its ends, the header in plain words
		_, err = chromedp.Run(ctx, chromedp.Poll[bool](`document.getElementById('link-legend').textContent.includes('over 90 %') &&
			[...document.querySelectorAll('text.live tspan')].some(e => e.textContent.startsWith('a1 → hub1 ')) &&
			document.getElementById('emu').textContent.includes('(99th percentile)')`, chromedp.WithPollingTimeout(10*time.Second)))
	}
	var png []byte
	if err == nil {
		png, err = chromedp.Run(ctx, chromedp.FullScreenshot(100))
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// scanLinesOrReturns splits at newlines and at the carriage returns of
// the progress line.
func scanLinesOrReturns(data []byte, atEOF bool) (int, []byte, error) {
	for i, b := range data {
		if b == '\n' || b == '\r' {
			return i + 1, data[:i], nil
		}
	}
	if atEOF && len(data) > 0 {
		return len(data), data, nil
	}
	return 0, nil, nil
}
