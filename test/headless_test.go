//go:build integration

package test

// A headless Chromium for the live view's tests, as web/headless_test.go's;
// helper explorer's shared launcher (internal/headless) replaces both when
// it lands on main.

import (
	"context"
	"os"
	"os/exec"
	"testing"

	"github.com/chromedp/chromedp"
)

// browser starts Debian's chromium headless with a fresh profile and
// returns a tab's context; under CI a missing chromium fails the test.
func browser(t *testing.T) context.Context {
	t.Helper()
	const path = "/usr/bin/chromium"
	if _, err := exec.LookPath(path); err != nil {
		skip := t.Skipf
		if os.Getenv("CI") != "" {
			skip = t.Fatalf
		}
		skip("needs %s: apt-get install -y chromium", path)
	}
	opts := []chromedp.ExecAllocatorOption{chromedp.ExecPath(path), chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1400, 900)}
	for _, f := range []string{"headless", "no-sandbox", "disable-gpu", "disable-background-networking", "no-first-run",
		"disable-component-update", "disable-sync", "disable-quic"} {
		opts = append(opts, chromedp.Flag(f, true))
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelC := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelC(); cancelA() })
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start %s: %v", path, err)
	}
	return ctx
}
