//go:build linux

package kernel

import (
	"os"
	"path/filepath"

	"github.com/vishvananda/netns"

	"github.com/atmlab/atmlab/netstat"
)

// hostCounters reads a host namespace's own UDP and TCP counters and its
// interfaces' receive drops.
// /proc/net follows the reading thread's namespace only through
// /proc/thread-self (/proc/self is the process's first thread).
func hostCounters(ns string) (netstat.Counters, error) {
	var c netstat.Counters
	h, err := netns.GetFromPath(filepath.Join(NetnsDir, ns))
	if err != nil {
		return c, err
	}
	defer h.Close()
	err = inNamespace(h, func() error {
		f, err := os.Open("/proc/thread-self/net/snmp")
		if err != nil {
			return err
		}
		defer f.Close()
		if c, err = netstat.Parse(f); err != nil {
			return err
		}
		dev, err := os.Open("/proc/thread-self/net/dev")
		if err != nil {
			return err
		}
		defer dev.Close()
		c.IfaceRxDrops, err = netstat.ParseDev(dev)
		return err
	})
	return c, err
}
