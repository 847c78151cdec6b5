package report

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/atmlab/atmlab/harness/labrun"
)

// compare sets each hardware figure beside the emulated mean of the
// matching points (the same test, experiment if named, size if given,
// tool: atmlab's own unless named), with the difference in percent: (emulated − hardware)
// / hardware.
func compare(hw []labrun.HardwareFigure, recs []labrun.Record) string {
	var b strings.Builder
	b.WriteString("## Compared with hardware\n\n| test | experiment | size (B) | hardware | as given | emulated | difference | source |\n|---|---|---:|---:|---|---:|---:|---|\n")
	for _, h := range hw {
		unit, scale := "Mbit/s", 1e6
		if isRR(h.Test) {
			unit, scale = "transactions/s", 1
		}
		test := h.Test
		if h.Tool != "" && h.Tool != "atmlab" {
			test += " by " + h.Tool
		}
		if h.Error != "" {
			fmt.Fprintf(&b, "| %s | %s | %d | | %s | | | %s (%s) |\n", test, h.Experiment, h.Size, h.As, h.Source, h.Error)
			continue
		}
		var sum float64
		var n, size int
		for _, r := range recs {
			if r.Test != h.Test || r.Tool != cmp.Or(h.Tool, "atmlab") || (h.Experiment != "" && r.Experiment != h.Experiment) || r.Error != "" || r.Result.Error != "" {
				continue
			}
			if h.Size != 0 && r.Size != h.Size {
				continue
			}
			if h.Size == 0 && r.Size > size { // no size given: the largest measured
				sum, n, size = 0, 0, r.Size
			}
			if h.Size == 0 && r.Size != size {
				continue
			}
			sum += r.Result.Figure()
			n++
		}
		if n == 0 {
			fmt.Fprintf(&b, "| %s | %s | %d | %.2f %s | %s | not measured | | %s |\n", test, h.Experiment, h.Size, h.Value/scale, unit, h.As, h.Source)
			continue
		}
		emu := sum / float64(n)
		fmt.Fprintf(&b, "| %s | %s | %d | %.2f %s | %s | %.2f %s | %+.1f %% | %s |\n",
			test, h.Experiment, max(h.Size, size), h.Value/scale, unit, h.As, emu/scale, unit, 100*(emu-h.Value)/h.Value, h.Source)
	}
	b.WriteString("\n")
	return b.String()
}

// hardwareSection sets the folder's reference figures, if it has any,
// beside the points measured, per clock.
func hardwareSection(p *page) (string, error) {
	hw, err := labrun.ReadFigures(p.dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) { // a folder without reference figures has no comparison
		return "", fmt.Errorf("the report would lack its comparison with the reference figures: %w", err)
	}
	if len(hw) == 0 {
		return "", nil
	}
	return byClock(p.recs, func(recs []labrun.Record) string { return compare(hw, recs) }), nil
}
