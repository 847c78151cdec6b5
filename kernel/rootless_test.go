//go:build linux

package kernel

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/atmlab/atmlab/topologies"
)

// Each switch that forbids unprivileged user namespaces is named, with the
// command that allows them; a kernel without the switch, or with it set to
// allow, passes.
func TestUserNSForbidden(t *testing.T) {
	for _, c := range []struct {
		values map[string]string
		want   string // "" for no error
	}{
		{map[string]string{"user.max_user_namespaces": "96365"}, ""},
		{map[string]string{"user.max_user_namespaces": "96365", "kernel.unprivileged_userns_clone": "1", "kernel.apparmor_restrict_unprivileged_userns": "0"}, ""},
		{map[string]string{"user.max_user_namespaces": "0"}, "(user.max_user_namespaces = 0), which a lab without root needs: allow them with `sudo sysctl -w user.max_user_namespaces=15000`"},
		{map[string]string{"user.max_user_namespaces": "100", "kernel.unprivileged_userns_clone": "0"}, "(kernel.unprivileged_userns_clone = 0), which a lab without root needs: allow them with `sudo sysctl -w kernel.unprivileged_userns_clone=1`"},
		{map[string]string{"kernel.apparmor_restrict_unprivileged_userns": "1"}, "(kernel.apparmor_restrict_unprivileged_userns = 1), which a lab without root needs: allow them with `sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0`"},
	} {
		err := userNSForbidden(func(key string) string { return c.values[key] })
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%v: %v, want no error", c.values, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasSuffix(err.Error(), "or run atmlab as root")):
			t.Errorf("%v: %v, want %q", c.values, err, c.want)
		}
	}
}

// A congestion control the host-wide list lacks is reported once, over
// every variant; those on the list are not.
func TestCCNotAllowed(t *testing.T) {
	lab := func(ccs ...string) *topologies.Lab {
		l := &topologies.Lab{}
		for _, cc := range ccs {
			l.Nodes = append(l.Nodes, &topologies.Node{Sysctls: []topologies.Sysctl{{Key: "net.ipv4.tcp_congestion_control", Value: cc}, {Key: "net.ipv4.tcp_ecn", Value: "1"}}})
		}
		return l
	}
	got := ccNotAllowed("reno cubic", lab("cubic", "vegas"), lab("reno"), lab("vegas", "htcp"))
	if want := []string{"vegas", "htcp"}; !slices.Equal(got, want) {
		t.Errorf("missing %v, want %v", got, want)
	}
	if got := ccNotAllowed("reno bbr cubic", lab("bbr", "reno")); got != nil {
		t.Errorf("missing %v, want none", got)
	}
}

// The state directory is made 0700; one that another user could have made
// first (another mode, a symbolic link) is refused with the fix.
func TestMakeStateDir(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "fresh")
	if _, err := makeStateDir(dir); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(dir); st.Mode().Perm() != 0o700 || !st.IsDir() {
		t.Errorf("made %v, want drwx------", st.Mode())
	}
	if _, err := makeStateDir(dir); err != nil {
		t.Errorf("second time: %v", err)
	}
	open := filepath.Join(base, "open")
	os.Mkdir(open, 0o755)
	os.Chmod(open, 0o755)
	if _, err := makeStateDir(open); err == nil || !strings.Contains(err.Error(), "mode 755): remove it and retry") {
		t.Errorf("mode 0755: %v", err)
	}
	link := filepath.Join(base, "link")
	os.Symlink(dir, link)
	if _, err := makeStateDir(link); err == nil || !strings.Contains(err.Error(), "is not a directory of yours") {
		t.Errorf("symbolic link: %v", err)
	}
}

