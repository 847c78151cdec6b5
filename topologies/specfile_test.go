package topologies

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"testing"
)

// SpecJSON holds every variant's resolved lab, planned PVCs included, and
// gives the same bytes for the same lab file.
func TestSpecJSON(t *testing.T) {
	files, err := filepath.Glob("*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatal(files, err)
	}
	for _, file := range files {
		var out [2][]byte
		for i := range out {
			lab, err := Load(file)
			if err != nil {
				t.Fatal(err)
			}
			names := lab.Measured()
			labs, err := lab.ResolveVariants(names)
			if err != nil {
				t.Fatal(err)
			}
			if out[i], err = SpecJSON(names, labs); err != nil {
				t.Fatalf("%s: %v", file, err)
			}
		}
		if !bytes.Equal(out[0], out[1]) {
			t.Errorf("%s: two resolutions wrote different spec.json", file)
		}
		var spec struct {
			Variants []struct {
				Variant string
				Lab     struct {
					Name  string
					Nodes []struct {
						Kind       Kind
						Interfaces []struct{ VCs []VC }
						ATMSwitch  *struct{ Cross []CrossConnect }
					}
				}
			}
		}
		names := (&Lab{}).Measured()
		if lab, _ := Load(file); lab != nil {
			names = lab.Measured()
		}
		if err := json.Unmarshal(out[0], &spec); err != nil || len(spec.Variants) != len(names) || spec.Variants[0].Variant != names[0] {
			t.Fatalf("%s: spec.json does not read back: %v", file, err)
		}
		if file != "cernet-atm.yaml" {
			continue
		}
		// The ATM seed lab's PVCs are planned: every host interface has
		// VCs, every atm-switch cross-connects.
		for _, n := range spec.Variants[0].Lab.Nodes {
			switch n.Kind {
			case KindHost:
				for _, i := range n.Interfaces {
					if len(i.VCs) == 0 {
						t.Errorf("cernet-atm: a host interface without VCs in spec.json")
					}
				}
			case KindATMSwitch:
				if n.ATMSwitch == nil || len(n.ATMSwitch.Cross) == 0 {
					t.Errorf("cernet-atm: an atm-switch without cross-connects in spec.json")
				}
			}
		}
	}
}
