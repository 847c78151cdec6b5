package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/atmlab/atmlab/internal/clihelp"
	"github.com/atmlab/atmlab/internal/webguard"
	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/settings"
	"github.com/atmlab/atmlab/web"
)

// webFlags are up's and lab run's --web and --web-public.
type webFlags struct {
	addr   string
	public bool
	bound  string // the address the live view listens on, once started
}

func (f *webFlags) add(c *cobra.Command) {
	c.Flags().StringVar(&f.addr, "web", "", "serve the live view on this address, such as 127.0.0.1:8080 (the printed URL carries the token that allows changes)")
	c.Flags().BoolVar(&f.public, "web-public", false, "let --web bind an address other machines can reach")
}

// check refuses a bad --web before anything is built, and --web for a
// normal user: the lab then runs in a holder's own network namespace,
// where a browser cannot reach it.
func (f *webFlags) check() error {
	if f.addr == "" {
		return nil
	}
	if _, err := webguard.CheckAddr(f.addr, f.public); err != nil {
		return err
	}
	if needsHolder() || inHolder() {
		return errors.New("--web needs root (a normal user's lab runs in its own network namespace): start the lab without it and run `atmlab web NAME --web 127.0.0.1:8080` in another shell")
	}
	return nil
}

// start binds the live view, if asked for, and prints its URL; the view
// serves until ctx ends.
func (f *webFlags) start(ctx context.Context, w io.Writer, src web.Source) (*web.Server, error) {
	if f.addr == "" {
		return nil, nil
	}
	if err := f.check(); err != nil {
		return nil, err
	}
	s, bound, err := serveWeb(ctx, w, f.addr, f.public, src)
	f.bound = bound
	return s, err
}

// serveWeb serves src's live view on addr and returns the address it
// listens on.
func serveWeb(ctx context.Context, w io.Writer, addr string, public bool, src web.Source) (*web.Server, string, error) {
	ln, err := webguard.Listen(addr, public)
	if err != nil {
		return nil, "", err
	}
	s := web.New(ln, src)
	fmt.Fprintf(w, "live view: %s (read-only without the token)\n", s.URL(ln))
	go s.Serve(ctx, ln)
	return s, ln.Addr().String(), nil
}

func newWeb(opts *options) *cobra.Command {
	var listen string
	var public bool
	c := &cobra.Command{
		Use:   "web NAME [--web ADDR] [--web-public]",
		Short: "Serve the live view of a running lab in the browser",
		Long:  clihelp.Text("web"),
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			src := attached{lab: a[0]}
			if _, err := queryTopology(cmd.Context(), a[0]); err != nil {
				return err
			}
			if _, _, err := serveWeb(cmd.Context(), cmd.OutOrStdout(), listen, public, src); err != nil {
				return err
			}
			<-cmd.Context().Done()
			return nil
		},
	}
	c.Flags().StringVar(&listen, "web", "127.0.0.1:8080", "address to serve the live view on")
	c.Flags().BoolVar(&public, "web-public", false, "let --web bind an address other machines can reach")
	// The old names, hidden: one thing has one name in every verb.
	c.Flags().StringVar(&listen, "listen", "127.0.0.1:8080", "old name of --web")
	c.Flags().BoolVar(&public, "public", false, "old name of --web-public")
	c.Flags().MarkDeprecated("listen", "use --web")
	c.Flags().MarkDeprecated("public", "use --web-public")
	return c
}

// attached is a running lab seen through its control socket.
type attached struct{ lab string }

func (a attached) Topology(ctx context.Context) (topologies.View, error) {
	s, err := queryTopology(ctx, a.lab)
	if err != nil {
		return topologies.View{}, err
	}
	if s == nil {
		return topologies.View{}, fmt.Errorf("lab %s sent no topology: its atmlab is older than this one", a.lab)
	}
	return *s, nil
}

func (a attached) Stats(ctx context.Context) (any, error) { return queryStats(ctx, a.lab) }

func (a attached) Set(ctx context.Context, endpoint, direction string, c settings.Change) (any, error) {
	return setLink(ctx, a.lab, endpoint, direction, c)
}
