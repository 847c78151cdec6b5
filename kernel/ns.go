//go:build linux

// Package kernel is atmlab's only contact with the Linux kernel: network
// namespaces for hosts, TAP devices for their interfaces, addresses, routes,
// qdiscs and sysctls, the real-time event loop that moves frames between
// TAPs and the emulator, and teardown that finds what a lab left behind.
//
// Ownership: every namespace atmlab creates is named <lab>-<node> and its
// loopback carries the alias "atmlab:<lab>". Teardown removes only
// namespaces that carry that mark, so it never touches anything else, and
// works after kill -9 (TAPs vanish with the process that held them).
package kernel

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// NetnsDir is where iproute2 keeps named namespaces.
const NetnsDir = "/run/netns"

// OwnerMark is the loopback alias that marks a namespace as a lab's.
func OwnerMark(lab string) string { return "atmlab:" + lab }

// RequireRoot returns a clear error when the process cannot create
// namespaces and TAPs.
func RequireRoot() error {
	if os.Geteuid() != 0 {
		return errors.New("building a lab needs root (CAP_NET_ADMIN for namespaces and TAPs): rerun with sudo, or use `atmlab sim` for the same models in virtual time without root")
	}
	if _, err := os.Stat("/dev/net/tun"); err != nil {
		return fmt.Errorf("no /dev/net/tun: this kernel or container has no TUN/TAP support (%v)", err)
	}
	return nil
}

// inNamespace runs f on a locked OS thread switched into ns, then switches
// back. Only code that must run inside (opening a TAP, /proc/sys) uses it;
// netlink work uses handles bound to the namespace instead.
func inNamespace(ns netns.NsHandle, f func() error) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	orig, err := netns.Get()
	if err != nil {
		return fmt.Errorf("get current namespace: %w", err)
	}
	defer orig.Close()
	if err := netns.Set(ns); err != nil {
		return fmt.Errorf("enter namespace: %w", err)
	}
	ferr := f()
	if err := netns.Set(orig); err != nil {
		// The thread is in the wrong namespace: never let it run anything else.
		panic(fmt.Sprintf("atmlab: cannot return to the original namespace: %v", err))
	}
	return ferr
}

// prepareNetnsDir makes NetnsDir a shared bind mount of itself, as
// `ip netns add` does, before any namespace is mounted in it. Otherwise a
// later `ip netns add` (or another tool) mounts the directory over
// namespaces made before it, hides them, and they can no longer be removed.
func prepareNetnsDir() error {
	if err := os.MkdirAll(NetnsDir, 0o755); err != nil {
		return err
	}
	err := unix.Mount("", NetnsDir, "none", unix.MS_SHARED|unix.MS_REC, "")
	if errors.Is(err, unix.EINVAL) { // not a mount point yet
		if err = unix.Mount(NetnsDir, NetnsDir, "none", unix.MS_BIND|unix.MS_REC, ""); err == nil {
			err = unix.Mount("", NetnsDir, "none", unix.MS_SHARED|unix.MS_REC, "")
		}
	}
	if err != nil {
		return fmt.Errorf("prepare %s: %w", NetnsDir, err)
	}
	return nil
}

