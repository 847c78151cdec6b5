package report

import (
	"context"
	"fmt"
	"io"

	"github.com/atmlab/atmlab/harness/labrun"
)

// Merge merges the shards' results folders dirs into out (labrun.Merge)
// and renders the merged report there.
func Merge(ctx context.Context, out string, dirs []string) (*labrun.Merged, error) {
	m, err := labrun.Merge(ctx, out, dirs)
	if err != nil {
		return nil, err
	}
	return m, Write(ctx, out)
}

// WarnMissing says on w which of the campaign's points none of the
// folders merged had (the first ten; the report lists them all).
func WarnMissing(w io.Writer, m *labrun.Merged, folders int) {
	n := len(m.Missing)
	if n == 0 {
		return
	}
	fmt.Fprintf(w, "warning: %d points of the campaign are in none of the %d folders (listed in the report):\n", n, folders)
	for i, p := range m.Missing {
		if i == 10 {
			fmt.Fprintf(w, "  and %d more\n", n-10)
			break
		}
		fmt.Fprintf(w, "  %s\n", p)
	}
}
