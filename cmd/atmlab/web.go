package main

import (
	"github.com/spf13/cobra"

	"github.com/atmlab/atmlab/backend/linux"
	"github.com/atmlab/atmlab/internal/clihelp"
	"github.com/atmlab/atmlab/web"
)

// addWebFlags adds up's and lab run's --web and --web-public.
func addWebFlags(c *cobra.Command, l *web.Live) {
	c.Flags().StringVar(&l.Addr, "web", "", "serve the live view on this address, such as 127.0.0.1:8080 (the printed URL carries the token that allows changes)")
	c.Flags().BoolVar(&l.Public, "web-public", false, "let --web bind an address other machines can reach")
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
			if _, err := linux.Topology(cmd.Context(), a[0]); err != nil {
				return err
			}
			if _, _, err := web.Start(cmd.Context(), cmd.OutOrStdout(), listen, public, web.Attached{Lab: a[0]}); err != nil {
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