// A process counts as a holder while it runs in the recorded user
// namespace: not once it is a zombie, not after it was reaped, and not in
// another user namespace.
func TestAlive(t *testing.T) {
	self, err := userNS(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if !alive(os.Getpid(), self) {
		t.Errorf("this process is not alive")
	}
	if alive(os.Getpid(), self+1) {
		t.Errorf("this process is alive in another user namespace")
	}
	cmd := exec.Command("sleep", "0.05")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	if !alive(pid, self) {
		t.Errorf("running child is not alive")
	}
	// Not reaped yet: a zombie once it has exited.
	for i := 0; i < 500 && alive(pid, self); i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if alive(pid, self) {
		t.Errorf("exited child (a zombie) is alive")
	}
	cmd.Wait()
	if alive(pid, self) {
		t.Errorf("reaped child is alive")
	}
}

// Only a user namespace of atmlab's makes a holder: the machine's root
// with the holder's variable set is not one.
func TestInHolder(t *testing.T) {
	if !initialUserNS("         0          0 4294967295\n") {
		t.Errorf("the initial user namespace's map is not recognised")
	}
	if initialUserNS("         0       1000          1\n") {
		t.Errorf("a holder's map is taken for the initial namespace's")
	}
	t.Setenv(holderEnv, t.TempDir())
	if m, _ := os.ReadFile("/proc/self/uid_map"); initialUserNS(string(m)) && InHolder() {
		t.Errorf("a process in the initial user namespace counts as a holder")
	}
}

// The state directory is one only the user can make: their runtime
// directory when it is theirs (named by XDG_RUNTIME_DIR, or found in
// /run/user), else their home's cache. A runtime directory another user
// could have made or redirected (a link, open to others, relative) is passed
// over, never used and never an error.
func TestStateDirChoice(t *testing.T) {
	uid := os.Getuid()
	base := t.TempDir()
	mk := func(name string, mode os.FileMode) string {
		d := filepath.Join(base, name)
		if err := os.MkdirAll(d, mode); err != nil {
			t.Fatal(err)
		}
		os.Chmod(d, mode)
		return d
	}
	xdg := mk("xdg", 0o700)
	open := mk("open", 0o755)
	link := filepath.Join(base, "link")
	os.Symlink(xdg, link)
	runUser := mk("run-user", 0o755)
	mine := mk("run-user/"+strconv.Itoa(uid), 0o700)
	noRunUser := filepath.Join(base, "absent")
	home := func(int) string { return "/home/from-passwd" }
	for _, c := range []struct {
		name    string
		env     map[string]string
		runUser string
		want    string
	}{
		{"runtime directory", map[string]string{"XDG_RUNTIME_DIR": xdg, "HOME": "/home/u"}, noRunUser, xdg + "/atmlab"},
		{"runtime directory open to others", map[string]string{"XDG_RUNTIME_DIR": open, "HOME": "/home/u"}, noRunUser, "/home/u/.cache/atmlab/run"},
		{"runtime directory a link", map[string]string{"XDG_RUNTIME_DIR": link, "HOME": "/home/u"}, noRunUser, "/home/u/.cache/atmlab/run"},
		{"runtime directory relative", map[string]string{"XDG_RUNTIME_DIR": "xdg", "HOME": "/home/u"}, noRunUser, "/home/u/.cache/atmlab/run"},
		{"no variable, /run/user/UID", map[string]string{"HOME": "/home/u"}, runUser, mine + "/atmlab"},
		{"variable passed over, /run/user/UID", map[string]string{"XDG_RUNTIME_DIR": open}, runUser, mine + "/atmlab"},
		{"cache home", map[string]string{"XDG_CACHE_HOME": "/data/c", "HOME": "/home/u"}, noRunUser, "/data/c/atmlab/run"},
		{"cache home relative", map[string]string{"XDG_CACHE_HOME": "c", "HOME": "/home/u"}, noRunUser, "/home/u/.cache/atmlab/run"},
		{"no HOME: the account's home", map[string]string{}, noRunUser, "/home/from-passwd/.cache/atmlab/run"},
		{"relative HOME: the account's home", map[string]string{"HOME": "u"}, noRunUser, "/home/from-passwd/.cache/atmlab/run"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := chooseStateDir(uid, func(k string) string { return c.env[k] }, c.runUser, home); got != c.want {
				t.Errorf("chooseStateDir(%v, %s) = %q, want %q", c.env, c.runUser, got, c.want)
			}
		})
	}
	if got := chooseStateDir(uid, func(string) string { return "" }, noRunUser, func(int) string { return "" }); got != "" {
		t.Errorf("no runtime directory and no home: %q, want \"\"", got)
	}
	if uid == 0 { // another user's directories need root to make
		theirs := mk("theirs", 0o700)
		os.Chown(theirs, 4242, 4242)
		if got := chooseStateDir(uid, func(k string) string { return map[string]string{"XDG_RUNTIME_DIR": theirs, "HOME": "/home/u"}[k] }, noRunUser, home); got != "/home/u/.cache/atmlab/run" {
			t.Errorf("another user's runtime directory: chose %q", got)
		}
	}
}

