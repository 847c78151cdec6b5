package cut

import (
	"fmt"
	"strings"
)

// ParsePeers reads --cut-peer's PART=HOST:PORT values, each value one or
// several of them joined by commas.
func ParsePeers(values []string) (map[string]string, error) {
	peers := map[string]string{}
	for _, v := range values {
		for _, kv := range strings.Split(v, ",") {
			name, addr, ok := strings.Cut(strings.TrimSpace(kv), "=")
			if !ok || name == "" || addr == "" {
				return nil, fmt.Errorf("--cut-peer %q: want PART=HOST:PORT", kv)
			}
			if _, dup := peers[name]; dup {
				return nil, fmt.Errorf("--cut-peer: part %s given twice", name)
			}
			peers[name] = addr
		}
	}
	return peers, nil
}
