package emulator

import "testing"

// A released frame is the next one Get hands out of its size, with its
// fields cleared; a shared one, one bigger than PoolMax or one from no
// pool never comes back; releasing twice returns it once.
func TestPool(t *testing.T) {
	var p Pool
	f := p.Get(1514)
	if len(f.Data) != 1514 || cap(f.Data) != 2<<10 || !f.Pooled() {
		t.Fatalf("Get(1514): len %d cap %d pooled %v, want 1514, 2048, true", len(f.Data), cap(f.Data), f.Pooled())
	}
	f.ID, f.Born, f.GSO = 7, 9, Super{Segs: 3}
	f.Release()
	f.Release() // a second release: nothing
	g := p.Get(60)
	if g != f || len(g.Data) != 60 || g.ID != 0 || g.Born != 0 || g.GSO.Segs != 0 || !g.Pooled() {
		t.Errorf("Get after Release: %p (released %p) len %d ID %d Born %d Segs %d pooled %v: want the released frame, cleared", g, f, len(g.Data), g.ID, g.Born, g.GSO.Segs, g.Pooled())
	}
	if h := p.Get(60); h == g {
		t.Error("a frame released once was handed out twice")
	}
	for _, c := range []struct{ n, cap int }{{0, 2 << 10}, {2 << 10, 2 << 10}, {2<<10 + 1, 16 << 10}, {9018, 16 << 10}, {16<<10 + 1, 68 << 10}, {PoolMax, PoolMax}} {
		if f := p.Get(c.n); len(f.Data) != c.n || cap(f.Data) != c.cap {
			t.Errorf("Get(%d): len %d cap %d, want cap %d", c.n, len(f.Data), cap(f.Data), c.cap)
		}
	}
	big := p.Get(PoolMax + 1)
	if len(big.Data) != PoolMax+1 || big.Pooled() {
		t.Errorf("Get(PoolMax+1): len %d pooled %v, want %d, not pooled", len(big.Data), big.Pooled(), PoolMax+1)
	}
	s := p.Get(100)
	s.Share()
	s.Release()
	if s.Pooled() || p.Get(100) == s {
		t.Error("a shared frame went back to its pool")
	}
	(&Frame{Data: make([]byte, 2<<10)}).Release() // not pooled: nothing
	if n := len(p.free[0]); n != 0 {
		t.Errorf("%d frames in the pool that nobody pooled", n)
	}
}

// A pool keeps at most poolKeep frames of a size; the rest go to the
// garbage collector.
func TestPoolKeeps(t *testing.T) {
	var p Pool
	var fs []*Frame
	for range poolKeep[2] + 10 {
		fs = append(fs, p.Get(PoolMax))
	}
	for _, f := range fs {
		f.Release()
	}
	if n := len(p.free[2]); n != poolKeep[2] {
		t.Errorf("%d super-frame buffers kept, want %d", n, poolKeep[2])
	}
}

// Steady traffic through a pool allocates nothing.
func TestPoolAllocations(t *testing.T) {
	var p Pool
	p.Get(1514).Release()
	p.Get(PoolMax).Release()
	if n := testing.AllocsPerRun(100, func() { p.Get(1514).Release(); p.Get(PoolMax).Release() }); n != 0 {
		t.Errorf("%v allocations a Get and Release, want 0", n)
	}
}
