package report

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/atmlab/atmlab/harness/labrun"
	"github.com/atmlab/atmlab/harness/results"
	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/labfile"
)

// folderLabs is what a results folder says of its labs: for findings,
// grades, figures, notes and the sweep, the lab; for theory lines, each
// variant's lab as measured.
type folderLabs struct {
	lab  *topologies.Lab // nil: the folder has neither spec.json nor lab.yaml
	spec *topologies.Spec
	// note is Markdown for the report's head when the labs are not the
	// ones the runs were built from.
	note string
}

// oldFolderNote says where a folder without spec.json got its labs.
const oldFolderNote = "This results folder has no `spec.json` (it was written before `lab run` wrote one): its findings, figures and theory lines come from its `lab.yaml`, resolved again by this atmlab, which may differ from the labs its runs were built from.\n\n"

// readLabs reads the labs lab run wrote beside its results (spec.json):
// what the runs measured. A folder written before spec.json existed has
// its lab.yaml resolved again, and says so in a note. A folder with
// neither has no lab; one that does not read is an error, not a shorter
// report.
func readLabs(dir *results.Folder) (folderLabs, error) {
	b, err := dir.ReadFile(topologies.SpecFile, 0)
	if err == nil {
		spec, err := topologies.ReadSpec(b)
		if err != nil {
			return folderLabs{}, fmt.Errorf("%v: so spec.json does not read and the report would lack its findings, figures and theory; remove it to render from lab.yaml instead", results.Locate(dir.Join(topologies.SpecFile), b, err))
		}
		// Findings, figures and the sweep are the same in every variant's
		// lab; the lab as written when it was measured (a sweep's is not).
		lab := spec.Lab("base")
		if lab == nil {
			lab = spec.Variants[0].Lab
		}
		return folderLabs{lab: lab, spec: spec}, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return folderLabs{}, err
	}
	src, err := dir.ReadFile(labrun.LabFile, labfile.MaxFileBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return folderLabs{}, nil
	} else if err != nil {
		return folderLabs{}, err
	}
	lab, err := labfile.Parse(dir.Join(labrun.LabFile), src)
	if err != nil {
		return folderLabs{}, fmt.Errorf("%s does not load, so the report would lack its findings, figures and theory: fix it, or remove it to render the results alone: %w", dir.Join(labrun.LabFile), err)
	}
	return folderLabs{lab: lab, note: oldFolderNote}, nil
}

// labsSection says where the labs came from when not from spec.json.
func labsSection(p *page) (string, error) { return p.labs.note, nil }

// variant returns the named variant's lab ("" is base), or nil if the
// folder has none.
func (f folderLabs) variant(name string) *topologies.Lab {
	if name == "" {
		name = "base"
	}
	if f.spec != nil {
		return f.spec.Lab(name)
	}
	if f.lab == nil {
		return nil
	}
	lab, err := f.lab.WithVariant(name)
	if err != nil {
		return nil
	}
	return lab
}
