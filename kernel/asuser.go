//go:build linux

package kernel

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Root and a user's rootless lab. The lab's control socket answers only its
// user: inside the lab's user namespace root is an unmapped uid (65534), as
// is every other user, so the socket cannot tell root apart. Root reaches
// the lab as its user instead, running the same command again with the
// user's credentials, which is what root may do anyway.

// UserLab returns the normal user whose rootless lab is named lab, when
// this is root's process and root has no lab of that name: a state
// directory /tmp/atmlab-UID of that user's own (a directory, not a link,
// mode 0700) that holds the lab's control socket or holder record. ok is
// false when there is none; several users with a lab of that name are an
// error that says how to pick one.
func UserLab(lab string) (uid, gid int, ok bool, err error) {
	if os.Geteuid() != 0 || InHolder() {
		return 0, 0, false, nil
	}
	if _, err := os.Lstat(filepath.Join("/run/atmlab", lab+".sock")); err == nil {
		return 0, 0, false, nil
	}
	if entries, _ := os.ReadDir(NetnsDir); slices.ContainsFunc(entries, func(e os.DirEntry) bool { return strings.HasPrefix(e.Name(), lab+"-") }) {
		return 0, 0, false, nil // root's own, or what one left
	}
	dirs, _ := filepath.Glob("/tmp/atmlab-*")
	var uids []string
	for _, dir := range dirs {
		u, err := strconv.Atoi(strings.TrimPrefix(dir, "/tmp/atmlab-"))
		if err != nil || u <= 0 {
			continue
		}
		var st unix.Stat_t
		if unix.Lstat(dir, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR || int(st.Uid) != u || st.Mode&0o077 != 0 {
			continue
		}
		for _, f := range []string{lab + ".sock", lab + ".pid"} {
			if _, err := os.Lstat(filepath.Join(dir, f)); err == nil {
				if !ok {
					uid, gid, ok = u, int(st.Gid), true
				}
				uids = append(uids, strconv.Itoa(u))
				break
			}
		}
	}
	if len(uids) > 1 {
		return 0, 0, false, fmt.Errorf("users %s each have a lab named %s: run the command as the one you mean, such as sudo -u '#%s' atmlab %s",
			strings.Join(uids, ", "), lab, uids[0], strings.Join(os.Args[1:], " "))
	}
	return uid, gid, ok, nil
}

// AsUser runs this command again, with the same arguments and standard
// streams, as user uid with group gid and no supplementary groups, and
// returns its exit code.
func AsUser(uid, gid int) (int, error) {
	self, err := os.Executable()
	if err != nil {
		return 0, err
	}
	cmd := exec.Command(self, os.Args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}}
	err = cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ee.ExitCode() >= 0 {
			return ee.ExitCode(), nil
		}
		return 1, nil // ended by a signal: it said what it could
	}
	if err != nil {
		return 0, fmt.Errorf("running as uid %d, who runs the lab: %w", uid, err)
	}
	return 0, nil
}
