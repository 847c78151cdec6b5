package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
)

// outputs lists the -o formats each verb honours, by command path; a verb
// not listed prints only its table (or its own output) and refuses the
// others, so that -o never silently does nothing.
var outputs = map[string][]string{
	"atmlab calc":        {"table", "json", "csv"},
	"atmlab perf client": {"table", "json", "csv"},
	"atmlab perf memcpy": {"table", "json"},
	"atmlab down":        {"table", "json"},
	"atmlab set":         {"table", "json"},
	"atmlab sim csma":    {"table", "json"},
	"atmlab stats":       {"table", "json"},
	"atmlab validate":    {"table", "json"},
	"atmlab ls":          {"table", "json"},
	"atmlab inspect":     {"table", "json"},
	"atmlab version":     {"table", "json"},
	"atmlab check":       {"table", "json"},
}

// checkOutput refuses an -o format that cmd does not honour.
func checkOutput(cmd *cobra.Command, format string) error {
	if format != "table" && format != "json" && format != "csv" {
		return usageError{fmt.Errorf("-o %q: use table, json or csv", format)}
	}
	have, ok := outputs[cmd.CommandPath()]
	if !ok {
		have = []string{"table"}
	}
	if slices.Contains(have, format) {
		return nil
	}
	if len(have) == 1 {
		return usageError{fmt.Errorf("%s: -o %s is not supported: this command prints only its own output (drop -o)", cmd.CommandPath(), format)}
	}
	return usageError{fmt.Errorf("%s: -o %s is not supported: use -o %s", cmd.CommandPath(), format, strings.Join(have, " or -o "))}
}
