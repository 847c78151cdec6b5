package labrun

import (
	"time"
)

// Progress is a lab run's state as a watcher (the live view) sees it: the
// point being measured, how far the run is, and the result that just
// landed.
type Progress struct {
	Variant string        `json:"variant"`
	Done    int           `json:"done"`
	Total   int           `json:"total"`
	ETA     time.Duration `json:"eta_ns"`           // -1 before the first point ends
	Point   *Point        `json:"point,omitempty"`  // being measured; nil when the run ends
	Result  *Record       `json:"result,omitempty"` // set once per point, when its result is written
}

// watch tells r.Watch, if set, how the run stands.
func (r *Runner) watch(done, total int, start time.Time, p *Point, rec *Record) {
	if r.Watch == nil {
		return
	}
	eta := time.Duration(-1)
	if done > 0 {
		eta = time.Since(start) / time.Duration(done) * time.Duration(total-done)
	}
	r.Watch(Progress{Variant: r.Variant, Done: done, Total: total, ETA: eta, Point: p, Result: rec})
}
