package report

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/atmlab/atmlab/harness/labrun"
)

// pingSection is the report's note on the emulator's added latency: each
// path's ping when its lab came up beside a plain veth pair's, per
// variant.
func pingSection(p *page) (string, error) {
	return pingNote(p.recs), nil
}

// pingNote is pingSection of records.
func pingNote(recs []labrun.Record) string {
	type key struct{ variant, from, to string }
	seen := map[key]bool{}
	var b strings.Builder
	for _, r := range recs {
		k := key{r.Variant, r.From, r.To}
		if r.PathRTT == 0 || seen[k] {
			continue
		}
		seen[k] = true
		if b.Len() == 0 {
			b.WriteString("## The emulator's added latency\n\nA ping through the emulator when the lab came up (median of 10) against a plain veth pair between two namespaces: the excess is the model's own serialization and delays plus what the emulator adds. Each point's table gives the emulator's release lateness during it.\n\n| variant | path | ping | veth pair | excess |\n|---|---|---:|---:|---:|\n")
		}
		veth, excess := "", ""
		if r.VethRTT > 0 {
			veth, excess = fmt.Sprintf("%.1f µs", r.VethRTT), fmt.Sprintf("%+.1f µs", r.PathRTT-r.VethRTT)
		}
		fmt.Fprintf(&b, "| %s | %s -> %s | %.1f µs | %s | %s |\n", cmp.Or(r.Variant, "base"), r.From, r.To, r.PathRTT, veth, excess)
	}
	if b.Len() > 0 {
		b.WriteString("\n")
	}
	return b.String()
}
