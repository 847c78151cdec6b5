//go:build linux

package kernel

// Each host's /etc/hosts: the lab's node names, so that `ping h2` works
// inside a host. `ip netns exec NS` bind-mounts /etc/netns/NS/hosts over
// /etc/hosts in a private mount namespace; Up writes that file for each
// host and Exec (atmlab exec) does the same bind mount, so both ways of
// entering a host see the names. Remove deletes the file with the
// namespace, and only a file that carries atmlab's first line.

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/atmlab/atmlab/topologies"
)

// EtcNetns is where iproute2 keeps a namespace's own /etc files.
var EtcNetns = "/etc/netns"

// hostsMark begins every hosts file atmlab writes: only such a file is
// ever removed.
const hostsMark = "# atmlab lab "

// HostsPath is the hosts file of namespace ns.
func HostsPath(ns string) string { return filepath.Join(EtcNetns, ns, "hosts") }

// hostsFile is the hosts file of every host of lab: localhost, then each
// node's addresses, the first named after the node and every address
// also NODE-IFACE.
func hostsFile(lab *topologies.Lab) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s%s: its nodes' names, removed with the lab\n", hostsMark, lab.Name)
	b.WriteString("127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n")
	for _, n := range lab.Nodes {
		first := true
		for _, i := range n.Interfaces {
			if !i.IPv4.IsValid() {
				continue
			}
			names := n.Name + "-" + i.Name
			if first {
				names = n.Name + " " + names
				first = false
			}
			fmt.Fprintf(&b, "%s\t%s\n", i.IPv4.Addr(), names)
		}
	}
	return b.Bytes()
}

// writeHosts writes the hosts file of lab's host namespace ns. A file
// there that atmlab did not write is left alone, and said so.
func writeHosts(lab *topologies.Lab, ns string) error {
	p := HostsPath(ns)
	if old, err := os.ReadFile(p); err == nil && !bytes.HasPrefix(old, []byte(hostsMark)) {
		return fmt.Errorf("%s exists and is not atmlab's: left alone, so names do not resolve in %s", p, ns)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("node names do not resolve inside the hosts: %w", unwrapPath(err))
	}
	if err := os.WriteFile(p, hostsFile(lab), 0o644); err != nil {
		return fmt.Errorf("node names do not resolve inside the hosts: %w", unwrapPath(err))
	}
	return nil
}

// removeHosts deletes namespace ns's hosts file if atmlab wrote it, and
// its directory if that is then empty.
func removeHosts(ns string) error {
	p := HostsPath(ns)
	old, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !bytes.HasPrefix(old, []byte(hostsMark)) {
		return nil
	}
	if err := os.Remove(p); err != nil {
		return err
	}
	if err := os.Remove(filepath.Dir(p)); err != nil && !errors.Is(err, unix.ENOTEMPTY) && !errors.Is(err, unix.EEXIST) {
		return err
	}
	return nil
}

// useHosts gives the calling thread a private mount namespace with ns's
// hosts file over /etc/hosts, as `ip netns exec` does. Without an
// atmlab hosts file, or when the mount is refused, it does nothing.
func useHosts(ns string) {
	p := HostsPath(ns)
	old, err := os.ReadFile(p)
	if err != nil || !strings.HasPrefix(string(old), hostsMark) {
		return
	}
	if unix.Unshare(unix.CLONE_NEWNS) != nil {
		return
	}
	if unix.Mount("", "/", "none", unix.MS_SLAVE|unix.MS_REC, "") != nil {
		return
	}
	unix.Mount(p, "/etc/hosts", "none", unix.MS_BIND, "")
}

// unwrapPath drops a path error's file name, the same for every host, so
// that one note stands for them all.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", EtcNetns, pe.Err)
	}
	return err
}
