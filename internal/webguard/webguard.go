// Package webguard keeps a page that atmlab serves on a local port (the
// live view, the sawtooth explorer) to the people it is meant for: it binds
// only a loopback address unless told that other machines may reach it,
// and answers only requests addressed to the listening address (a name
// that resolves to it is DNS rebinding) from no other site's page.
package webguard

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
)

// Listen binds addr (CheckAddr).
func Listen(addr string, public bool) (net.Listener, error) {
	a, err := CheckAddr(addr, public)
	if err != nil {
		return nil, err
	}
	return net.Listen("tcp", a)
}

// CheckAddr returns the address to bind for addr, host:port with an IP
// address or localhost. It refuses an address other machines can reach
// (not loopback, or every interface: an empty host or 0.0.0.0) unless
// public is set: the page shows the lab to whoever opens it.
func CheckAddr(addr string, public bool) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("bad web address %q: give host:port, such as 127.0.0.1:8080", addr)
	}
	if strings.EqualFold(host, "localhost") {
		host = "127.0.0.1"
	}
	ip := net.ParseIP(host)
	switch {
	case host == "" && !public, ip != nil && !ip.IsLoopback() && !public:
		return "", fmt.Errorf("web address %s is reachable from other machines: use a loopback address such as 127.0.0.1:%s, or add --web-public (atmlab web: --public) to mean it", addr, port)
	case host != "" && ip == nil:
		return "", fmt.Errorf("bad web address %q: give an IP address, such as 127.0.0.1:8080", addr)
	}
	return net.JoinHostPort(host, port), nil
}

// Guard answers only requests whose Host, and Origin if any, name the
// listening address.
type Guard struct {
	hosts map[string]bool
}

// New returns the guard of a listener bound to a.
func New(a net.Addr) *Guard { return &Guard{hosts: allowedHosts(a)} }

// Allow reports whether r may be served; if not, it has written the
// refusal (403) to w.
func (g *Guard) Allow(w http.ResponseWriter, r *http.Request) bool {
	if !g.hosts[strings.ToLower(r.Host)] {
		http.Error(w, "refused: this page answers only requests to its own address: open it by the address atmlab printed", http.StatusForbidden)
		return false
	}
	if o := r.Header.Get("Origin"); o != "" && !g.hosts[strings.ToLower(strings.TrimPrefix(o, "http://"))] {
		http.Error(w, "refused: a page from another origin may not use this one", http.StatusForbidden)
		return false
	}
	return true
}

// Handler serves h behind the guard.
func (g *Guard) Handler(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if g.Allow(w, r) {
			h.ServeHTTP(w, r)
		}
	})
}

// allowedHosts are the Host header values that name the listening address:
// the address itself, localhost for a loopback one; for every interface,
// any IP address of the machine and its hostname. A name that resolves
// elsewhere (DNS rebinding) is not among them.
func allowedHosts(a net.Addr) map[string]bool {
	ta, ok := a.(*net.TCPAddr)
	if !ok {
		return map[string]bool{strings.ToLower(a.String()): true}
	}
	port := strconv.Itoa(ta.Port)
	hosts := map[string]bool{}
	add := func(h string) { hosts[strings.ToLower(net.JoinHostPort(h, port))] = true }
	add(ta.IP.String())
	if ta.IP.IsLoopback() {
		add("localhost")
	}
	if ta.IP.IsUnspecified() {
		if addrs, err := net.InterfaceAddrs(); err == nil {
			for _, ia := range addrs {
				if n, ok := ia.(*net.IPNet); ok {
					add(n.IP.String())
				}
			}
		}
		if h, err := os.Hostname(); err == nil {
			add(h)
		}
		add("localhost")
	}
	return hosts
}
