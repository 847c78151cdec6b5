package headless

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestNew loads a page that computes in JavaScript and reads the result,
// so the browser really ran it; and checks that the flags reached Chromium.
func TestNew(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><p id=out></p><script>
document.getElementById("out").textContent = String(6*7) + " " + navigator.userAgent;
</script>`)
	}))
	defer srv.Close()
	ctx := New(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL)); err != nil {
		t.Fatal(err)
	}
	out, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("out")))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out, "42 ") {
		t.Fatalf("page text %q, want the script's 42 first", out)
	}
	if !strings.Contains(out, "HeadlessChrome") {
		t.Errorf("user agent %q: not headless", out)
	}
}

// TestFlags checks the flag list Chromium runs with here, so a change to
// it is deliberate.
func TestFlags(t *testing.T) {
	want := "--headless --no-sandbox --disable-gpu --disable-background-networking --no-first-run --disable-component-update --disable-sync --disable-quic"
	if got := strings.Join(Flags, " "); got != want {
		t.Fatalf("Flags = %q, want %q", got, want)
	}
}

// recorder is a testing.TB whose Skipf and Fatalf record the message and
// end the goroutine, as the real ones do.
type recorder struct {
	testing.TB
	skipped, failed string
}

func (r *recorder) Helper() {}
func (r *recorder) Skipf(f string, a ...any) {
	r.skipped = fmt.Sprintf(f, a...)
	runtime.Goexit()
}
func (r *recorder) Fatalf(f string, a ...any) {
	r.failed = fmt.Sprintf(f, a...)
	runtime.Goexit()
}

// TestMissing: without the browser a test skips, and under CI it fails,
// naming the package to install.
func TestMissing(t *testing.T) {
	for _, ci := range []string{"", "true"} {
		t.Setenv("CI", ci)
		r := &recorder{TB: t}
		done := make(chan struct{})
		go func() {
			defer close(done)
			newAt(r, "/nonexistent/chromium")
		}()
		<-done
		msg, other := r.skipped, r.failed
		if ci != "" {
			msg, other = r.failed, r.skipped
		}
		if !strings.Contains(msg, "apt-get install -y chromium") || other != "" {
			t.Errorf("CI=%q: skipped %q, failed %q", ci, r.skipped, r.failed)
		}
	}
}
