package labfile

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/labyaml"
	"github.com/atmlab/atmlab/topologies/study"
)

// variantFromScratch is how a variant's lab used to be made: the whole
// file's tree, every variant included, resolved again, then the variant
// applied. It is kept as the oracle the copy of the resolved lab as
// written is checked against.
func variantFromScratch(raw *Raw, name string) (*topologies.Lab, []error) {
	fresh, errs := resolve(raw)
	if len(errs) > 0 {
		return nil, []error{labyaml.JoinByLine(errs)}
	}
	if name != "base" {
		if errs := apply(fresh, name); errs != nil {
			return nil, errs
		}
	}
	linkDefaults(fresh)
	fresh.Experiments = slices.DeleteFunc(fresh.Experiments, func(e *study.Experiment) bool { return !e.RunsIn(name) })
	return fresh, nil
}

// oracleLabs are the seed labs and labs whose variants change every kind
// of thing a variant may change, some of them wrongly.
func oracleLabs(t *testing.T) map[string][]byte {
	t.Helper()
	files, err := filepath.Glob("../*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatal(files, err)
	}
	labs := map[string][]byte{}
	for _, f := range files {
		if labs[f], err = os.ReadFile(f); err != nil {
			t.Fatal(err)
		}
	}
	labs["grid.yaml"] = []byte(sweepLab)
	labs["many.yaml"] = variantsLab(20)
	labs["atm.yaml"] = []byte(atmLab("", "") + "variants:\n  - {name: mixed, set: [{link: \"h2:eth0\", aal: aal34}]}\n  - {name: fine, set: [{link: \"h2:eth0\", phy: oc12, delay: 1ms}]}\n  - {name: hub, set: [{node: h1, kind: hub}]}\n")
	labs["nodes.yaml"] = nodesLab(40, "variants:\n  - {name: slow, set: [{link: \"h0:eth0\", rate: 10M, loss: 1%}, {node: s1, kind: hub}]}\n  - {name: busy, set: [{node: s2, cpu: {per_packet: 10us}, buffer: 64KiB}, {node: r3, cost: {ip: 5us}}]}\n  - {name: calm, set: [{node: h1, cpu: {}}, {link: \"g0:eth0\", jitter: 1ms, delay: 2ms}]}\n  - {name: bad, set: [{node: s1, kind: hub, buffer: 64KiB}]}\n")
	return labs
}

// comparable drops what two equal labs may differ in, the lookup
// indexes built as they were used: a clone has none.
func comparable(l *topologies.Lab) *topologies.Lab {
	if l != nil {
		return l.Clone()
	}
	return l
}

// Every variant of every seed lab, made from the lab as written resolved
// once, is the lab the whole file resolved again for it made, and a bad
// variant fails with the same problems.
func TestVariantsAsFromScratch(t *testing.T) {
	for file, data := range oracleLabs(t) {
		lab, err := Parse(file, data)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		for _, name := range append([]string{"base"}, lab.Measured()...) {
			got, gotErrs := lab.Source.Variant(name)
			want, wantErrs := variantFromScratch(lab.Source.(*Raw), name)
			if fmt.Sprint(gotErrs) != fmt.Sprint(wantErrs) {
				t.Errorf("%s, variant %s: problems\n%v\nwant\n%v", file, name, gotErrs, wantErrs)
				continue
			}
			gotJSON, err1 := json.Marshal(got)
			wantJSON, err2 := json.Marshal(want)
			if err1 != nil || err2 != nil || string(gotJSON) != string(wantJSON) {
				t.Errorf("%s, variant %s: JSON\n%s\nwant\n%s (%v, %v)", file, name, gotJSON, wantJSON, err1, err2)
			}
			if !reflect.DeepEqual(comparable(got), comparable(want)) {
				t.Errorf("%s, variant %s: the lab differs from the one resolved from scratch", file, name)
			}
		}
	}
}

// Resolving a lab's variants resolves the file's tree once, when it is
// read, however many variants there are: a variant is a copy of that
// lab with its own keys applied.
func TestVariantsResolveTheFileOnce(t *testing.T) {
	for _, data := range [][]byte{variantsLab(50), sweepLab1000()} {
		before := resolves.Load()
		lab, err := Parse("many.yaml", data)
		if err != nil {
			t.Fatal(err)
		}
		labs, err := lab.ResolveVariants(lab.Measured())
		if err != nil {
			t.Fatal(err)
		}
		if err := lab.CheckVariants(lab.Measured()); err != nil {
			t.Fatal(err)
		}
		if n := resolves.Load() - before; n != 1 || len(labs) != len(lab.Measured()) {
			t.Errorf("Parse and two passes over %d variants resolved the file %d times, want 1", len(labs), n)
		}
		// The variants, which no variant changes, are held once, not once a variant.
		for _, v := range labs {
			if len(v.Variants) != len(lab.Variants) || &v.Variants[0] != &labs[0].Variants[0] {
				t.Fatalf("a variant's lab holds its own copy of the %d variants", len(lab.Variants))
			}
		}
	}
}

