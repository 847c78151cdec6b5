package labrun

import (
	"cmp"
	"fmt"
)

// aboveCeiling is a tool whose own figures may read above a ceiling for a
// reason of its own: why, for a test, or "".
type aboveCeiling interface {
	aboveCeiling(test string) string
}

// AboveCeilingReason says why a stream point read above its path's
// theoretical ceiling ("" if it did not): no link carries more than its
// ceiling, so the excess is the measurement's, and the reason says whose.
// A point within a millionth of its ceiling (rounding) is not above it.
func (rec *Record) AboveCeilingReason() string {
	v := rec.Result.ThroughputBps
	if rec.Ceiling <= 0 || v <= rec.Ceiling*(1+1e-6) || rec.Error != "" || rec.Result.Error != "" {
		return ""
	}
	why := "the tool divided what arrived by a time a little shorter than the data took to arrive: it stops its clock when the sender stops, while what the link still queued arrives after"
	if t, ok := ToolOf(rec.Tool).(aboveCeiling); ok {
		why = cmp.Or(t.aboveCeiling(rec.Test), why)
	}
	return fmt.Sprintf("%.1f %% of the ceiling, above it: no link carries more than its ceiling; the %.2f %% excess is the measurement's: %s",
		100*v/rec.Ceiling, 100*(v/rec.Ceiling-1), why)
}
