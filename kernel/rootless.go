//go:build linux

package kernel

// Rootless labs. A normal user's `atmlab up` or `lab run` re-runs itself as
// a holder: a child in a new user namespace (the caller's uid and gid map to
// 0), mount namespace and network namespace of its own, root there. The
// holder mounts a private tmpfs on /run/netns and builds the lab as root
// would; the lab's namespaces exist only inside it. When the holder exits,
// by any path (kill -9 included: it dies with its parent), its mount
// namespace, the namespaces mounted in it and its TAPs go with it.
//
// The holder's control socket and pid file live in StateDir, a 0700
// directory of the user's. `stats` and `capture` connect to the socket,
// `exec` enters the holder (nsenter) and runs `atmlab exec` there, `down`
// stops the holder and kills what the user started inside it.

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"os/user"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/atmlab/atmlab/topologies"
)

// holderEnv names the holder's state directory in its environment; its
// presence (with euid 0) marks the process as a holder.
const holderEnv = "ATMLAB_HOLDER"

// stateEnv names a normal user's state directory in place of StateDir's
// choice.
const stateEnv = "ATMLAB_STATE_DIR"

// InHolder reports whether this process is a rootless lab's holder, or a
// command entered into one. The variable alone does not make a holder: a
// process of the machine's own root (the initial user namespace, whose
// uid_map maps every id to itself) never is one, so that a stray variable
// cannot make it mount over the real /run/netns.
func InHolder() bool {
	if os.Getenv(holderEnv) == "" || os.Geteuid() != 0 {
		return false
	}
	m, err := os.ReadFile("/proc/self/uid_map")
	return err == nil && !initialUserNS(string(m))
}

// initialUserNS reports whether a uid_map is the initial user namespace's.
func initialUserNS(uidMap string) bool {
	return slices.Equal(strings.Fields(uidMap), []string{"0", "0", "4294967295"})
}

// NeedsHolder reports whether building a lab here needs a holder: the user
// is not root and is not inside one already.
func NeedsHolder() bool { return os.Geteuid() != 0 && !InHolder() }

// StateDir is where a normal user's labs keep their control sockets, pid
// files and locks: a directory only the user can make, so that no other
// user can take its place first (as one could take /tmp/atmlab-UID):
//
//   - $XDG_RUNTIME_DIR/atmlab, when the variable names a directory of the
//     user's (mode 0700, not a link), as pam_systemd sets it;
//   - else /run/user/UID/atmlab when that is the user's, for shells that
//     lack the variable (su, sudo -u, cron) on a machine that has it;
//   - else $XDG_CACHE_HOME/atmlab/run, or ~/.cache/atmlab/run: in the
//     user's home, which they can always recreate.
//
// "" when none can be named (no runtime directory and no home); making it
// (makeStateDir) then says how to give one. ATMLAB_STATE_DIR, when set,
// names it instead: root sets it when it runs a command as the user whose
// lab it found (AsUser), since its own environment names root's places.
func StateDir() string {
	if InHolder() {
		return os.Getenv(holderEnv)
	}
	if d := os.Getenv(stateEnv); filepath.IsAbs(d) {
		return d
	}
	return chooseStateDir(os.Getuid(), os.Getenv, "/run/user", homeOf)
}

// chooseStateDir is StateDir for user uid, reading the environment with
// getenv; runUser is where the machine keeps users' runtime directories
// (/run/user) and home returns the user's home from the account database.
func chooseStateDir(uid int, getenv func(string) string, runUser string, home func(uid int) string) string {
	if d := getenv("XDG_RUNTIME_DIR"); filepath.IsAbs(d) && ownDir(d, uid) {
		return filepath.Join(d, "atmlab")
	}
	if d := filepath.Join(runUser, strconv.Itoa(uid)); ownDir(d, uid) {
		return filepath.Join(d, "atmlab")
	}
	if d := getenv("XDG_CACHE_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "atmlab", "run")
	}
	h := getenv("HOME")
	if !filepath.IsAbs(h) {
		h = home(uid)
	}
	if !filepath.IsAbs(h) || h == "/" {
		return ""
	}
	return filepath.Join(h, ".cache", "atmlab", "run")
}

