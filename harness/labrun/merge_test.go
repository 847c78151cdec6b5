package labrun

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/atmlab/atmlab/harness/perf"
	"github.com/atmlab/atmlab/harness/results"
	"github.com/atmlab/atmlab/internal/labtest"
	"github.com/atmlab/atmlab/topologies"
)

var mergeLab = labtest.Set(labtest.Lab("two-hosts", "m", `experiments:
  - {name: e, from: h1, to: h2, tests: [TCP_STREAM], sizes: [512, 1472]}
sweep:
  - {link: "h1:eth0", delay: [0s, 5ms]}
`), "topology.links[0].ethernet.rate", "10M")

// shardDir writes a results folder of the lab with the given points
// measured (a figure each) and identity.
func shardDir(t *testing.T, root, name string, id Identity, pts ...Point) string {
	t.Helper()
	dir := filepath.Join(root, name)
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "lab.yaml"), []byte(mergeLab), 0o644)
	if err := WriteIdentity(folder(t, dir), id); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, p := range pts {
		r := Record{Point: p, Clock: "virtual", At: "now"}
		r.Result.ThroughputBps = float64(p.Size) * 1e4
		j, _ := json.Marshal(r)
		b.Write(append(j, '\n'))
	}
	os.WriteFile(filepath.Join(dir, "results.jsonl"), []byte(b.String()), 0o644)
	return dir
}

// folder opens dir as a results folder to write into, closed at the
// test's end.
func folder(t *testing.T, dir string) *results.Folder {
	t.Helper()
	f, err := results.Create(dir, results.Force)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func pt(variant string, size int) Point {
	return Point{Variant: variant, Experiment: "e", Tool: "atmlab", Test: perf.TCPStream, Size: size, Rep: 1, From: "h1", To: "h2"}
}

func TestMerge(t *testing.T) {
	root := t.TempDir()
	id := Identity{Lab: "m", SHA256: "aa", Version: "v1", Clock: "virtual", Shard: "1/2"}
	a := shardDir(t, root, "a", id, pt("delay=5ms", 1472), pt("delay=0s", 512))
	id.Shard = "2/2"
	b := shardDir(t, root, "b", id, pt("delay=0s", 1472))
	out := filepath.Join(root, "out")
	m, err := Merge(t.Context(), out, []string{a, b})
	if err != nil {
		t.Fatal(err)
	}
	// In a whole run's order; the point neither has is listed.
	recs, err := ReadRecords(out)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range recs {
		got = append(got, pointText(r.Point, r.Clock))
	}
	want := []string{"delay=0s · e · TCP_STREAM · size 512 · sockbuf 0 · #1 (virtual time)", "delay=0s · e · TCP_STREAM · size 1472 · sockbuf 0 · #1 (virtual time)",
		"delay=5ms · e · TCP_STREAM · size 1472 · sockbuf 0 · #1 (virtual time)"}
	if !slices.Equal(got, want) || m.Records != 3 {
		t.Fatalf("merged %d records:\n%q\nwant\n%q", m.Records, got, want)
	}
	if !slices.Equal(m.Missing, []string{"delay=5ms · e · TCP_STREAM · size 512 · sockbuf 0 · #1 (virtual time)"}) {
		t.Fatalf("missing = %q", m.Missing)
	}
	mid, err := ReadIdentity(out)
	if err != nil || mid.Shard != "" || mid.Points != 4 || !slices.Equal(mid.Merged, []string{a, b}) || len(mid.Missing) != 1 || mid.SHA256 != "aa" {
		t.Fatalf("merged identity %+v, %v", mid, err)
	}
	csv, _ := os.ReadFile(filepath.Join(out, "results.csv"))
	if n := strings.Count(string(csv), "\n"); n != 4 {
		t.Fatalf("results.csv has %d lines, want a header and 3", n)
	}
}

// Folders that are not one campaign are refused, nothing written, each
// reason named.
func TestMergeConflicts(t *testing.T) {
	root := t.TempDir()
	id := Identity{Lab: "m", SHA256: "aa", Version: "v1", Clock: "virtual", Shard: "1/2"}
	a := shardDir(t, root, "a", id, pt("delay=0s", 512))
	for _, tc := range []struct {
		name string
		edit func(*Identity)
		pts  []Point
		want string
	}{
		{"lab file", func(i *Identity) { i.SHA256, i.File = "bb", "other.yaml" }, nil, "is from a different lab file (other.yaml, sha256 bb) than"},
		{"version", func(i *Identity) { i.Version = "v2" }, nil, "was measured by atmlab v2, " + a + " by v1"},
		{"clock", func(i *Identity) { i.Clock = "real" }, nil, "ran --clock real, " + a + " --clock virtual"},
		{"quick", func(i *Identity) { i.Quick = true }, nil, "ran --clock virtual --quick, " + a + " --clock virtual"},
		{"shard count", func(i *Identity) { i.Shard = "2/3" }, nil, "is shard 2/3, " + a + " shard 1/2: one campaign is cut into one number of shards"},
		{"same shard", func(*Identity) {}, nil, " are both shard 1/2"},
		{"duplicate", func(i *Identity) { i.Shard = "2/2" }, []Point{pt("delay=0s", 512)}, "delay=0s · e · TCP_STREAM · size 512 · sockbuf 0 · #1 (virtual time) is in " + a + " and "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bid := id
			tc.edit(&bid)
			b := shardDir(t, t.TempDir(), "b", bid, tc.pts...)
			out := filepath.Join(t.TempDir(), "out")
			_, err := Merge(t.Context(), out, []string{a, b})
			if err == nil || !strings.HasPrefix(err.Error(), "the folders do not make one campaign; nothing written:") || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Merge() = %v, want %q", err, tc.want)
			}
			if _, err := os.Stat(out); err == nil {
				t.Fatal("a refused merge wrote its folder")
			}
		})
	}
	if _, err := Merge(t.Context(), a, []string{a}); err == nil || !strings.Contains(err.Error(), "is one of the folders merged") {
		t.Fatalf("merge into an input: %v", err)
	}
	plain := filepath.Join(root, "plain")
	os.MkdirAll(plain, 0o755)
	if _, err := Merge(t.Context(), filepath.Join(root, "o"), []string{a, plain}); err == nil || !strings.Contains(err.Error(), "has no campaign.json") {
		t.Fatalf("merge of a folder without identity: %v", err)
	}
}

// A merge keeps the shards' spec.json, the labs their runs were built
// from, for the merged folder's report.
func TestMergeKeepsSpec(t *testing.T) {
	root := t.TempDir()
	id := Identity{Lab: "m", SHA256: "aa", Version: "v1", Clock: "virtual", Shard: "1/2"}
	a := shardDir(t, root, "a", id, pt("delay=0s", 512))
	id.Shard = "2/2"
	b := shardDir(t, root, "b", id, pt("delay=5ms", 512))
	spec := []byte(`{"variants": []}` + "\n")
	os.WriteFile(filepath.Join(b, topologies.SpecFile), spec, 0o644)
	out := filepath.Join(root, "out")
	if _, err := Merge(t.Context(), out, []string{a, b}); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(filepath.Join(out, topologies.SpecFile)); err != nil || string(got) != string(spec) {
		t.Fatalf("merged spec.json %q, %v; want the shards' %q", got, err, spec)
	}
}
