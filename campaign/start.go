package campaign

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/atmlab/atmlab/harness/results"
	"github.com/atmlab/atmlab/topologies/labfile"
)

// NewPlan is the plan of the lab file's campaign into the folder out, its
// shards run by bin (this atmlab when empty): each path made absolute, the
// lab loaded for its name and refused without experiments. It returns the
// lab file's bytes too (Kubernetes' ConfigMap carries them). The caller
// sets the rest (shards, clock, quick, image) and checks it (Check).
func NewPlan(file, out, bin string) (Plan, []byte, error) {
	var p Plan
	var err error
	if p.Lab, err = filepath.Abs(file); err != nil {
		return p, nil, err
	}
	lab, err := labfile.Load(p.Lab)
	if err != nil {
		return p, nil, err
	}
	if len(lab.Experiments) == 0 {
		return p, nil, fmt.Errorf("%s has no experiments: add an experiments: section (see docs/experiments.md)", file)
	}
	src, err := os.ReadFile(p.Lab)
	if err != nil {
		return p, nil, err
	}
	p.Name = lab.Name
	if p.Out, err = filepath.Abs(out); err != nil {
		return p, nil, err
	}
	if bin == "" {
		p.Binary, err = os.Executable()
	} else {
		p.Binary, err = filepath.Abs(bin)
	}
	return p, src, err
}

// Write writes what a cluster engine (Slurm, Kubernetes) needs into the
// campaign's folder, the caller's own (an older script is replaced, never
// written through a link), and returns the files' paths in order.
func (p Plan) Write(eng Engine, src []byte) ([]string, error) {
	var files []File
	var err error
	switch eng {
	case Slurm:
		files, err = SlurmFiles(p)
	case Kubernetes:
		files, err = KubernetesFiles(p, src)
	default:
		return nil, fmt.Errorf("campaign: the %v engine writes no files: it runs the shards", eng)
	}
	if err != nil {
		return nil, err
	}
	dir, err := results.Create(p.Out, results.Force)
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	var paths []string
	for _, f := range files {
		if err := dir.WriteFile(f.Name, f.Data, os.FileMode(f.Mode)); err != nil {
			return paths, err
		}
		paths = append(paths, filepath.Join(p.Out, f.Name))
	}
	return paths, nil
}
