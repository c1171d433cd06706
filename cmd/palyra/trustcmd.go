package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/palyra-go/palyra/host"
)

func (a *app) trustCommand() *cobra.Command {
	return group("trust", "Inspect and change the publisher trust store",
		a.trustShowCommand(), a.trustRotateCommand())
}

func (a *app) trustShowCommand() *cobra.Command {
	var tf trustFlags
	c := &cobra.Command{
		Use:     "show [--trust-store T]",
		Example: "  palyra trust show\n  palyra trust show -o yaml",
		Short:   "Print the trust store: allowlisted and pinned publishers",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f, path, err := a.openTrust(cmd, &tf)
			if err != nil {
				return err
			}
			s, err := f.Load(cmd.Context())
			if err != nil {
				return err
			}
			data, err := s.Marshal()
			if err != nil {
				return err
			}
			if a.structured() {
				_, err = a.stdout.Write(data)
				return err
			}
			return a.emit(nil, fmt.Sprintf("trust.show trust_store=%s\n%s", path, data))
		},
	}
	tf.register(c)
	return c
}

// rotateReport is the result of trust rotate. TrustStore is "" through
// a daemon, which does not report where its store is.
type rotateReport struct {
	TrustStore      string `json:"trust_store,omitempty"`
	Publisher       string `json:"publisher"`
	Outcome         string `json:"outcome"`
	StatementSHA256 string `json:"statement_sha256"`
}

func (a *app) trustRotateCommand() *cobra.Command {
	var (
		stmt string
		sf   stateFlags
	)
	c := &cobra.Command{
		Use:     "rotate --statement FILE [--trust-store T]",
		Example: "  palyra trust rotate --statement rotation.json",
		Short:   "Apply a publisher's signed key rotation statement to the trust store (through the daemon with --url)",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			data, err := readSmallFile(stmt, maxSmallFileBytes)
			if err != nil {
				return err
			}
			sv, err := a.service(cmd, &sf, "trust-store")
			if err != nil {
				return err
			}
			defer sv.Close()
			res, err := sv.RotateTrust(a.actor(cmd), host.RotateTrustRequest{Statement: data})
			if err != nil {
				return err
			}
			r := rotateReport{TrustStore: sv.trustStore, Publisher: res.Publisher, Outcome: res.Outcome, StatementSHA256: res.StatementSHA256}
			return a.emit(r, fmt.Sprintf("trust.rotate trust_store=%s publisher=%s outcome=%s statement_sha256=%s", r.TrustStore, r.Publisher, r.Outcome, r.StatementSHA256))
		},
	}
	c.Flags().StringVar(&stmt, "statement", "", "rotation statement file (from palyra keys rotate)")
	sf.register(c, false)
	requireFlags(c, "statement")
	return c
}
