package web

// A headless Chromium for the browser tests. Helper explorer's shared
// launcher (internal/headless) replaces this file when it lands on main.

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// chromium is Debian's browser; under CI its absence fails the test.
const chromium = "/usr/bin/chromium"

// browser starts a fresh headless Chromium and returns a tab's context.
func browser(t *testing.T) context.Context {
	t.Helper()
	if _, err := exec.LookPath(chromium); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("needs %s: apt-get install -y chromium", chromium)
		}
		t.Skipf("needs %s: apt-get install -y chromium", chromium)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium), chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("headless", true), chromedp.Flag("no-sandbox", true), chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true), chromedp.Flag("disable-quic", true),
		chromedp.WindowSize(1400, 900),
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelC := chromedp.NewContext(actx)
	ctx, cancelT := context.WithTimeout(ctx, 60*time.Second)
	t.Cleanup(func() { cancelT(); cancelC(); cancelA() })
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start %s: %v", chromium, err)
	}
	return ctx
}
