package labfile

import (
	"fmt"
	"strings"
	"testing"

	"github.com/atmlab/atmlab/internal/labtest"
	"github.com/atmlab/atmlab/topologies"
)

// variantsLab is a 3-node lab (two hosts on a switch) with n named
// variants, each setting a host link's rate and delay and the switch's buffer.
func variantsLab(n int) []byte {
	var src strings.Builder
	src.WriteString(labtest.Lab("two-hosts-switch", "many", `experiments:
  - {name: s, from: h1, to: h2, tests: [TCP_STREAM, TCP_RR], sizes: [64, 1448]}
variants:
`))
	for i := range n {
		fmt.Fprintf(&src, "  - {name: v%d, set: [{link: \"h1:eth0\", rate: %dM, delay: %dus}, {node: sw1, buffer: %dKiB}]}\n", i, 1+i%100, i, 2+i)
	}
	return []byte(src.String())
}

// sweepLab1000 is the same 3-node lab with a 10 × 10 × 10 grid.
func sweepLab1000() []byte {
	var rates, delays, losses []string
	for i := range 10 {
		rates = append(rates, fmt.Sprintf("%dM", 10*(i+1)))
		delays = append(delays, fmt.Sprintf("%dms", i))
		losses = append(losses, fmt.Sprintf("%d%%", i))
	}
	return []byte(labtest.Lab("two-hosts-switch", "grid", fmt.Sprintf(`experiments:
  - {name: s, from: h1, to: h2, tests: [TCP_STREAM, TCP_RR], sizes: [64, 1448]}
sweep:
  - {link: ["h1:eth0", "h2:eth0"], rate: [%s]}
  - {link: "h2:eth0", delay: [%s]}
  - {link: "h1:eth0", loss: [%s]}
`, strings.Join(rates, ", "), strings.Join(delays, ", "), strings.Join(losses, ", "))))
}

// validate is what atmlab validate does with a lab file's bytes: the lab
// as written, then every variant lab run would measure.
func validate(tb testing.TB, data []byte) {
	lab, err := Parse("bench.yaml", data)
	if err == nil {
		err = lab.CheckVariants(lab.Measured())
	}
	if err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkValidateVariants shows validation linear in named variants.
func BenchmarkValidateVariants(b *testing.B) {
	for _, n := range []int{100, 1000} {
		data := variantsLab(n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for range b.N {
				validate(b, data)
			}
		})
	}
}

// BenchmarkValidateSweep1000 validates a grid of the most points a sweep
// may have.
func BenchmarkValidateSweep1000(b *testing.B) {
	data := sweepLab1000()
	for range b.N {
		validate(b, data)
	}
}

// BenchmarkValidateNodes shows validation linear in nodes: the lab of
// BenchmarkParseNodes with two variants.
func BenchmarkValidateNodes(b *testing.B) {
	for _, n := range []int{1000, 4000} {
		data := nodesLab(n, "variants:\n  - {name: slow, set: [{link: \"h0:eth0\", rate: 10M}]}\n  - {name: far, set: [{link: \"g0:eth0\", delay: 10ms}]}\n")
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for range b.N {
				validate(b, data)
			}
		})
	}
}

// spec.json grows with the variants, not their square: the lab file's
// variants and sweep are in the first lab only.
func TestSpecJSONHoldsVariantsOnce(t *testing.T) {
	lab, err := Parse("grid.yaml", sweepLab1000())
	if err != nil {
		t.Fatal(err)
	}
	size := func(n int) int {
		names := lab.Measured()[:n]
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
			t.Fatal(err)
		}
		for i, v := range spec.Variants {
			if held := len(v.Lab.Variants) > 0 || v.Lab.Sweep != nil; held != (i == 0) {
				t.Fatalf("%d points: lab %d holds the variants and sweep: %v", n, i, held)
			}
		}
		return len(b)
	}
	one, all := size(1), size(1000)
	if each := (all - one) / 999; each > 16<<10 { // a 3-node lab is about 4 KB; with the variants in each, 2 MB
		t.Errorf("a 1000-point grid's spec.json is %d bytes, %d a point after the first", all, each)
	}
}
