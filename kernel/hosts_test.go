//go:build linux

package kernel

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/labfile"
)

func twoHostLab(t *testing.T) *topologies.Lab {
	t.Helper()
	lab, err := labfile.Parse("names.yaml", []byte("name: names\ntopology:\n  nodes:\n    h1: {kind: host, ipv4: 10.0.0.1/24}\n    h2: {kind: host, ipv4: 10.0.0.2/24}\n    sw1: {kind: switch}\n"+
		"  links:\n    - endpoints: [\"h1:eth0\", \"sw1:p1\"]\n    - endpoints: [\"h2:eth0\", \"sw1:p2\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	return lab
}

// Each host's hosts file names every node with an address, and localhost.
func TestHostsFileNamesTheLabsNodes(t *testing.T) {
	EtcNetns = t.TempDir()
	t.Cleanup(func() { EtcNetns = "/etc/netns" })
	lab := twoHostLab(t)
	if err := writeHosts(lab, "names-h1"); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(HostsPath("names-h1"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"127.0.0.1\tlocalhost\n", "10.0.0.1\th1 h1-eth0\n", "10.0.0.2\th2 h2-eth0\n"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("hosts file lacks %q:\n%s", want, b)
		}
	}
	if err := removeHosts("names-h1"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Dir(HostsPath("names-h1"))); !os.IsNotExist(err) {
		t.Errorf("the namespace's /etc directory is still there: %v", err)
	}
}

// A hosts file atmlab did not write is neither overwritten nor removed,
// and a directory holding other files stays.
func TestHostsFileNotAtmlabsIsLeftAlone(t *testing.T) {
	EtcNetns = t.TempDir()
	t.Cleanup(func() { EtcNetns = "/etc/netns" })
	p := HostsPath("names-h1")
	os.MkdirAll(filepath.Dir(p), 0o755)
	os.WriteFile(p, []byte("10.9.9.9 mine\n"), 0o644)
	if err := writeHosts(twoHostLab(t), "names-h1"); err == nil || !strings.Contains(err.Error(), "not atmlab's") {
		t.Errorf("writeHosts over a foreign file: %v", err)
	}
	if err := removeHosts("names-h1"); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "10.9.9.9 mine\n" {
		t.Errorf("foreign hosts file changed: %q", b)
	}
	p2 := HostsPath("names-h2")
	os.MkdirAll(filepath.Dir(p2), 0o755)
	os.WriteFile(filepath.Join(filepath.Dir(p2), "resolv.conf"), []byte("nameserver 1.1.1.1\n"), 0o644)
	writeHosts(twoHostLab(t), "names-h2")
	if err := removeHosts("names-h2"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(p2), "resolv.conf")); err != nil {
		t.Errorf("a file beside the hosts file went: %v", err)
	}
	if _, err := os.Stat(p2); !os.IsNotExist(err) {
		t.Errorf("atmlab's hosts file stayed: %v", err)
	}
}
