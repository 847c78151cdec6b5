package topologies_test

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/labfile"
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
			lab, err := labfile.Load(file)
			if err != nil {
				t.Fatal(err)
			}
			names := lab.Measured()
			labs, err := lab.ResolveVariants(names)
			if err != nil {
				t.Fatal(err)
			}
			if out[i], err = topologies.SpecJSON(names, labs); err != nil {
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
						Kind       topologies.Kind
						Interfaces []struct{ VCs []topologies.VC }
						ATMSwitch  *struct{ Cross []topologies.CrossConnect }
					}
				}
			}
		}
		names := (&topologies.Lab{}).Measured()
		if lab, _ := labfile.Load(file); lab != nil {
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
			case topologies.KindHost:
				for _, i := range n.Interfaces {
					if len(i.VCs) == 0 {
						t.Errorf("cernet-atm: a host interface without VCs in spec.json")
					}
				}
			case topologies.KindATMSwitch:
				if n.ATMSwitch == nil || len(n.ATMSwitch.Cross) == 0 {
					t.Errorf("cernet-atm: an atm-switch without cross-connects in spec.json")
				}
			}
		}
	}
}

// spec.json reads back into the labs it was written from: writing what
// ReadSpec read gives the same bytes, for every seed lab; a broken or
// empty spec is an error.
func TestReadSpec(t *testing.T) {
	files, err := filepath.Glob("*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatal(files, err)
	}
	for _, file := range files {
		lab, err := labfile.Load(file)
		if err != nil {
			t.Fatal(err)
		}
		names := lab.Measured()
		labs, err := lab.ResolveVariants(names)
		if err != nil {
			t.Fatal(err)
		}
		b, err := topologies.SpecJSON(names, labs)
		if err != nil {
			t.Fatal(err)
		}
		spec, err := topologies.ReadSpec(b)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		var again []*topologies.Lab
		for i, v := range spec.Variants {
			if v.Name != names[i] || spec.Lab(names[i]) != v.Lab {
				t.Fatalf("%s: variant %d is %q, want %q", file, i, v.Name, names[i])
			}
			again = append(again, v.Lab)
		}
		b2, err := topologies.SpecJSON(names, again)
		if err != nil || !bytes.Equal(b, b2) {
			t.Errorf("%s: spec.json read back writes different bytes (%v)", file, err)
		}
	}
	for _, bad := range []string{``, `{"variants": []}`, `{"variants": [{"variant": "base"}]}`, `{"variants": [{"variant": "base", "lab": {"Nodes": 3}}]}`, `{"labs": []}`} {
		if _, err := topologies.ReadSpec([]byte(bad)); err == nil {
			t.Errorf("ReadSpec(%q) = nil error", bad)
		}
	}
}
