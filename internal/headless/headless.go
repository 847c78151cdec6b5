// Package headless starts Debian's Chromium headless for tests, driven
// through chromedp, so the web pages are tested in a real browser.
//
// New skips a test when Chromium is missing, but fails it under CI (env CI
// set): CI installs chromium and must run these tests, not skip them.
package headless

import (
	"context"
	"os"
	"os/exec"
	"testing"

	"github.com/chromedp/chromedp"
)

// Path is the browser New starts: Debian's chromium package.
const Path = "/usr/bin/chromium"

// Flags are the command-line flags New gives Chromium besides a fresh
// --user-data-dir: headless, no sandbox (tests run as root), and nothing
// that reaches for the network (the machines have none).
var Flags = []string{
	"--headless", "--no-sandbox", "--disable-gpu",
	"--disable-background-networking", "--no-first-run",
	"--disable-component-update", "--disable-sync", "--disable-quic",
}

// New starts a headless Chromium with Flags and a fresh profile in a
// temporary directory and returns a chromedp context of one tab in it. The
// browser is closed and its profile removed when the test ends.
//
// The browser lives as long as the test: bound a single step with a context
// derived from the one returned (context.WithTimeout), never the first one.
func New(t testing.TB) context.Context {
	t.Helper()
	return newAt(t, Path)
}

func newAt(t testing.TB, browser string) context.Context {
	t.Helper()
	path, err := exec.LookPath(browser)
	if err != nil {
		skip := t.Skipf
		if os.Getenv("CI") != "" {
			skip = t.Fatalf
		}
		skip("needs chromium at %s: apt-get install -y chromium", browser)
		return nil
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	}
	for _, f := range Flags {
		opts = append(opts, chromedp.Flag(f[2:], true))
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, cancelBrowser := chromedp.NewContext(actx)
	// Cleanups run last-in first-out, so the browser is closed (and its
	// profile released) before t.TempDir's removal.
	t.Cleanup(func() {
		cancelBrowser()
		cancelAlloc()
	})
	// Start the browser now, so a broken install fails here, named.
	if err := chromedp.Do(bctx); err != nil {
		t.Fatalf("start %s: %v", path, err)
	}
	return bctx
}
