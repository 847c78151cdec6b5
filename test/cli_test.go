//go:build integration

package test

import (
	"encoding/json"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/atmlab/atmlab/kernel"
)

// A running lab is listed by ls, shown by inspect and completed by name;
// inside its hosts the node names resolve, through atmlab exec and ip netns
// exec alike, and the hosts files go with the lab.
func TestRunningLabIsListedInspectedCompletedAndResolvesNames(t *testing.T) {
	requireRoot(t, "ping")
	r := up(t, setLab, "--web", "127.0.0.1:0")
	out, err := exec.Command(atmlab, "ls", "-o", "json").Output()
	var rows []lsRow
	if err != nil || json.Unmarshal(out, &rows) != nil {
		t.Fatalf("ls -o json: %v %s", err, out)
	}
	i := slices.IndexFunc(rows, func(row lsRow) bool { return row.Name == r.name })
	if i < 0 || rows[i].Owner != "root" || !slices.Equal(rows[i].Nodes, []string{"h1", "h2", "sw1"}) || !strings.HasPrefix(rows[i].Web, "http://127.0.0.1:") {
		t.Errorf("ls does not list %s as root's with its nodes and live view: %s", r.name, out)
	}
	out, err = exec.Command(atmlab, "inspect", r.name).Output()
	if err != nil || !strings.Contains(out2s(out), "h2    host    eth0 10.0.0.2/24") || !strings.Contains(out2s(out), "h1:eth0 — sw1:p1") {
		t.Errorf("inspect %s: %v\n%s", r.name, err, out)
	}
	out, err = exec.Command(atmlab, "__complete", "exec", r.name, "").Output()
	if err != nil || !strings.HasPrefix(out2s(out), "h1\nh2\n:") {
		t.Errorf("completion of %s's hosts: %v %q", r.name, err, out)
	}

	r.exec("h1", "ping", "-c", "1", "-W", "2", "h2")
	if out, err := exec.Command("ip", "netns", "exec", r.name+"-h2", "ping", "-c", "1", "-W", "2", "h1").CombinedOutput(); err != nil {
		t.Errorf("ip netns exec %s-h2 ping h1: %v\n%s", r.name, err, out)
	}
	sh := exec.Command(atmlab, "exec", r.name, "h1")
	sh.Env = append(os.Environ(), "SHELL=/bin/sh")
	sh.Stdin = strings.NewReader("ping -c 1 -W 2 h2 >/dev/null && echo resolved-in-the-shell\n")
	if out, err := sh.CombinedOutput(); err != nil || !strings.Contains(string(out), "resolved-in-the-shell") {
		t.Errorf("exec %s h1 with no command (a shell): %v\n%s", r.name, err, out)
	}
	hosts := kernel.HostsPath(r.name + "-h1")
	if _, err := os.Stat(hosts); err != nil {
		t.Fatal(err)
	}
	r.stop()
	for _, node := range []string{"h1", "h2"} {
		if _, err := os.Stat(kernel.HostsPath(r.name + "-" + node)); !os.IsNotExist(err) {
			t.Errorf("%s's hosts file remains after the lab stopped: %v", node, err)
		}
	}
	out, _ = exec.Command(atmlab, "ls").Output()
	if strings.Contains(string(out), r.name) {
		t.Errorf("ls lists %s after it stopped:\n%s", r.name, out)
	}
}

// A lab killed with -9 leaves its hosts files; atmlab down removes them.
func TestDownRemovesTheHostsFilesOfAKilledLab(t *testing.T) {
	requireRoot(t)
	r := up(t, setLab)
	r.cmd.Process.Kill()
	select {
	case <-r.done:
	case <-time.After(10 * time.Second):
		t.Fatal("atmlab up did not die")
	}
	if _, err := os.Stat(kernel.HostsPath(r.name + "-h1")); err != nil {
		t.Fatalf("before down: %v", err)
	}
	if out, err := exec.Command(atmlab, "down", r.name).CombinedOutput(); err != nil {
		t.Fatalf("down: %v\n%s", err, out)
	}
	for _, node := range []string{"h1", "h2"} {
		if _, err := os.Stat(kernel.HostsPath(r.name + "-" + node)); !os.IsNotExist(err) {
			t.Errorf("%s's hosts file remains after down: %v", node, err)
		}
	}
}

// lsRow is a line of atmlab ls -o json.
type lsRow struct {
	Name  string   `json:"name"`
	Owner string   `json:"owner"`
	Nodes []string `json:"nodes"`
	Web   string   `json:"web"`
}

func out2s(b []byte) string { return string(b) }