// ptrKey is a pointer's identity: its type and address.
type ptrKey struct {
	t reflect.Type
	p uintptr
}

// refs records where every pointer, slice and map reachable through
// exported fields points, by path; a lab's variants, sweep and source
// are left out (they are shared, read only).
func refs(v reflect.Value, path string, into map[ptrKey]string) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Map:
		if v.IsNil() {
			return
		}
		k := ptrKey{v.Type(), v.Pointer()}
		if _, ok := into[k]; ok {
			return
		}
		into[k] = path
		if v.Kind() == reflect.Map {
			for it := v.MapRange(); it.Next(); {
				refs(it.Value(), fmt.Sprintf("%s[%v]", path, it.Key()), into)
			}
			return
		}
		refs(v.Elem(), path, into)
	case reflect.Slice:
		if v.Cap() > 0 {
			into[ptrKey{v.Type(), v.Pointer()}] = path
		}
		for i := range v.Len() {
			refs(v.Index(i), fmt.Sprintf("%s[%d]", path, i), into)
		}
	case reflect.Array:
		for i := range v.Len() {
			refs(v.Index(i), fmt.Sprintf("%s[%d]", path, i), into)
		}
	case reflect.Interface:
		if !v.IsNil() {
			refs(v.Elem(), path, into)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if f.IsExported() && !(v.Type() == reflect.TypeFor[topologies.Lab]() && (f.Name == "Variants" || f.Name == "Sweep" || f.Name == "Source")) {
				refs(v.Field(i), path+"."+f.Name, into)
			}
		}
	}
}

// Two labs made of one file, the lab as written and each variant's,
// share no memory a variant or a caller changes (lab run's --quick
// shrinks a variant's experiments in place), as labs resolved from
// scratch shared none.
func TestVariantLabsShareNothing(t *testing.T) {
	for file, data := range oracleLabs(t) {
		lab, err := Parse(file, data)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[ptrKey]string{}
		refs(reflect.ValueOf(lab), "lab", seen)
		// seen holds addresses, not pointers: the labs stay reachable so
		// the collector cannot free one and hand its memory to a later
		// variant, which would read as sharing.
		alive := []*topologies.Lab{lab}
		for _, name := range append([]string{"base"}, lab.Measured()...) {
			v, errs := lab.Source.Variant(name)
			if errs != nil {
				continue // a bad variant (nodes.yaml's): no lab
			}
			alive = append(alive, v)
			mine := map[ptrKey]string{}
			refs(reflect.ValueOf(v), "lab", mine)
			for k, path := range mine {
				if other, ok := seen[k]; ok {
					t.Fatalf("%s: variant %s's %s is %s of an earlier lab", file, name, path, other)
				}
			}
			for k, path := range mine {
				seen[k] = path
			}
		}
		runtime.KeepAlive(alive)
	}
}

