//go:build linux

package kernel

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/atmlab/atmlab/topologies"
)

const allowedCC = "/proc/sys/net/ipv4/tcp_allowed_congestion_control"

// allowCongestionControls makes the TCP congestion controls that the lab's
// hosts ask for selectable inside namespaces: Linux lets a namespace other
// than the first choose only algorithms on the host-wide allowed list. It
// only adds to the list, and returns a function that puts the list back.
func allowCongestionControls(lab *topologies.Lab) (restore func(), note string, err error) {
	var want []string
	for _, n := range lab.Nodes {
		for _, s := range n.Sysctls {
			if s.Key == "net.ipv4.tcp_congestion_control" && !slices.Contains(want, s.Value) {
				want = append(want, s.Value)
			}
		}
	}
	restore = func() {}
	if len(want) == 0 {
		return restore, "", nil
	}
	orig, err := os.ReadFile(allowedCC)
	if err != nil {
		return restore, "", err
	}
	allowed := strings.Fields(string(orig))
	var added []string
	for _, w := range want {
		if !slices.Contains(allowed, w) {
			allowed = append(allowed, w)
			added = append(added, w)
		}
	}
	if len(added) == 0 {
		return restore, "", nil
	}
	if err := os.WriteFile(allowedCC, []byte(strings.Join(allowed, " ")), 0); err != nil {
		return restore, "", fmt.Errorf("allow congestion control %s for the lab's hosts: %w (is the module available? see /proc/sys/net/ipv4/tcp_available_congestion_control)", strings.Join(added, ", "), err)
	}
	restore = func() { os.WriteFile(allowedCC, orig, 0) }
	return restore, fmt.Sprintf("allowed TCP congestion control %s for namespaces until the lab stops", strings.Join(added, ", ")), nil
}
