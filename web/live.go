package web

// Starting the live view for the verbs that serve it: up and lab run
// (--web, of a lab this process runs) and web (of a lab another runs).

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/atmlab/atmlab/backend"
	"github.com/atmlab/atmlab/backend/linux"
	"github.com/atmlab/atmlab/internal/webguard"
	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/settings"
)

// Live is up's and lab run's --web ADDR and --web-public.
type Live struct {
	Addr   string
	Public bool
}

// Check refuses a bad --web before anything is built, and --web for a
// normal user: the lab then runs in a holder's own network namespace,
// where a browser cannot reach it.
func (l Live) Check() error {
	if l.Addr == "" {
		return nil
	}
	if _, err := webguard.CheckAddr(l.Addr, l.Public); err != nil {
		return err
	}
	if linux.NeedsHolder() || linux.InHolder() {
		return errors.New("--web needs root (a normal user's lab runs in its own network namespace): start the lab without it and run `atmlab web NAME --web 127.0.0.1:8080` in another shell")
	}
	return nil
}

// Start serves src's live view, if one was asked for, printing its URL
// to w, until ctx ends; it returns the server (nil for none) and the
// address it listens on, as http://ADDR/.
func (l Live) Start(ctx context.Context, w io.Writer, src Source) (*Server, string, error) {
	if l.Addr == "" {
		return nil, "", nil
	}
	if err := l.Check(); err != nil {
		return nil, "", err
	}
	return Start(ctx, w, l.Addr, l.Public, src)
}

// Start serves src's live view on addr until ctx ends, printing its URL
// to w, and returns the server and the address it listens on, as
// http://ADDR/.
func Start(ctx context.Context, w io.Writer, addr string, public bool, src Source) (*Server, string, error) {
	ln, err := webguard.Listen(addr, public)
	if err != nil {
		return nil, "", err
	}
	s := New(ln, src)
	fmt.Fprintf(w, "live view: %s (read-only without the token)\n", s.URL(ln))
	go s.Serve(ctx, ln)
	return s, "http://" + ln.Addr().String() + "/", nil
}

// LiveHook shows each real-time lab of a lab run in s while it is up
// (what registry.Measure calls as a lab comes up): nil without a view.
func LiveHook(s *Server) func(backend.Env) func() {
	if s == nil {
		return nil
	}
	return func(env backend.Env) func() {
		src, ok := linux.LiveSource(env)
		if !ok {
			return func() {} // a virtual lab has nothing to show live
		}
		s.SetSource(src)
		return func() { s.SetSource(nil) }
	}
}

// Attached is the running lab named lab seen through its control socket.
type Attached struct{ Lab string }

func (a Attached) Topology(ctx context.Context) (topologies.View, error) {
	s, err := linux.Topology(ctx, a.Lab)
	if err != nil {
		return topologies.View{}, err
	}
	if s == nil {
		return topologies.View{}, fmt.Errorf("lab %s sent no topology: its atmlab is older than this one", a.Lab)
	}
	return *s, nil
}

func (a Attached) Stats(ctx context.Context) (any, error) { return linux.Stats(ctx, a.Lab) }

func (a Attached) Set(ctx context.Context, endpoint, direction string, c settings.Change) (any, error) {
	return linux.Set(ctx, a.Lab, endpoint, direction, c)
}
