package report

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/atmlab/atmlab/harness/labrun"
)

// compareVariants sets each variant's points beside the base lab's: the
// same experiment, test, tool, size and socket buffer, as (B − A) / A.
func compareVariants(recs []labrun.Record) string {
	type key struct {
		exp, test, tool string
		size, buf       int
	}
	means := map[string]map[key][2]float64{} // variant → point → (sum, n)
	var variants []string
	var keys []key
	for _, r := range recs {
		if r.Error != "" || r.Result.Error != "" {
			continue
		}
		v := cmp.Or(r.Variant, "base")
		if means[v] == nil {
			means[v] = map[key][2]float64{}
			if v != "base" {
				variants = append(variants, v)
			}
		}
		k := key{r.Experiment, r.Test, r.Tool, r.Size, r.SockBuf}
		m := means[v][k]
		if v == "base" && m[1] == 0 {
			keys = append(keys, k)
		}
		means[v][k] = [2]float64{m[0] + r.Result.Figure(), m[1] + 1}
	}
	if len(variants) == 0 || means["base"] == nil {
		return ""
	}
	var b strings.Builder
	b.WriteString("## Variants compared with the lab as written\n\n| experiment | test | tool | size (B) | sockbuf | variant | base | variant's | (B − A) / A |\n|---|---|---|---:|---:|---|---:|---:|---:|\n")
	for _, v := range variants {
		for _, k := range keys {
			a, bv := means["base"][k], means[v][k]
			if a[1] == 0 || bv[1] == 0 {
				continue
			}
			scale, unit := 1e6, " Mbit/s"
			if isRR(k.test) {
				scale, unit = 1, "/s"
			}
			ma, mb := a[0]/a[1], bv[0]/bv[1]
			fmt.Fprintf(&b, "| %s | %s | %s | %d | %d | %s | %.2f%s | %.2f%s | %+.1f %% |\n", k.exp, k.test, k.tool, k.size, k.buf, v, ma/scale, unit, mb/scale, unit, 100*(mb-ma)/ma)
		}
	}
	b.WriteString("\n")
	return b.String()
}

// variantsSection sets each variant's points beside the base lab's, per
// clock.
func variantsSection(p *page) (string, error) { return byClock(p.recs, compareVariants), nil }
