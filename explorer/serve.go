package explorer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/atmlab/atmlab/internal/webguard"
)

// ReadOnly refuses methods other than GET and HEAD: the explorer changes
// nothing.
func ReadOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			http.Error(w, "read-only: only GET and HEAD", http.StatusMethodNotAllowed)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// Serve serves the explorer (with the results folder dir) on l, read-only
// and behind the guard of local pages (webguard: requests to l's own
// address only), until ctx ends, and prints the page's URL to out first.
func Serve(ctx context.Context, l net.Listener, dir string, out io.Writer) error {
	srv := &http.Server{Handler: webguard.New(l.Addr()).Handler(ReadOnly(Handler(dir))), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(out, "sawtooth explorer at http://%s/ (read-only; Ctrl-C stops it)\n", l.Addr())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		shut, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		srv.Shutdown(shut)
		if err := <-done; !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	}
}

// BadInput is an address or a results folder calc --web cannot serve as
// given: the caller's mistake (a usage error on the command line).
type BadInput struct{ error }

func (BadInput) BadInput()       {}
func (e BadInput) Unwrap() error { return e.error }

// ListenAndServe checks the results folder dir (if any), listens on addr
// (a loopback address unless public) and serves the explorer there until
// ctx ends (Serve).
func ListenAndServe(ctx context.Context, addr string, public bool, dir string, out io.Writer) error {
	if dir != "" {
		if err := CheckResults(dir); err != nil {
			return BadInput{err}
		}
	}
	l, err := webguard.Listen(addr, public)
	if err != nil {
		return BadInput{err}
	}
	return Serve(ctx, l, dir, out)
}
