package inspect

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/atmlab/atmlab/internal/labtest"
)

// writeLab writes a lab file into a test's directory and returns its path.
func writeLab(t *testing.T, src string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "lab.yaml")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// A lab file inspected, nothing built in the kernel: its nodes and links
// as tables, each direction's rate and impairments, and the PVCs and the
// MPLS labels where it has any (the routers' labels bound as a running
// lab binds them).
func TestInspectWritesALabFileAsTables(t *testing.T) {
	for _, tc := range []struct{ name, src, want string }{
		{"mpls", labtest.Lab("mpls-two-routers", "mpls"), `lab mpls: 4 nodes, 3 links

NODE  KIND    INTERFACES
h1    host    eth0 10.0.0.1/24
h2    host    eth0 10.0.2.2/24
r1    router  eth0 10.0.0.254/24, eth1 10.0.1.1/24
r2    router  eth0 10.0.1.2/24, eth1 10.0.2.254/24

LINK               A→B  B→A  ATM
h1:eth0 — r1:eth0  1G   1G   -
r1:eth1 — r2:eth0  1G   1G   -
r2:eth1 — h2:eth0  1G   1G   -

NODE  MPLS LABELS
r1    in 16: pop via 10.0.1.2 (eth1)
r2    in 16: pop via 10.0.1.1 (eth0)
`},
		{"atm", labtest.Lab("two-hosts-atm-switch", "atm"), `lab atm: 3 nodes, 2 links

NODE  KIND        INTERFACES
h1    host        eth0 10.0.0.1/24
h2    host        eth0 10.0.0.2/24
atm1  atm-switch  -

LINK               A→B      B→A      ATM
h1:eth0 — atm1:p1  149.76M  149.76M  oc3 aal5 llc
h2:eth0 — atm1:p2  149.76M  149.76M  oc3 aal5 llc

NODE  PVC
h1    eth0 0/100 to 10.0.0.2
h2    eth0 0/100 to 10.0.0.1
`},
		{"impaired", labtest.Set(labtest.Lab("two-hosts-switch", "far"), "topology.links[0].impair", "{delay: 10ms, jitter: 1ms, loss: 2%}"), `lab far: 3 nodes, 2 links

NODE  KIND    INTERFACES
h1    host    eth0 10.0.0.1/24
h2    host    eth0 10.0.0.2/24
sw1   switch  -

LINK              A→B                                 B→A                                 ATM
h1:eth0 — sw1:p1  100M delay 10ms jitter 1ms loss 2%  100M delay 10ms jitter 1ms loss 2%  -
h2:eth0 — sw1:p2  100M                                100M                                -
`},
	} {
		v, err := File(writeLab(t, tc.src))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var out strings.Builder
		Write(&out, v)
		if out.String() != tc.want {
			t.Errorf("%s: inspect wrote\n%s\nwant\n%s", tc.name, out.String(), tc.want)
		}
	}
}

// A lab file with a problem is its error at its line, and nothing to
// write; IsFile tells a lab file from a running lab's name.
func TestInspectRefusesABadFileAndTellsFilesFromLabs(t *testing.T) {
	path := writeLab(t, "name: bad\ntopology:\n  nodes:\n    h1: {kind: toaster}\n")
	if v, err := File(path); err == nil || v != nil || !strings.Contains(err.Error(), path+`:4: topology.nodes.h1.kind: unknown kind "toaster"`) {
		t.Errorf("File(bad) = %v, %v; want the kind's error at line 4", v, err)
	}
	for arg, want := range map[string]bool{path: true, "lab.yml": true, "cernet": false, t.TempDir(): false} {
		if got := IsFile(arg); got != want {
			t.Errorf("IsFile(%q) = %v, want %v", arg, got, want)
		}
	}
}