// homeOf returns user uid's home directory from the account database, ""
// if it has none.
func homeOf(uid int) string {
	u, err := user.LookupId(strconv.Itoa(uid))
	if err != nil {
		return ""
	}
	return u.HomeDir
}

// ownDir reports whether path is a directory (not a link) owned by uid that
// no one else may enter or change.
func ownDir(path string, uid int) bool {
	var st unix.Stat_t
	return unix.Lstat(path, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR && int(st.Uid) == uid && st.Mode&0o077 == 0
}

// runDir is RunDir for this process: root's labs use /run/atmlab, a normal
// user's and their holders StateDir.
func runDir() string {
	if os.Geteuid() != 0 || InHolder() {
		return StateDir()
	}
	return "/run/atmlab"
}

// socketPath is where lab's control socket is for this process. A normal
// user asks their own labs first, then root's (so that `stats` of a root
// lab reports the permission it lacks, not that nothing runs).
func socketPath(lab string) string {
	p := filepath.Join(RunDir, lab+".sock")
	if NeedsHolder() {
		if _, err := os.Lstat(p); err != nil {
			return filepath.Join("/run/atmlab", lab+".sock")
		}
	}
	return p
}

// maxStateDir is the longest state directory whose lab sockets fit in a
// unix socket's 108-byte path: "/" + a 24-character lab name + ".sock" + NUL.
const maxStateDir = 108 - 1 - 24 - len(".sock") - 1

// makeStateDir creates dir (StateDir, with its missing parents, all mode
// 0700) or checks that it is the user's own: a directory (not a link) that
// only they can enter, so that no one else can read the lab's socket.
func makeStateDir(dir string) (string, error) {
	if !filepath.IsAbs(dir) {
		return "", errors.New("no state directory for a lab without root: set HOME (or XDG_RUNTIME_DIR) to a directory of yours")
	}
	if len(dir) > maxStateDir {
		return "", fmt.Errorf("state directory %s is too long for a lab's control socket (at most %d characters): set XDG_CACHE_HOME to a shorter directory of yours", dir, maxStateDir)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("state directory: %w", err)
	}
	var st unix.Stat_t
	if err := unix.Lstat(dir, &st); err != nil {
		return "", fmt.Errorf("state directory: %w", err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR || int(st.Uid) != os.Getuid() || st.Mode&0o077 != 0 {
		return "", fmt.Errorf("%s is not a directory of yours with mode 0700 (owner uid %d, mode %o): remove it and retry", dir, st.Uid, st.Mode&0o7777)
	}
	return dir, nil
}

// sysctlFiles are the switches that forbid unprivileged user namespaces,
// with the value that forbids them.
var sysctlFiles = []struct{ key, forbids string }{
	{"user.max_user_namespaces", "0"},
	{"kernel.unprivileged_userns_clone", "0"},             // Debian and Ubuntu kernels
	{"kernel.apparmor_restrict_unprivileged_userns", "1"}, // Ubuntu 23.10 and later
}

// userNSForbidden names the sysctl that forbids unprivileged user
// namespaces and how to allow them, or returns nil. read returns a sysctl's
// value ("" when the kernel has no such switch).
func userNSForbidden(read func(key string) string) error {
	for _, s := range sysctlFiles {
		if v := read(s.key); v == s.forbids {
			allow := "1"
			switch s.key {
			case "user.max_user_namespaces":
				allow = "15000"
			case "kernel.apparmor_restrict_unprivileged_userns":
				allow = "0"
			}
			return fmt.Errorf("this kernel forbids unprivileged user namespaces (%s = %s), which a lab without root needs: allow them with `sudo sysctl -w %s=%s`, or run atmlab as root", s.key, v, s.key, allow)
		}
	}
	return nil
}

// readSysctl returns a sysctl's value, "" if it does not exist.
func readSysctl(key string) string {
	b, err := os.ReadFile("/proc/sys/" + strings.ReplaceAll(key, ".", "/"))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// tunUsable checks that the user may open /dev/net/tun: devtmpfs makes it
// mode 0600 and udev's default rule 0666 (safe: a TAP can only be made with
// CAP_NET_ADMIN in a namespace, which a user has only in their own).
func tunUsable() error {
	const tun = "/dev/net/tun"
	err := unix.Access(tun, unix.R_OK|unix.W_OK)
	if errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("no %s: this kernel or container has no TUN/TAP support", tun)
	}
	if err != nil {
		return fmt.Errorf("a lab without root opens %s, which only root may open here (%v): make it usable as udev does on most distributions, `sudo chmod 0666 %s`, or run atmlab as root", tun, err, tun)
	}
	return nil
}

// ccNotAllowed returns the congestion controls that labs' hosts ask for and
// the host-wide net.ipv4.tcp_allowed_congestion_control lacks: only root
// can add to that list (a lab as root does so while it runs).
func ccNotAllowed(allowed string, labs ...*topologies.Lab) []string {
	have := strings.Fields(allowed)
	var missing []string
	for _, lab := range labs {
		for _, n := range lab.Nodes {
			for _, s := range n.Sysctls {
				if s.Key == "net.ipv4.tcp_congestion_control" && !slices.Contains(have, s.Value) && !slices.Contains(missing, s.Value) {
					missing = append(missing, s.Value)
				}
			}
		}
	}
	return missing
}

// checkRootless says why labs cannot run here without root, or returns nil.
func checkRootless(labs ...*topologies.Lab) error {
	if err := userNSForbidden(readSysctl); err != nil {
		return err
	}
	if err := tunUsable(); err != nil {
		return err
	}
	allowed := readSysctl("net.ipv4.tcp_allowed_congestion_control")
	if missing := ccNotAllowed(allowed, labs...); len(missing) > 0 {
		return fmt.Errorf("the lab's hosts ask for TCP congestion control %s, which namespaces may choose only when the host-wide net.ipv4.tcp_allowed_congestion_control (now %q) lists it, and only root can add to it: run `sudo sysctl -w net.ipv4.tcp_allowed_congestion_control=%q`, or run atmlab as root",
			strings.Join(missing, ", "), allowed, strings.TrimSpace(allowed+" "+strings.Join(missing, " ")))
	}
	if _, err := exec.LookPath("nsenter"); err != nil {
		return errors.New("a lab without root needs nsenter for `atmlab exec`: apt-get install util-linux")
	}
	return nil
}

// RunHolder runs this command line (args, without the program name) again
// as a holder and returns its exit code once it has ended. Signals that
// stop atmlab are passed on to it; if this process dies, the kernel kills
// the holder (and with it the lab). labs are what the holder will build.
func RunHolder(args []string, labs ...*topologies.Lab) (int, error) {
	if err := checkRootless(labs...); err != nil {
		return 1, err
	}
	dir, err := makeStateDir(StateDir())
	if err != nil {
		return 1, err
	}
	self, err := os.Executable()
	if err != nil {
		return 1, err
	}
	cmd := exec.Command(self, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), holderEnv+"="+dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWNET,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
		// The parent-death signal fires when the thread that started the
		// child ends: this one stays locked until the child is gone.
		Pdeathsig: syscall.SIGKILL,
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	if err := cmd.Start(); err != nil {
		if ferr := userNSForbidden(readSysctl); ferr != nil {
			return 1, ferr
		}
		return 1, fmt.Errorf("start the lab's user namespace: %w (see user.max_user_namespaces, kernel.unprivileged_userns_clone and kernel.apparmor_restrict_unprivileged_userns)", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for {
		select {
		case s := <-sigs:
			// A terminal's Ctrl-C reaches the holder too; kill(1) reaches
			// only this process.
			cmd.Process.Signal(s)
		case err := <-done:
			if cmd.ProcessState != nil {
				if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
					return 128 + int(ws.Signal()), nil
				}
				return cmd.ProcessState.ExitCode(), nil
			}
			return 1, err
		}
	}
}

var holderOnce sync.Once

// prepareHolder gives the holder its own /run/netns, once, before the first
// namespace: a tmpfs in its private mount namespace. Without /run/netns on
// the machine (only root can make it), the holder mounts a tmpfs on /run,
// and binds the user's state directory (/run/user/UID/atmlab) back into it,
// where the user's other commands look for the lab's socket.
func prepareHolder() error {
	if !InHolder() {
		return nil
	}
	var err error
	holderOnce.Do(func() {
		if err = unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
			err = fmt.Errorf("make the holder's mounts private: %w", err)
			return
		}
		target := NetnsDir
		if _, serr := os.Stat(NetnsDir); serr != nil {
			target = filepath.Dir(NetnsDir)
		}
		state := StateDir()
		hidden := strings.HasPrefix(state, target+"/")
		var keep *os.File
		if hidden {
			if keep, err = os.OpenFile(state, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW, 0); err != nil {
				err = fmt.Errorf("state directory: %w", err)
				return
			}
			defer keep.Close()
		}
		if err = unix.Mount("atmlab", target, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "mode=0755"); err != nil {
			err = fmt.Errorf("mount a private %s: %w", target, err)
			return
		}
		if err = os.MkdirAll(NetnsDir, 0o755); err != nil || !hidden {
			return
		}
		if err = os.MkdirAll(state, 0o700); err == nil {
			err = unix.Mount(fmt.Sprintf("/proc/self/fd/%d", keep.Fd()), state, "", unix.MS_BIND|unix.MS_REC, "")
		}
		if err != nil {
			err = fmt.Errorf("keep the state directory %s in the holder's private %s: %w", state, target, err)
		}
	})
	return err
}

// holderFile is where a holder records itself while its lab is up.
func holderFile(lab string) string { return filepath.Join(StateDir(), lab+".pid") }

// markHolder records this holder's pid and user namespace, so that the
// user's `exec` and `down` find it, once its lab is up.
func markHolder(lab string) error {
	if !InHolder() {
		return nil
	}
	ino, err := userNS(os.Getpid())
	if err != nil {
		return err
	}
	return os.WriteFile(holderFile(lab), fmt.Appendf(nil, "%d %d\n", os.Getpid(), ino), 0o600)
}

// unmarkHolder removes the record when the holder's lab is down, if it is
// this holder's (a second holder of the same lab that lost the start must
// not remove the first one's).
func unmarkHolder(lab string) {
	if !InHolder() {
		return
	}
	if b, err := os.ReadFile(holderFile(lab)); err == nil && strings.HasPrefix(string(b), strconv.Itoa(os.Getpid())+" ") {
		os.Remove(holderFile(lab))
	}
}

// userNS returns the inode of a process's user namespace.
func userNS(pid int) (uint64, error) {
	var st unix.Stat_t
	if err := unix.Stat(fmt.Sprintf("/proc/%d/ns/user", pid), &st); err != nil {
		return 0, err
	}
	return st.Ino, nil
}

// holder is a rootless lab's holder as its pid file records it.
type holder struct {
	pid    int
	userNS uint64
}

// findHolder reads lab's pid file; pid is 0 when that process is gone or
// is no longer the holder (its pid reused).
func findHolder(lab string) (h holder, recorded bool) {
	b, err := os.ReadFile(holderFile(lab))
	if err != nil {
		return h, false
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return h, true
	}
	h.pid, _ = strconv.Atoi(f[0])
	h.userNS, _ = strconv.ParseUint(f[1], 10, 64)
	if h.pid <= 0 || !alive(h.pid, h.userNS) {
		h.pid = 0
	}
	return h, true
}

// alive reports whether process pid runs in the user namespace ino: not
// ended, not a zombie (which keeps its user namespace but no other), not
// a pid reused by an unrelated process, and not past the point of its exit
// where it let go of its other namespaces, which nsenter could no longer
// enter (a holder killed with its atmlab is there for a while, closing the
// lab's TAPs, before it reads as a zombie).
func alive(pid int, ino uint64) bool {
	if n, err := userNS(pid); err != nil || n != ino {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	_, after, _ := bytes.Cut(stat, []byte(") ")) // the state follows the command's name
	if len(after) == 0 || after[0] == 'Z' || after[0] == 'X' {
		return false
	}
	_, err = os.Stat(fmt.Sprintf("/proc/%d/ns/mnt", pid))
	return err == nil
}

// execInHolder replaces this process with `atmlab exec` inside lab's holder
// (its user and mount namespaces, via nsenter), keeping the working
// directory. It returns only on failure; ok is false when lab has no
// rootless holder of this user.
func execInHolder(lab, node string, argv []string) (ok bool, err error) {
	h, recorded := findHolder(lab)
	if !recorded {
		return false, nil
	}
	if h.pid == 0 {
		return true, fmt.Errorf("lab %s is not running (its holder is gone): `atmlab down %s` removes what is left of it", lab, lab)
	}
	nsenter, err := exec.LookPath("nsenter")
	if err != nil {
		return true, errors.New("entering a lab without root needs nsenter: apt-get install util-linux")
	}
	self, err := os.Executable()
	if err != nil {
		return true, err
	}
	wd, err := os.Getwd()
	if err != nil {
		wd = "/"
	}
	args := []string{"nsenter", "--target", strconv.Itoa(h.pid), "--user", "--mount", "--preserve-credentials", "--wd=" + wd,
		"--", self, "exec", lab, node, "--"}
	env := append(os.Environ(), holderEnv+"="+StateDir())
	return true, fmt.Errorf("exec nsenter: %w", syscall.Exec(nsenter, append(args, argv...), env))
}

// downRootless stops a normal user's lab: SIGTERM to its holder (which
// tears the lab down as on Ctrl-C), SIGKILL after ten seconds, then SIGKILL
// to whatever the user started inside it (`atmlab exec` servers keep its
// namespaces alive after a holder killed with -9). It returns the
// namespaces that went with it.
func downRootless(lab string) ([]string, error) {
	h, recorded := findHolder(lab)
	if !recorded {
		// A normal user cannot read a root lab's mark: the names say it.
		entries, _ := os.ReadDir(NetnsDir)
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), lab+"-") {
				return nil, fmt.Errorf("you have no lab %s, but root has namespaces named %s-* in %s: if they are a lab's, run `sudo atmlab down %s`", lab, lab, NetnsDir, lab)
			}
		}
		return nil, nil
	}
	var st unix.Stat_t
	if unix.Stat(holderFile(lab), &st) == nil && int(st.Uid) != os.Getuid() {
		return nil, fmt.Errorf("%s is not yours: remove it", holderFile(lab))
	}
	inside := processesIn(h.userNS)
	var names []string
	for _, pid := range append([]int{h.pid}, inside...) {
		if pid == 0 {
			continue
		}
		if entries, err := os.ReadDir(fmt.Sprintf("/proc/%d/root%s", pid, NetnsDir)); err == nil {
			for _, e := range entries {
				if strings.HasPrefix(e.Name(), lab+"-") {
					names = append(names, e.Name())
				}
			}
			break
		}
	}
	if h.pid != 0 {
		syscall.Kill(h.pid, syscall.SIGTERM)
		if !waitGone(h.pid, h.userNS, 10*time.Second) {
			syscall.Kill(h.pid, syscall.SIGKILL)
			waitGone(h.pid, h.userNS, 2*time.Second)
		}
	}
	for _, pid := range processesIn(h.userNS) {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	var errs []error
	for _, pid := range processesIn(h.userNS) {
		if !waitGone(pid, h.userNS, 2*time.Second) {
			errs = append(errs, fmt.Errorf("process %d in lab %s does not end", pid, lab))
		}
	}
	os.Remove(holderFile(lab))
	os.Remove(filepath.Join(StateDir(), lab+".sock"))
	return names, errors.Join(errs...)
}

// processesIn lists this user's processes in the user namespace ino.
func processesIn(ino uint64) []int {
	var pids []int
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		if alive(pid, ino) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// waitGone waits up to d for process pid (in user namespace ino) to end.
func waitGone(pid int, ino uint64, d time.Duration) bool {
	for deadline := time.Now().Add(d); ; time.Sleep(10 * time.Millisecond) {
		if !alive(pid, ino) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
	}
}