// The state directory and its missing parents are made 0700; a path that
// is not absolute, or too long for a socket beside a 24-character lab
// name, is refused with the fix.
func TestMakeStateDirParents(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "home", ".cache", "atmlab", "run")
	if _, err := makeStateDir(dir); err != nil {
		t.Fatal(err)
	}
	for d := dir; d != filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(dir)))); d = filepath.Dir(d) {
		if st, err := os.Lstat(d); err != nil || st.Mode().Perm() != 0o700 {
			t.Errorf("%s: %v %v, want drwx------", d, st.Mode(), err)
		}
	}
	if _, err := makeStateDir(""); err == nil || !strings.Contains(err.Error(), "set HOME") {
		t.Errorf("no state directory: %v", err)
	}
	long := "/" + strings.Repeat("d", maxStateDir)
	if _, err := makeStateDir(long); err == nil || !strings.Contains(err.Error(), "too long for a lab's control socket") {
		t.Errorf("long state directory: %v", err)
	}
	if n := len(strings.Repeat("d", maxStateDir) + "/" + strings.Repeat("l", 24) + ".sock"); n > 107 {
		t.Errorf("a socket in the longest state directory has %d characters, more than a unix socket's 107", n)
	}
}

// Root finds a user's state directory through their runtime directory or
// through the holder variable of their processes, and only a directory of
// that process's user: another user's process naming the victim's
// directory, or a directory open to others, is left out.
func TestUserStateDirs(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to make other users' directories")
	}
	base := t.TempDir()
	mk := func(path string, uid int, mode os.FileMode) string {
		d := filepath.Join(base, path)
		os.MkdirAll(d, mode)
		os.Chmod(d, mode)
		os.Chown(d, uid, uid)
		return d
	}
	runUser := mk("run-user", 0, 0o755)
	mk("run-user/1001", 1001, 0o700)
	a := mk("run-user/1001/atmlab", 1001, 0o700)
	mk("run-user/1002", 1002, 0o755) // not the user's own
	mk("run-user/1002/atmlab", 1002, 0o700)
	cache := mk("home/1003/.cache/atmlab/run", 1003, 0o700)
	openDir := mk("home/1004/run", 1004, 0o777)
	proc := mk("proc", 0, 0o755)
	process := func(pid string, uid int, env ...string) {
		d := mk("proc/"+pid, 0, 0o755)
		os.WriteFile(filepath.Join(d, "status"), fmt.Appendf(nil, "Name:\tatmlab\nUid:\t%d\t%d\t%d\t%d\n", uid, uid, uid, uid), 0o644)
		os.WriteFile(filepath.Join(d, "environ"), []byte(strings.Join(env, "\x00")+"\x00"), 0o644)
	}
	process("10", 1003, "HOME=/x", holderEnv+"="+cache)
	process("11", 1003, holderEnv+"="+cache) // the same directory once
	process("12", 1005, holderEnv+"="+cache) // another user naming it
	process("13", 1004, holderEnv+"="+openDir)
	process("14", 0, holderEnv+"="+a)
	process("self", 1003, holderEnv+"="+cache)
	got := userStateDirs(runUser, proc)
	want := []userState{{1001, 1001, a}, {1003, 1003, cache}}
	if !slices.Equal(got, want) {
		t.Errorf("userStateDirs = %v, want %v", got, want)
	}
}