// A variant's name names its result files (virtual-NAME.json): a name
// that is not a plain file name fails at its line, and so does a swept
// value that would make one.
func TestVariantNamesAreFileNames(t *testing.T) {
	const head = "name: x\ntopology:\n  nodes:\n    h1: {kind: host, ipv4: 10.0.0.1/24}\n    h2: {kind: host, ipv4: 10.0.0.2/24}\n    sw1: {kind: switch}\n  links:\n    - endpoints: [\"h1:eth0\", \"sw1:p1\"]\n    - endpoints: [\"h2:eth0\", \"sw1:p2\"]\n"
	for _, name := range []string{`"<img src=x onerror=alert(1)>"`, `a/b`, `../up`, `.hidden`, `-rf`, `"two words"`, strings.Repeat("x", 65), `"a\u0000b"`} {
		_, err := Parse("v.yaml", []byte(head+"variants:\n  - {name: "+name+", set: [{link: \"h1:eth0\", rate: 10M}]}\n"))
		if err == nil || !strings.Contains(err.Error(), "v.yaml:11: variants[0].name: ") || !strings.Contains(err.Error(), "names its result files") {
			t.Errorf("variant name %s: %v", name, err)
		}
	}
	for _, name := range []string{"fast", "rtt-40ms", "amsel1-nt", "v1.2", "_x", "A_b-C.d", strings.Repeat("x", 64)} {
		if _, err := Parse("v.yaml", []byte(head+"variants:\n  - {name: "+name+", set: [{link: \"h1:eth0\", rate: 10M}]}\n")); err != nil {
			t.Errorf("variant name %s: %v", name, err)
		}
	}
	// Every kind of swept value makes a name that passes.
	lab, err := Parse("v.yaml", []byte(head+"sweep:\n  - {link: \"h1:eth0\", rate: [155.52M, 1G]}\n  - {link: \"h2:eth0\", delay: [1.5ms, 100µs]}\n  - {link: \"h2:eth0\", loss: [0.1%, 0]}\n  - {node: sw1, cpu: [{}, {per_packet: 10us, rate: 1G}]}\n  - {node: sw1, kind: [switch, hub]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := lab.Measured()[1]; got != "rate=155.52M,delay=1.5ms,loss=0.1%,cpu=none,kind=hub" {
		t.Errorf("a grid point is named %q", got)
	}
	_, err = Parse("v.yaml", []byte(head+"sweep:\n  - {link: \"h2:eth0\", loss: [\"1 %\", 2%]}\n"))
	if err == nil || !strings.Contains(err.Error(), `v.yaml:11: sweep[0].loss[0]: "1 %": a value names the grid's points`) {
		t.Errorf("a swept value with a space: %v", err)
	}
	var long []string
	for i := range 12 {
		long = append(long, fmt.Sprintf("  - {link: \"h2:eth0\", name: a_long_parameter_name_%d, delay: [%dms]}\n", i, i))
	}
	_, err = Parse("v.yaml", []byte(head+"sweep:\n"+strings.Join(long, "")))
	if err == nil || !strings.Contains(err.Error(), "v.yaml:11: sweep: the grid's points would have names of up to") {
		t.Errorf("a grid of long names: %v", err)
	}
}

// Named variants are bounded as a grid's points are.
func TestNamedVariantsAreBounded(t *testing.T) {
	if _, err := Parse("v.yaml", variantsLab(MaxVariants)); err != nil {
		t.Fatal(err)
	}
	_, err := Parse("v.yaml", variantsLab(MaxVariants+1))
	if err == nil || !strings.Contains(err.Error(), "v.yaml:14: variants: 1001 variants: a lab file holds at most 1000") {
		t.Errorf("%d variants: %v", MaxVariants+1, err)
	}
}

// An experiment's matrix is bounded: 1.8 M points in one experiment fail
// at its line, as does a quick matrix as big.
func TestExperimentPointsAreBounded(t *testing.T) {
	sizes := make([]string, 300)
	for i := range sizes {
		sizes[i] = fmt.Sprint(i + 1)
	}
	lab := func(exp string) string {
		return "name: x\ntopology:\n  nodes:\n    h1: {kind: host, ipv4: 10.0.0.1/24}\n    h2: {kind: host, ipv4: 10.0.0.2/24}\n  links:\n    - endpoints: [\"h1:eth0\", \"h2:eth0\"]\nexperiments:\n  - " + exp + "\n"
	}
	all := "[TCP_STREAM, TCP_MAERTS, UDP_STREAM, TCP_RR, UDP_RR, TCP_CRR]"
	for _, tc := range []struct{ name, exp, want string }{
		{"1.8 M points", "{name: e, from: h1, to: h2, tests: " + all + ", sizes: [" + strings.Join(sizes, ", ") + "], repetitions: 1000}",
			"x.yaml:9: experiments[0]: 6 tests × 300 sizes × 1 sockbufs × 1000 repetitions make more than 10000 points, an experiment's most"},
		{"a quick matrix", "{name: e, from: h1, to: h2, tests: [TCP_STREAM], quick: {tests: " + all + ", sizes: [" + strings.Join(sizes, ", ") + "], repetitions: 10}}",
			"x.yaml:9: experiments[0].quick: 6 tests × 300 sizes × 1 sockbufs × 10 repetitions make more than 10000 points"},
		{"the most", "{name: e, from: h1, to: h2, tests: [TCP_STREAM, TCP_RR], sizes: [1, 2, 3, 4, 5], sockbufs: [0, 65536], repetitions: 500}", ""},
	} {
		_, err := Parse("x.yaml", []byte(lab(tc.exp)))
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

// FuzzVariantsAsFromScratch: whatever lab Parse accepts, each variant it
// measures is the lab resolving the whole file again for it makes, or
// fails with the same problems.
func FuzzVariantsAsFromScratch(f *testing.F) {
	for _, name := range []string{"whatif.yaml", "praktikum.yaml", "gns3-mpls.yaml", "atm-sweep.yaml"} {
		data, err := os.ReadFile(filepath.Join("..", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(sweepLab))
	f.Add(nodesLab(8, "variants:\n  - {name: slow, set: [{link: \"h0:eth0\", rate: 10M, loss: 1%}, {node: s1, kind: hub}]}\n  - {name: busy, set: [{node: s0, cpu: {per_packet: 10us}, buffer: 64KiB}, {node: r1, cost: {ip: 5us}}]}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		lab, err := Parse("fuzz.yaml", data)
		if err != nil {
			return
		}
		for _, name := range append([]string{"base"}, lab.Measured()...) {
			got, gotErrs := lab.Source.Variant(name)
			want, wantErrs := variantFromScratch(lab.Source.(*Raw), name)
			if fmt.Sprint(gotErrs) != fmt.Sprint(wantErrs) || !reflect.DeepEqual(comparable(got), comparable(want)) {
				t.Fatalf("variant %s: %v, want %v; or the labs differ", name, gotErrs, wantErrs)
			}
		}
	})
}
