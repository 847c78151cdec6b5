//go:build linux

package kernel

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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
