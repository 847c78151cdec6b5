package explorer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Guard refuses what a read-only page on a local port must not answer:
// methods other than GET and HEAD, a Host that is not an IP address or
// localhost with the listener's port (a DNS rebinding attack names the
// attacker's host), and an Origin other than the Host's own (another
// site's script).
func Guard(port string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			http.Error(w, "read-only: only GET and HEAD", http.StatusMethodNotAllowed)
			return
		}
		host, p, err := net.SplitHostPort(r.Host)
		if err != nil || p != port || (host != "localhost" && net.ParseIP(strings.Trim(host, "[]")) == nil) {
			http.Error(w, fmt.Sprintf("host %q refused: open the page by the address atmlab printed", r.Host), http.StatusMisdirectedRequest)
			return
		}
		if o := r.Header.Get("Origin"); o != "" {
			if u, err := url.Parse(o); err != nil || u.Host != r.Host {
				http.Error(w, fmt.Sprintf("origin %q refused: the page serves only itself", o), http.StatusForbidden)
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

// Listen binds addr for the standalone explorer, on loopback when addr
// names no host (":8080").
func Listen(addr string) (net.Listener, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("--web %q: want HOST:PORT, e.g. 127.0.0.1:8080", addr)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	return net.Listen("tcp", net.JoinHostPort(host, port))
}

// Serve serves the explorer (with the results folder dir) on l behind
// Guard until ctx ends, and prints the page's URL to out first.
func Serve(ctx context.Context, l net.Listener, dir string, out io.Writer) error {
	_, port, _ := net.SplitHostPort(l.Addr().String())
	srv := &http.Server{Handler: Guard(port, Handler(dir)), ReadHeaderTimeout: 10 * time.Second}
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
