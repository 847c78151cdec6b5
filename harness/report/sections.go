package report

import (
	"context"
	"path/filepath"
	"sync"

	"github.com/atmlab/atmlab/harness/labrun"
	"github.com/atmlab/atmlab/harness/results"
	"github.com/atmlab/atmlab/topologies"
)

// page is what a report is drawn from: the folder (figures are written
// into it), its records, their series and the labs they were measured on.
type page struct {
	dir   *results.Folder
	title string
	recs  []labrun.Record
	all   []*series // recs grouped, with theory lines
	labs  folderLabs
	lab   *topologies.Lab // labs.lab: nil when the folder has none
	figs  []string        // the figures drawn, in the order figures lists them
}

// figures is the registry of the report's figures, each a file of this
// package: Write draws them in this order and the figures section shows
// them so. A new figure is a file and a line here.
var figures = []func(p *page) ([]string, error){
	gridFigures,       // a sweep's figures are its main ones (grid.go)
	labFigures,        // then the lab's own (labfigures.go)
	throughputFigures, // then throughput, intervals, transactions (plots.go)
	intervalFigures,
	transactionFigures,
}

// sections is the registry of report.md's sections, each a file of this
// package, in the order the report shows them; a section with nothing to
// say returns "". A new section is a file and a line here.
var sections = []func(p *page) (string, error){
	headSection,     // the title and what the figures mean (head.go)
	quickSection,    // a --quick run's warning (head.go)
	labsSection,     // where the labs came from, if not spec.json (labs.go)
	missingSection,  // a merge's points no shard measured (missing.go)
	notesSection,    // the lab's notes (study.go)
	figuresSection,  // the figures drawn (plots.go)
	gridSection,     // a sweep's grid (grid.go)
	pointsSection,   // each series point by point (tables.go)
	studySection,    // grades and findings (study.go)
	pingSection,     // the emulator's added latency (ping.go)
	clocksSection,   // the points measured in both clocks (clocks.go)
	variantsSection, // the variants beside the base lab (variants.go)
	hardwareSection, // the reference figures beside the measured (hardware.go)
}

// Write renders report.md and a self-contained report.html with
// plots (PNG and SVG) from a results folder, which must be the caller's
// own (results.Open): its files are read only if regular and bounded, and
// written only by replacing them, never through a link. It stops reading
// when ctx ends.
func Write(ctx context.Context, path string) error {
	dir, err := results.Open(path)
	if err != nil {
		return err
	}
	defer dir.Close()
	recs, err := labrun.Records(ctx, dir)
	if err != nil {
		return err
	}
	labs, err := readLabs(dir)
	if err != nil {
		return err
	}
	p := &page{dir: dir, title: filepath.Base(dir.Path()), recs: recs, all: group(recs), labs: labs, lab: labs.lab}
	theoryLinesOf(labs.variant, p.all)
	if err := p.draw(); err != nil {
		return err
	}
	md, err := p.markdown()
	if err != nil {
		return err
	}
	if err := dir.WriteFile("report.md", []byte(md), 0o644); err != nil {
		return err
	}
	return writeHTML(dir, p.title, md, p.figs)
}

// draw draws the figures side by side, one goroutine each (a run's
// report comes after its points, and drawing and compressing the PNGs is
// most of it: on two cores half the wait), and lists their names in the
// order figures gives them; the first error in that order is returned.
func (p *page) draw() error {
	names := make([][]string, len(figures))
	errs := make([]error, len(figures))
	var wg sync.WaitGroup
	for i, draw := range figures {
		wg.Go(func() { names[i], errs[i] = draw(p) })
	}
	wg.Wait()
	for i := range figures {
		if errs[i] != nil {
			return errs[i]
		}
		p.figs = append(p.figs, names[i]...)
	}
	return nil
}

// markdown is report.md: every section in turn.
func (p *page) markdown() (string, error) {
	var md []byte
	for _, section := range sections {
		s, err := section(p)
		if err != nil {
			return "", err
		}
		md = append(md, s...)
	}
	return string(md), nil
}
