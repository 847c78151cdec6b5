package web

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
)

// Listen binds the live view's address (CheckAddr).
func Listen(addr string, public bool) (net.Listener, error) {
	a, err := CheckAddr(addr, public)
	if err != nil {
		return nil, err
	}
	return net.Listen("tcp", a)
}

// CheckAddr returns the address to bind for addr. It refuses an address
// other hosts can reach (not loopback, or every interface) unless public
// is set: the page shows the lab to whoever opens it.
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
