//go:build linux

package kernel

import (
	"bytes"
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
// directory of that user's own (a directory, not a link, mode 0700; see
// userStateDirs) that holds the lab's control socket or holder record. ok
// is false when there is none; several users with a lab of that name are
// an error that says how to pick one. dir is that state directory.
func UserLab(lab string) (uid, gid int, dir string, ok bool, err error) {
	if os.Geteuid() != 0 || InHolder() {
		return 0, 0, "", false, nil
	}
	if _, err := os.Lstat(filepath.Join("/run/atmlab", lab+".sock")); err == nil {
		return 0, 0, "", false, nil
	}
	if entries, _ := os.ReadDir(NetnsDir); slices.ContainsFunc(entries, func(e os.DirEntry) bool { return strings.HasPrefix(e.Name(), lab+"-") }) {
		return 0, 0, "", false, nil // root's own, or what one left
	}
	var uids []string
	for _, d := range userStateDirs("/run/user", "/proc") {
		for _, f := range []string{lab + ".sock", lab + ".pid"} {
			if _, err := os.Lstat(filepath.Join(d.dir, f)); err == nil {
				if !ok {
					uid, gid, dir, ok = d.uid, d.gid, d.dir, true
				}
				if u := strconv.Itoa(d.uid); !slices.Contains(uids, u) {
					uids = append(uids, u)
				}
				break
			}
		}
	}
	if len(uids) > 1 {
		return 0, 0, "", false, fmt.Errorf("users %s each have a lab named %s: run the command as the one you mean, such as sudo -u '#%s' atmlab %s",
			strings.Join(uids, ", "), lab, uids[0], strings.Join(os.Args[1:], " "))
	}
	return uid, gid, dir, ok, nil
}

// userState is a normal user's state directory as root finds it.
type userState struct {
	uid, gid int
	dir      string
}

// userStateDirs lists the state directories of normal users that root can
// find: RUNUSER/UID/atmlab of every user with a runtime directory, and the
// directory named by the holder variable of every user's process under
// PROC (a lab's holder, and what the user started in it, carry it, wherever
// StateDir chose). Each is the user's own, as StateDir requires; one that
// is not (another user's process naming a victim's directory) is left out.
func userStateDirs(runUser, proc string) []userState {
	var found []userState
	add := func(uid int, dir string) {
		var st unix.Stat_t
		if uid <= 0 || !filepath.IsAbs(dir) || !ownDir(dir, uid) || unix.Lstat(dir, &st) != nil ||
			slices.ContainsFunc(found, func(s userState) bool { return s.dir == dir }) {
			return
		}
		found = append(found, userState{uid: uid, gid: int(st.Gid), dir: dir})
	}
	runs, _ := os.ReadDir(runUser)
	for _, e := range runs {
		if u, err := strconv.Atoi(e.Name()); err == nil && ownDir(filepath.Join(runUser, e.Name()), u) {
			add(u, filepath.Join(runUser, e.Name(), "atmlab"))
		}
	}
	procs, _ := os.ReadDir(proc)
	for _, e := range procs {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		uid := procUID(filepath.Join(proc, e.Name(), "status"))
		if uid <= 0 {
			continue
		}
		env, err := os.ReadFile(filepath.Join(proc, e.Name(), "environ"))
		if err != nil {
			continue
		}
		for _, kv := range bytes.Split(env, []byte{0}) {
			if v, ok := bytes.CutPrefix(kv, []byte(holderEnv+"=")); ok {
				add(uid, string(v))
			}
		}
	}
	return found
}

// procUID returns the real uid in a /proc/PID/status file, -1 if unreadable.
func procUID(status string) int {
	b, err := os.ReadFile(status)
	if err != nil {
		return -1
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[0] == "Uid:" {
			if u, err := strconv.Atoi(f[1]); err == nil {
				return u
			}
		}
	}
	return -1
}

// AsUser runs this command again, with the same arguments and standard
// streams, as user uid with group gid and no supplementary groups, told
// that their state directory is dir (root's environment would name
// root's), and returns its exit code.
func AsUser(uid, gid int, dir string) (int, error) {
	self, err := os.Executable()
	if err != nil {
		return 0, err
	}
	cmd := exec.Command(self, os.Args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), stateEnv+"="+dir)
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
