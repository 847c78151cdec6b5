package labrun

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/atmlab/atmlab/harness/clock"
	"github.com/atmlab/atmlab/harness/results"
	"github.com/atmlab/atmlab/topologies"
)

// Shard is one of N parts of a campaign, K from 1 to N (as Slurm numbers
// an array's tasks). A point's part is a hash of what names it, not its
// position, so it stays in its shard whatever else the campaign gains or
// loses. The zero Shard is the whole campaign.
type Shard struct{ K, N int }

// ParseShard reads --shard K/N.
func ParseShard(s string) (Shard, error) {
	k, n, ok := strings.Cut(s, "/")
	K, err1 := strconv.Atoi(k)
	N, err2 := strconv.Atoi(n)
	if !ok || err1 != nil || err2 != nil || N < 1 || K < 1 || K > N {
		return Shard{}, fmt.Errorf("--shard %q: want K/N with 1 <= K <= N, such as 1/4 (K counts from 1, as Slurm's array task ids)", s)
	}
	return Shard{K, N}, nil
}

// String is "K/N", or "" for the whole campaign.
func (s Shard) String() string {
	if s.N == 0 {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.K, s.N)
}

// PointKey names a point in a campaign: its variant, experiment, test,
// size, socket buffer and repetition (a point measured by both clocks is
// one point).
func PointKey(p Point) string {
	return fmt.Sprintf("%s\x00%s\x00%s\x00%d\x00%d\x00%d", p.Variant, p.Experiment, p.Test, p.Size, p.SockBuf, p.Rep)
}

// Has reports whether the point is this shard's.
func (s Shard) Has(p Point) bool {
	if s.N <= 1 {
		return true
	}
	sum := sha256.Sum256([]byte(PointKey(p)))
	return int(binary.BigEndian.Uint64(sum[:8])%uint64(s.N))+1 == s.K
}

// ShardPoints is a variant's points that fall in the shard, in matrix order.
func ShardPoints(lab *topologies.Lab, variant string, s Shard) []Point {
	pts := Points(lab)
	for i := range pts {
		pts[i].Variant = variant
	}
	return slices.DeleteFunc(pts, func(p Point) bool { return !s.Has(p) })
}

// IdentityFile is the campaign identity lab run writes beside results.jsonl.
const IdentityFile = "campaign.json"

// Identity is what a results folder was measured from: the merge of shard
// folders refuses to join results of different lab files, atmlab
// versions, clocks or --quick, and finds missing and duplicated points by
// it.
type Identity struct {
	Lab     string `json:"lab"`        // the lab's name
	File    string `json:"lab_file"`   // as given to lab run
	SHA256  string `json:"lab_sha256"` // of the lab file's bytes
	Version string `json:"atmlab_version"`
	Clock   string `json:"clock"` // lab run's --clock: real, virtual or both
	Quick   bool   `json:"quick,omitempty"`
	Shard   string `json:"shard,omitempty"` // K/N; empty: the whole campaign
	Points  int    `json:"points"`          // planned here, every clock's
	// A merge's: the folders it read and the points none of them had.
	Merged  []string `json:"merged_from,omitempty"`
	Missing []string `json:"missing,omitempty"`
}

// NewIdentity is the identity of a campaign of the lab file's bytes.
func NewIdentity(lab *topologies.Lab, src []byte, clock string, quick bool, s Shard) Identity {
	return Identity{Lab: lab.Name, File: lab.File, SHA256: fmt.Sprintf("%x", sha256.Sum256(src)), Version: Version(),
		Clock: clock, Quick: quick, Shard: s.String()}
}

// WriteIdentity writes the folder's campaign.json.
func WriteIdentity(f *results.Folder, id Identity) error {
	b, err := json.MarshalIndent(id, "", "  ")
	if err != nil {
		return err
	}
	return f.WriteFile(IdentityFile, append(b, '\n'), 0o644)
}

// ReadIdentity reads DIR/campaign.json (any user's folder: it only reads).
func ReadIdentity(dir string) (Identity, error) {
	f, err := results.OpenRead(dir)
	if err != nil {
		return Identity{}, err
	}
	defer f.Close()
	return IdentityOf(f)
}

// IdentityOf reads the folder's campaign.json and checks what a merge
// relies on: a known clock, a shard K/N or none, no negative count.
func IdentityOf(f *results.Folder) (Identity, error) {
	b, err := f.ReadFile(IdentityFile, 0)
	if err != nil {
		return Identity{}, err
	}
	return parseIdentity(f.Join(IdentityFile), b)
}

// isChoice says whether s is a run's clocks as --clock gives them (real,
// virtual or both; campaign.json always names them).
func isChoice(s string) bool {
	_, err := clock.ParseChoice(s)
	return s != "" && err == nil
}

func parseIdentity(file string, b []byte) (Identity, error) {
	var id Identity
	if err := results.DecodeJSON(file, b, &id); err != nil {
		return id, err
	}
	switch {
	case id.Points < 0:
		return id, fmt.Errorf("%s: points %d: a campaign plans 0 or more points", file, id.Points)
	case !isChoice(id.Clock):
		return id, fmt.Errorf("%s: clock %q: want real, virtual or both", file, id.Clock)
	case len(id.Missing) > id.Points:
		return id, fmt.Errorf("%s: %d points missing of %d planned", file, len(id.Missing), id.Points)
	}
	if id.Shard != "" {
		if _, err := ParseShard(id.Shard); err != nil {
			return id, fmt.Errorf("%s: shard: %w", file, err)
		}
	}
	return id, nil
}

// Version is this atmlab's module version and VCS revision, as the Go
// toolchain stamped them into the binary; without a revision (go build
// -buildvcs=false, or outside a checkout) the executable's own SHA-256
// stands in, so that two builds of different code never pass for one.
func Version() string { return version() }

var version = sync.OnceValue(func() string { return buildVersion(os.Executable) })

// BuildStamp is what the Go toolchain stamped into this binary: the main
// module's version ("" for a plain build in a checkout), its VCS revision
// ("" without one) and whether the tree had changes; ok is false when the
// binary carries no build information.
func BuildStamp() (module, rev string, modified, ok bool) {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "", "", false, false
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	return bi.Main.Version, rev, modified, true
}

func buildVersion(executable func() (string, error)) string {
	module, rev, modified, ok := BuildStamp()
	if !ok {
		return "unknown"
	}
	v := cmp.Or(module, "(devel)")
	if rev != "" {
		dirty := ""
		if modified {
			dirty = "+modified"
		}
		return v + " " + rev[:min(12, len(rev))] + dirty
	}
	if exe, err := executable(); err == nil {
		if f, err := os.Open(exe); err == nil {
			defer f.Close()
			h := sha256.New()
			if _, err := io.Copy(h, f); err == nil {
				v += fmt.Sprintf(" binary sha256 %x", h.Sum(nil)[:6])
			}
		}
	}
	return v
}
