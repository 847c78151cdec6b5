package report

import (
	"fmt"

	"github.com/atmlab/atmlab/harness/labrun"
)

// headSection is the report's title and how to read its figures.
func headSection(p *page) (string, error) {
	return fmt.Sprintf("# atmlab report: %s\n\n%d results. Each figure is the mean of its repetitions; the plots show min–max as error bars and the path's theoretical ceiling as a dashed line.\n\n", p.title, len(p.recs)), nil
}

// quickSection warns that a --quick run's differences are within noise.
func quickSection(p *page) (string, error) {
	if !p.dir.Exists(labrun.QuickMarker) {
		return "", nil
	}
	return "This was a quick run (`--quick`): one short repetition of each point, so differences of a few per cent, and more for request/response rates, are within this machine's noise. A run without `--quick` repeats each point as the lab file says.\n\n", nil
}
