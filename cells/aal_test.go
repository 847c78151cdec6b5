package cells

import "testing"

// An AAL names itself as the lab file does, reads back, and counts an
// SDU's cells as its segmenter does: 1500 octets are 32 AAL5 cells
// (1508 / 48 rounded up), 35 AAL3/4 cells (1508 / 44 rounded up).
func TestAAL(t *testing.T) {
	for _, tc := range []struct {
		aal   AAL
		name  string
		cells int
	}{{AAL5, "aal5", 32}, {AAL34, "aal34", 35}} {
		if got, err := ParseAAL(tc.name); err != nil || got != tc.aal || tc.aal.String() != tc.name {
			t.Errorf("ParseAAL(%q) = %v, %v; String %q", tc.name, got, err, tc.aal.String())
		}
		if n := tc.aal.Cells(1500); n != tc.cells {
			t.Errorf("%s: 1500 octets take %d cells, want %d", tc.name, n, tc.cells)
		}
	}
	if _, err := ParseAAL("aal2"); err == nil || err.Error() != `unknown AAL "aal2": use aal5 or aal34` {
		t.Errorf("ParseAAL(aal2) = %v", err)
	}
}
