package placement

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/atmlab/atmlab/campaign"
	"github.com/atmlab/atmlab/topologies/labfile"
	"github.com/atmlab/atmlab/topologies/split"
)

// Load is the split lab of a lab file placed on engine: its parts and
// which of them share a cut (split.Of), its results into out (""
// for results/<lab>-split-<time>), its parts run by the atmlab bin (this
// one when "") or, on Kubernetes, campaign.DefaultImage.
func Load(file string, engine campaign.Engine, out, bin string) (Split, error) {
	s := Split{Engine: engine, Port: DefaultPort, Image: campaign.DefaultImage}
	var err error
	if s.File, err = filepath.Abs(file); err != nil {
		return s, err
	}
	lab, err := labfile.Load(s.File)
	if err != nil {
		return s, err
	}
	plan, err := split.Of(lab)
	if err != nil {
		return s, err
	}
	if plan == nil {
		return s, fmt.Errorf("%s has no parts: key: only a split lab is placed on an engine (docs/split.md)", file)
	}
	s.Lab = lab.Name
	index := map[string]int{}
	for k, p := range plan.Parts {
		s.Parts = append(s.Parts, p.Name)
		index[p.Name] = k
	}
	s.Peers = make([][]int, len(s.Parts))
	for _, c := range plan.Cuts {
		a, b := index[c.A], index[c.B]
		for _, pair := range [][2]int{{a, b}, {b, a}} {
			if !slices.Contains(s.Peers[pair[0]], pair[1]) {
				s.Peers[pair[0]] = append(s.Peers[pair[0]], pair[1])
			}
		}
	}
	for _, p := range s.Peers {
		slices.Sort(p)
	}
	if s.Src, err = os.ReadFile(s.File); err != nil {
		return s, err
	}
	if out == "" {
		out = filepath.Join("results", s.Lab+"-split-"+time.Now().Format("20060102-150405"))
	}
	if s.Out, err = filepath.Abs(out); err != nil {
		return s, err
	}
	if bin == "" {
		s.Binary, err = os.Executable()
	} else {
		s.Binary, err = filepath.Abs(bin)
	}
	return s, err
}

// Run is the command line's way in: atmlab up FILE --on ENGINE (up) or
// atmlab down FILE --on ENGINE, said on w.
func Run(ctx context.Context, file, engine string, up bool, w io.Writer) error {
	eng, err := campaign.ParseEngine(engine)
	if err != nil {
		return fmt.Errorf("--on %q: use local, slurm or kubernetes", engine)
	}
	s, err := Load(file, eng, "", "")
	if err != nil {
		return err
	}
	if up {
		return Up(ctx, s, w)
	}
	return Down(s, w)
}
