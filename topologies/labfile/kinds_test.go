package labfile

import (
	"strings"
	"testing"
)

// The errors for a missing or unknown kind list the table's kinds, and
// each kind admits exactly its row's keys.
func TestKindsTable(t *testing.T) {
	list := kindList()
	if last := kinds[len(kinds)-1].kind; !strings.HasPrefix(list, "host, switch, hub, atm-switch") || !strings.HasSuffix(list, " or "+string(last)) {
		t.Errorf("kindList() = %q, want the table's kinds in its order", list)
	}
	for _, k := range kinds {
		if !strings.Contains(list, string(k.kind)) {
			t.Errorf("kindList() = %q lacks %s", list, k.kind)
		}
	}
	for src, want := range map[string]string{
		"n1: {kind: toaster}":     `bad.yaml:4: topology.nodes.n1.kind: unknown kind "toaster"; use ` + kindList(),
		"n1: {ipv4: 10.0.0.1/24}": "bad.yaml:4: topology.nodes.n1.kind: missing; say kind: " + kindList(),
	} {
		_, err := Parse("bad.yaml", []byte("name: bad\ntopology:\n  nodes:\n    "+src+"\n"))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", src, err, want)
		}
	}
	for _, k := range kinds {
		for _, key := range k.keys {
			if _, err := Parse("k.yaml", []byte("name: k\ntopology:\n  nodes:\n    n1: {kind: "+string(k.kind)+", "+key+": x}\n")); err != nil && strings.Contains(err.Error(), "unknown key") {
				t.Errorf("kind %s refuses its own key %s: %v", k.kind, key, err)
			}
		}
		_, err := Parse("k.yaml", []byte("name: k\ntopology:\n  nodes:\n    n1: {kind: "+string(k.kind)+", colour: red}\n"))
		if err == nil || !strings.Contains(err.Error(), "topology.nodes.n1.colour: unknown key") {
			t.Errorf("kind %s takes a key no row lists: %v", k.kind, err)
		}
	}
}
