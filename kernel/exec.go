//go:build linux

package kernel

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"

	"github.com/vishvananda/netns"

	"github.com/atmlab/atmlab/topologies/labfile"
)

// Exec replaces the current process with argv running inside the lab's
// host node, as `ip netns exec` does. It returns only on failure.
func Exec(lab, node string, argv []string) error {
	if err := labfile.CheckLabName(lab); err != nil {
		return err
	}
	if err := labfile.CheckNodeName(node); err != nil {
		return err
	}
	if NeedsHolder() {
		if ok, err := execInHolder(lab, node, argv); ok {
			return err
		}
	}
	name := lab + "-" + node
	if owner(name) != OwnerMark(lab) {
		// A normal user may not enter (or read the mark of) a namespace
		// of root's: say so, as stats does, rather than that it is missing.
		if _, err := os.Lstat(filepath.Join(NetnsDir, name)); err == nil && NeedsHolder() {
			return fmt.Errorf("permission denied on namespace %s: lab %s is root's (or another user's); rerun with sudo", name, lab)
		}
		return fmt.Errorf("no host %s in lab %s (namespace %s not found): is the lab up, and is %s a host?", node, lab, name, node)
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return fmt.Errorf("%s: command not found", argv[0])
	}
	runtime.LockOSThread() // never unlocked: the thread is about to become the new program
	ns, err := netns.GetFromPath(filepath.Join(NetnsDir, name))
	if err != nil {
		return fmt.Errorf("open namespace %s: %w", name, err)
	}
	if err := netns.Set(ns); err != nil {
		return fmt.Errorf("enter namespace %s: %w", name, err)
	}
	useHosts(name)
	return fmt.Errorf("exec %s: %w", argv[0], syscall.Exec(path, argv, os.Environ()))
}
