package labfile

import "testing"

// Names from the command line follow the lab file's rules; a path never
// passes.
func TestCheckNames(t *testing.T) {
	for _, ok := range []string{"sw100", "it123-4", "a"} {
		if err := CheckLabName(ok); err != nil {
			t.Errorf("CheckLabName(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{"", "../../tmp/v", "/tmp/v", "a/b", "A", "-a", "a.sock", "abcdefghijklmnopqrstuvwxy", "a\x00"} {
		if err := CheckLabName(bad); err == nil {
			t.Errorf("CheckLabName(%q) passed", bad)
		}
	}
	for _, ok := range []string{"h1", "sw_1"} {
		if err := CheckNodeName(ok); err != nil {
			t.Errorf("CheckNodeName(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{"", "..", "../h1", "h-1", "H1", "abcdefghijklmnopqrstuvwxy"} {
		if err := CheckNodeName(bad); err == nil {
			t.Errorf("CheckNodeName(%q) passed", bad)
		}
	}
}
