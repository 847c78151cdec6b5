package webguard

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestListenLoopbackOnly(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "[::]:0", "192.0.2.1:0"} {
		ln, err := Listen(addr, false)
		if err == nil {
			ln.Close()
			t.Errorf("Listen(%q) served a non-loopback address without public", addr)
		} else if !strings.Contains(err.Error(), "--web-public") {
			t.Errorf("Listen(%q): %v, want the fix (--web-public)", addr, err)
		}
	}
	if _, err := Listen("example.com:8080", false); err == nil || !strings.Contains(err.Error(), "IP address") {
		t.Errorf("a host name: %v, want a request for an IP address", err)
	}
	if _, err := Listen("127.0.0.1", false); err == nil || !strings.Contains(err.Error(), "host:port") {
		t.Errorf("no port: %v", err)
	}
	for _, addr := range []string{"127.0.0.1:0", "localhost:0"} {
		ln, err := Listen(addr, false)
		if err != nil {
			t.Errorf("Listen(%q): %v", addr, err)
			continue
		}
		if !ln.Addr().(*net.TCPAddr).IP.IsLoopback() {
			t.Errorf("Listen(%q) bound %v", addr, ln.Addr())
		}
		ln.Close()
	}
	ln, err := Listen("0.0.0.0:0", true)
	if err != nil {
		t.Fatalf("public: %v", err)
	}
	ln.Close()
}

// The guard answers the listening address's own names only, and pages of
// its own origin: a loopback listener's address and localhost; for every
// interface, each of the machine's addresses too.
func TestGuard(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})
	check := func(g *Guard, host, origin string) int {
		r := httptest.NewRequest("GET", "/", nil)
		r.Host = host
		if origin != "" {
			r.Header.Set("Origin", origin)
		}
		w := httptest.NewRecorder()
		g.Handler(ok).ServeHTTP(w, r)
		return w.Code
	}
	lo := New(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080})
	for _, tc := range []struct {
		host, origin string
		code         int
	}{
		{"127.0.0.1:8080", "", 200},
		{"LOCALHOST:8080", "http://localhost:8080", 200},
		{"127.0.0.1:8080", "http://127.0.0.1:8080", 200},
		{"[::1]:8080", "", 403},        // not the address listened on
		{"192.0.2.7:8080", "", 403},    // an IP literal of another machine
		{"evil.example:8080", "", 403}, // DNS rebinding
		{"127.0.0.1:9090", "", 403},    // another port
		{"127.0.0.1", "", 403},         // no port
		{"127.0.0.1:8080", "http://evil.example", 403},
		{"127.0.0.1:8080", "https://127.0.0.1:8080", 403},
		{"127.0.0.1:8080", "null", 403},
	} {
		if code := check(lo, tc.host, tc.origin); code != tc.code {
			t.Errorf("loopback listener: host %q origin %q: %d, want %d", tc.host, tc.origin, code, tc.code)
		}
	}
	all := New(&net.TCPAddr{IP: net.IPv4zero, Port: 8080})
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok {
			if code := check(all, net.JoinHostPort(n.IP.String(), "8080"), ""); code != 200 {
				t.Errorf("every interface: the machine's address %s: %d", n.IP, code)
			}
		}
	}
	if code := check(all, "evil.example:8080", ""); code != 403 {
		t.Errorf("every interface: a foreign name: %d", code)
	}
	r := httptest.NewRequest("GET", "/", nil)
	r.Host = "evil.example:8080"
	w := httptest.NewRecorder()
	lo.Handler(ok).ServeHTTP(w, r)
	if !strings.Contains(w.Body.String(), "the address atmlab printed") {
		t.Errorf("refusal %q: want the fix", w.Body.String())
	}
}
