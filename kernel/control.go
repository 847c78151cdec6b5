//go:build linux

package kernel

import (
	"context"
	"io"
	"strings"
	"time"

	"github.com/atmlab/atmlab/control"
	"github.com/atmlab/atmlab/devices"
	"github.com/atmlab/atmlab/netstat"
	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/settings"
)

// The lab's side of its control socket (package control): what the server
// asks of a running lab, answered on the loop goroutine.

// Name is the lab's name.
func (k *Lab) Name() string { return k.Lab.Name }

// Network is the emulated network the loop drives.
func (k *Lab) Network() *devices.Network { return k.Net }

// Start is the wall time of model time 0.
func (k *Lab) Start() time.Time { return k.Loop.start }

// Query runs f on the loop goroutine and waits for it.
func (k *Lab) Query(ctx context.Context, f func()) error { return k.Loop.Query(ctx, f) }

// Do runs f on the loop goroutine without waiting.
func (k *Lab) Do(f func()) { k.Loop.Do(f) }

// Stats returns the lab's counters from any goroutine, with what the hosts'
// kernels dropped at their TAPs and counted themselves (read here, off the
// loop goroutine, through each host's hostReader).
func (k *Lab) Stats(ctx context.Context) (control.Stats, error) {
	var st control.Stats
	if err := k.Loop.Query(ctx, func() {
		st = control.Snapshot(k.Lab.Name, k.Loop.Stats(), k.Net, k.Loop.Now(), k.changes)
		for i, p := range st.Ports {
			if hp, ok := k.Net.Hosts[p.Port]; ok {
				st.Ports[i].LateDropped = k.Loop.LateDroppedAt(hp)
			}
		}
		if k.Cuts != nil {
			st.Cuts = k.Cuts()
		}
	}); err != nil {
		return st, err
	}
	k.hostMu.Lock()
	defer k.hostMu.Unlock()
	for i, p := range st.Ports {
		if _, ok := k.Net.Hosts[p.Port]; ok {
			node, iface, _ := strings.Cut(p.Port, ":")
			if r := k.hostReader(node); r != nil {
				st.Ports[i].HostDrops, st.Ports[i].QdiscDrops, st.Ports[i].QdiscRequeues = r.drops(iface)
			}
		}
	}
	for _, n := range k.Lab.Nodes {
		if n.Kind != topologies.KindHost {
			continue
		}
		r := k.hostReader(n.Name)
		if r == nil {
			continue
		}
		if c, err := r.counters(); err == nil {
			if st.Hosts == nil {
				st.Hosts = map[string]netstat.Counters{}
			}
			st.Hosts[n.Name] = c
		}
	}
	return st, nil
}

// hostReader returns host's counter reader, opened on first use (nil if
// it cannot be opened now: its counters are left out, as they are when a
// read fails). Call it with hostMu held.
func (k *Lab) hostReader(host string) *hostReader {
	if r := k.hosts[host]; r != nil {
		return r
	}
	r, err := openHostReader(k.Lab.Namespace(host))
	if err != nil {
		return nil
	}
	if k.hosts == nil {
		k.hosts = map[string]*hostReader{}
	}
	k.hosts[host] = r
	return r
}

// closeHostReaders closes the readers' descriptors, which would keep the
// hosts' namespaces alive after they are removed.
func (k *Lab) closeHostReaders() {
	k.hostMu.Lock()
	defer k.hostMu.Unlock()
	for _, r := range k.hosts {
		r.close()
	}
	k.hosts = nil
}

// QueryStats asks a running lab for its counters.
func QueryStats(ctx context.Context, lab string) (*control.Stats, error) {
	return control.QueryStats(ctx, lab, SocketPath(lab))
}

// SetLink asks a running lab to apply a change (atmlab set).
func SetLink(ctx context.Context, lab, endpoint, direction string, c settings.Change) (*control.Changed, error) {
	return control.SetLink(ctx, lab, SocketPath(lab), endpoint, direction, c)
}

// Capture copies a running lab's link to w (control.Capture).
func Capture(ctx context.Context, lab, endpoint string, cellMode bool, w io.Writer, count int) (n int, aal34 bool, err error) {
	return control.Capture(ctx, lab, SocketPath(lab), endpoint, cellMode, w, count)
}

// QueryTopology asks a running lab for its topology (control.QueryTopology).
func QueryTopology(ctx context.Context, lab string) (*topologies.View, error) {
	return control.QueryTopology(ctx, lab, SocketPath(lab))
}