// createNamespace makes a named namespace, marks it as the lab's, sets its
// loopback up and turns IPv6 off (no router solicitations or DAD on the
// emulated links). The handle it returns is open only if it made the
// namespace: one that already existed (a name taken by someone else) comes
// back as netns.None() with the error, so that nothing removes it.
func createNamespace(lab, name string) (netns.NsHandle, error) {
	if err := prepareNetnsDir(); err != nil {
		return netns.None(), err
	}
	runtime.LockOSThread()
	orig, err := netns.Get()
	if err != nil {
		runtime.UnlockOSThread()
		return netns.None(), err
	}
	ns, err := netns.NewNamed(name) // switches this thread into it
	if serr := netns.Set(orig); serr != nil {
		panic(fmt.Sprintf("atmlab: cannot return to the original namespace: %v", serr))
	}
	orig.Close()
	runtime.UnlockOSThread()
	if err != nil {
		if errors.Is(err, os.ErrExist) {
			return netns.None(), fmt.Errorf("namespace %s exists and is not this lab's: atmlab leaves it alone; remove it (ip netns del %s) or rename the lab", name, name)
		}
		return netns.None(), fmt.Errorf("create namespace %s: %w", name, err)
	}
	h, err := netlink.NewHandleAt(ns)
	if err != nil {
		return ns, fmt.Errorf("netlink in %s: %w", name, err)
	}
	defer h.Close()
	lo, err := h.LinkByName("lo")
	if err == nil {
		err = h.LinkSetAlias(lo, OwnerMark(lab))
	}
	if err == nil {
		err = h.LinkSetUp(lo)
	}
	if err != nil {
		return ns, fmt.Errorf("set up loopback in %s: %w", name, err)
	}
	err = setSysctls(ns, []sysctl{
		{"net.ipv6.conf.all.disable_ipv6", "1"},
		{"net.ipv6.conf.default.disable_ipv6", "1"},
	})
	return ns, err
}

type sysctl struct{ key, value string }

// setSysctls writes net.* sysctls inside ns: /proc/sys/net shows the
// namespace of the thread that opens it.
func setSysctls(ns netns.NsHandle, kv []sysctl) error {
	return inNamespace(ns, func() error {
		for _, s := range kv {
			path := "/proc/sys/" + strings.ReplaceAll(s.key, ".", "/")
			if err := os.WriteFile(path, []byte(s.value), 0); err != nil {
				return fmt.Errorf("sysctl %s=%s: %w", s.key, s.value, err)
			}
		}
		return nil
	})
}

// Owned returns the namespaces that carry lab's mark.
func Owned(lab string) ([]string, error) {
	entries, err := os.ReadDir(NetnsDir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), lab+"-") {
			continue
		}
		if owner(e.Name()) == OwnerMark(lab) {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// owner returns the mark on a namespace's loopback, or "".
func owner(name string) string {
	ns, err := netns.GetFromPath(filepath.Join(NetnsDir, name))
	if err != nil {
		return ""
	}
	defer ns.Close()
	h, err := netlink.NewHandleAt(ns)
	if err != nil {
		return ""
	}
	defer h.Close()
	lo, err := h.LinkByName("lo")
	if err != nil {
		return ""
	}
	return lo.Attrs().Alias
}

// Remove deletes the named namespaces, first killing any process still
// inside (servers a user started with `atmlab exec`). It returns what it
// removed; call it only with namespaces from Owned or from this run.
func Remove(names []string) ([]string, error) {
	var removed []string
	var errs []error
	for _, name := range names {
		killInside(filepath.Join(NetnsDir, name))
		if err := netns.DeleteNamed(name); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, fmt.Errorf("remove namespace %s: %w", name, err))
			continue
		}
		if err := removeHosts(name); err != nil {
			errs = append(errs, fmt.Errorf("remove %s: %w", HostsPath(name), err))
		}
		removed = append(removed, name)
	}
	return removed, errors.Join(errs...)
}

// killInside sends SIGKILL to every process whose network namespace is the
// one at path, and waits up to two seconds for them to be gone.
func killInside(path string) {
	var st syscall.Stat_t
	if syscall.Stat(path, &st) != nil {
		return
	}
	inside := func() (pids []int) {
		procs, _ := os.ReadDir("/proc")
		for _, p := range procs {
			pid, err := strconv.Atoi(p.Name())
			if err != nil || pid == os.Getpid() {
				continue
			}
			var ps syscall.Stat_t
			if syscall.Stat("/proc/"+p.Name()+"/ns/net", &ps) == nil && ps.Ino == st.Ino && ps.Dev == st.Dev {
				pids = append(pids, pid)
			}
		}
		return pids
	}
	for _, pid := range inside() {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	// A killed process keeps its namespace until it has exited (a zombie
	// has no ns/net any more, so it no longer counts).
	for deadline := time.Now().Add(2 * time.Second); len(inside()) > 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
}
