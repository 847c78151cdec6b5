package kinds_test

import (
	"strings"
	"testing"

	"github.com/atmlab/atmlab/topologies/kinds"
	"github.com/atmlab/atmlab/topologies/labfile"
)

// The errors for a missing or unknown kind list the table's kinds, and
// each kind admits exactly its row's keys.
func TestKindsTable(t *testing.T) {
	list := kinds.List()
	if last := kinds.Table[len(kinds.Table)-1].Kind; !strings.HasPrefix(list, "host, switch, hub, atm-switch") || !strings.HasSuffix(list, " or "+string(last)) {
		t.Errorf("kinds.List() = %q, want the table's kinds in its order", list)
	}
	for _, k := range kinds.Table {
		if !strings.Contains(list, string(k.Kind)) {
			t.Errorf("kinds.List() = %q lacks %s", list, k.Kind)
		}
	}
	for src, want := range map[string]string{
		"n1: {kind: toaster}":     `bad.yaml:4: topology.nodes.n1.kind: unknown kind "toaster"; use ` + kinds.List(),
		"n1: {ipv4: 10.0.0.1/24}": "bad.yaml:4: topology.nodes.n1.kind: missing; say kind: " + kinds.List(),
	} {
		_, err := labfile.Parse("bad.yaml", []byte("name: bad\ntopology:\n  nodes:\n    "+src+"\n"))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", src, err, want)
		}
	}
	for _, k := range kinds.Table {
		for _, key := range k.Keys {
			if _, err := labfile.Parse("k.yaml", []byte("name: k\ntopology:\n  nodes:\n    n1: {kind: "+string(k.Kind)+", "+key+": x}\n")); err != nil && strings.Contains(err.Error(), "unknown key") {
				t.Errorf("kind %s refuses its own key %s: %v", k.Kind, key, err)
			}
		}
		_, err := labfile.Parse("k.yaml", []byte("name: k\ntopology:\n  nodes:\n    n1: {kind: "+string(k.Kind)+", colour: red}\n"))
		if err == nil || !strings.Contains(err.Error(), "topology.nodes.n1.colour: unknown key") {
			t.Errorf("kind %s takes a key no row lists: %v", k.Kind, err)
		}
	}
}
