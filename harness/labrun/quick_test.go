package labrun

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/atmlab/atmlab/internal/labtest"
	"github.com/atmlab/atmlab/topologies/labfile"
)

func TestQuicken(t *testing.T) {
	src := labtest.Lab("two-hosts", "q", `experiments:
  - {name: sweep, from: h1, to: h2, tests: [UDP_STREAM], sizes: [1, 2, 3, 4, 5], sockbufs: [0, 8192], repetitions: 3, duration: 10s}
  - {name: rr, from: h1, to: h2, tests: [TCP_RR, UDP_RR], sizes: [1, 64], quick: {tests: [UDP_RR], sizes: [64], variants: [slow], duration: 1s, repetitions: 3}}
variants:
  - {name: slow, set: [{link: "h1:eth0", delay: 1ms}]}
`)
	file := filepath.Join(t.TempDir(), "q.yaml")
	os.WriteFile(file, []byte(src), 0o644)
	lab, err := labfile.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	base, _ := lab.WithVariant("base")
	Quicken(base, "base")
	if len(base.Experiments) != 1 {
		t.Fatalf("base quick runs %d experiments; rr's quick: names only slow", len(base.Experiments))
	}
	e := base.Experiments[0]
	if !slices.Equal(e.Sizes, []int{1, 3, 5}) || !slices.Equal(e.SockBufs, []int{8192}) || e.Repetitions != 1 || e.Duration != 2*time.Second {
		t.Fatalf("default rule gave %+v", e)
	}
	slow, _ := lab.WithVariant("slow")
	Quicken(slow, "slow")
	rr := slow.Experiments[1]
	if len(slow.Experiments) != 2 || !slices.Equal(rr.Tests, []string{"UDP_RR"}) || !slices.Equal(rr.Sizes, []int{64}) || rr.Duration != time.Second || rr.Repetitions != 3 {
		t.Fatalf("quick: gave %+v", rr)
	}
}
