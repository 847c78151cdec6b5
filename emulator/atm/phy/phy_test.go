package phy

import "testing"

// An alias finds its PHY; an unknown name is an error naming the table's.
func TestLookupAliases(t *testing.T) {
	for alias, name := range map[string]string{"oc3c": "oc3", "stm1": "oc3", "oc12c": "oc12", "stm4": "oc12", "ds3": "ds3"} {
		if p, err := Lookup(alias); err != nil || p.Name != name {
			t.Errorf("Lookup(%q) = %+v, %v; want %s", alias, p, err, name)
		}
	}
	if _, err := Lookup("oc48c"); err == nil || err.Error() != `unknown ATM PHY "oc48c": use one of atm25, ds3, e3, oc12, oc3` {
		t.Errorf("Lookup(oc48c): %v", err)
	}
}
