package labrun

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/atmlab/atmlab/harness/perf"
	"github.com/atmlab/atmlab/topologies/labfile"
)

func TestParseShard(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Shard
		ok   bool
	}{{"1/4", Shard{1, 4}, true}, {"4/4", Shard{4, 4}, true}, {"1/1", Shard{1, 1}, true},
		{"0/4", Shard{}, false}, {"5/4", Shard{}, false}, {"1/0", Shard{}, false}, {"2", Shard{}, false}, {"a/b", Shard{}, false}, {"-1/4", Shard{}, false}} {
		got, err := ParseShard(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseShard(%q) = %v, %v", tc.in, got, err)
		}
		if err != nil && err.Error() != fmt.Sprintf("--shard %q: want K/N with 1 <= K <= N, such as 1/4 (K counts from 1, as Slurm's array task ids)", tc.in) {
			t.Errorf("error text: %v", err)
		}
	}
	if (Shard{2, 4}).String() != "2/4" || (Shard{}).String() != "" {
		t.Error("String")
	}
}

// campaignPoints is a grid's points: variants × tests × sizes × reps.
func campaignPoints(variants, sizes []string) []Point {
	var pts []Point
	for _, v := range variants {
		for _, test := range []string{perf.TCPStream, perf.UDPStream, perf.TCPRR} {
			for _, size := range sizes {
				for rep := 1; rep <= 3; rep++ {
					var n int
					fmt.Sscan(size, &n)
					pts = append(pts, Point{Variant: v, Experiment: "e", Test: test, Size: n, Rep: rep})
				}
			}
		}
	}
	return pts
}

// Every point is in exactly one shard of N, for every N; the shards are
// near equal; and a point's shard is its key's, whatever the order or the
// other points of the campaign.
func TestShardKeying(t *testing.T) {
	var variants []string
	for r := range 6 {
		for d := range 4 {
			variants = append(variants, fmt.Sprintf("rate=%dM,delay=%dms", 10*(r+1), 5*d))
		}
	}
	pts := campaignPoints(variants, []string{"64", "512", "1472"}) // 24 × 3 × 3 × 3 = 648
	for n := 1; n <= 8; n++ {
		count := make([]int, n+1)
		for _, p := range pts {
			in := 0
			for k := 1; k <= n; k++ {
				if (Shard{k, n}).Has(p) {
					in++
					count[k]++
				}
			}
			if in != 1 {
				t.Fatalf("N=%d: %+v is in %d shards", n, p, in)
			}
		}
		for k := 1; k <= n; k++ {
			// A hash, not a deal: near equal, not equal (deterministic, so no flake).
			if want := len(pts) / n; count[k] < want*3/4 || count[k] > want*5/4 {
				t.Errorf("N=%d: shard %d has %d of %d points, not within 25%% of %d", n, k, count[k], len(pts), want)
			}
		}
	}
	// The same points in another order, among others: each keeps its shard.
	reversed := slices.Clone(variants)
	slices.Reverse(reversed)
	more := campaignPoints(append([]string{"rate=5M,delay=0ms"}, reversed...), []string{"1", "1472", "512", "9000", "64"})
	s := Shard{3, 4}
	for _, p := range more {
		if i := slices.Index(pts, p); i >= 0 && s.Has(p) != s.Has(pts[i]) {
			t.Fatalf("%+v changed shard", p)
		}
	}
	// Known answers: the key is variant, experiment, test, size, sockbuf
	// and repetition, hashed (SHA-256); they pin it across versions.
	for _, tc := range []struct {
		p    Point
		want int
	}{
		{Point{Variant: "base", Experiment: "streams", Test: perf.TCPStream, Size: 1472, Rep: 1}, 2},
		{Point{Variant: "base", Experiment: "streams", Test: perf.TCPStream, Size: 1472, Rep: 2}, 4},
		{Point{Variant: "rate=10M,delay=5ms", Experiment: "tcp", Test: perf.TCPRR, Size: 1, SockBuf: 65536, Rep: 1}, 1},
	} {
		got := 0
		for k := 1; k <= 4; k++ {
			if (Shard{k, 4}).Has(tc.p) {
				got = k
			}
		}
		if got != tc.want {
			t.Errorf("%+v is in shard %d/4, want %d", tc.p, got, tc.want)
		}
		// What does not name a point does not move it.
		q := tc.p
		q.Tool, q.From, q.To = "iperf3", "x", "y"
		if !(Shard{got, 4}).Has(q) {
			t.Errorf("tool or hosts moved %+v", tc.p)
		}
	}
}

// A runner measures its shard's points only.
func TestShardPoints(t *testing.T) {
	lab, err := labfile.Parse("s.yaml", []byte(`name: s
topology:
  nodes: {h1: {kind: host, ipv4: 10.0.0.1/24}, h2: {kind: host, ipv4: 10.0.0.2/24}}
  links: [{endpoints: ["h1:eth0", "h2:eth0"]}]
experiments:
  - {name: e, from: h1, to: h2, tests: [TCP_STREAM, TCP_RR], sizes: [1, 64, 512, 1472], repetitions: 2}
`))
	if err != nil {
		t.Fatal(err)
	}
	all := ShardPoints(lab, "v", Shard{})
	if len(all) != 16 || all[0].Variant != "v" {
		t.Fatalf("whole: %d points, first %+v", len(all), all[0])
	}
	var union []Point
	for k := 1; k <= 3; k++ {
		part := ShardPoints(lab, "v", Shard{k, 3})
		for _, p := range part {
			if !(Shard{k, 3}).Has(p) {
				t.Fatalf("shard %d holds %+v", k, p)
			}
		}
		union = append(union, part...)
	}
	if len(union) != len(all) {
		t.Fatalf("3 shards hold %d points, the whole %d", len(union), len(all))
	}
	for _, p := range all {
		if !slices.Contains(union, p) {
			t.Fatalf("no shard holds %+v", p)
		}
	}
}

// Without a VCS revision (go test stamps none) the version names the
// executable's bytes.
func TestBuildVersion(t *testing.T) {
	exe := filepath.Join(t.TempDir(), "atmlab")
	os.WriteFile(exe, []byte("abc"), 0o755) // sha256("abc") = ba7816bf8f01...
	if got := buildVersion(func() (string, error) { return exe, nil }); !strings.HasSuffix(got, " binary sha256 ba7816bf8f01") {
		t.Fatalf("version = %q", got)
	}
	if got := buildVersion(func() (string, error) { return "", os.ErrNotExist }); strings.Contains(got, "sha256") {
		t.Fatalf("version without an executable = %q", got)
	}
}
