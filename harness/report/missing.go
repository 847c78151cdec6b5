package report

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/atmlab/atmlab/harness/labrun"
)

// missingSection is the report's list of the campaign's points no shard
// measured, from a merge's campaign.json: none without one (a folder
// from before shards), an error if it does not read.
func missingSection(p *page) (string, error) {
	id, err := labrun.IdentityOf(p.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	if len(id.Missing) == 0 {
		return "", nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "## Missing points\n\n%d of the campaign's %d points are in none of the folders merged (%s):\n\n", len(id.Missing), id.Points, strings.Join(id.Merged, ", "))
	for _, m := range id.Missing {
		b.WriteString("- " + m + "\n")
	}
	b.WriteString("\n")
	return b.String(), nil
}
