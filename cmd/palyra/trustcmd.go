package main

import (
	"encoding/json"
	"os"

	"github.com/spf13/cobra"

	"github.com/palyra-go/palyra/cmd/internal/cliconfig"
	"github.com/palyra-go/palyra/cmd/palyra/internal/output"
	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/trust"
)

func (a *app) trustCommand() *cobra.Command {
	return group("trust", "Inspect and change the publisher trust store",
		a.trustShowCommand(), a.trustRotateCommand(), a.trustAcceptChangesCommand())
}

func (a *app) trustShowCommand() *cobra.Command {
	var tf trustFlags
	c := &cobra.Command{
		Use:     "show [--trust-store T]",
		Example: "  palyra trust show\n  palyra trust show -o yaml",
		Short:   "Print the trust store: allowlisted and pinned publishers",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if tf.trustStore == "" && os.Getenv(cliconfig.EnvTrustStore) == "" {
				// The store is the state directory's: one that does not
				// exist is refused rather than shown as an empty store.
				if _, err := cliconfig.ExistingLayout(a.stateDir); err != nil {
					return err
				}
			}
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
				// The store file's own JSON shape.
				return a.emit(json.RawMessage(data), "")
			}
			return a.emit(nil, trustTable(path, s.Publishers(), a.wide()))
		},
	}
	tf.register(c)
	return c
}

// trustTable is the text of trust show: where the store is, then one row
// per publisher key, allowlisted or pinned on first use (TOFU); -o wide
// adds the public keys.
func trustTable(path string, pubs []trust.PublisherInfo, wide bool) string {
	t := output.NewTable(output.Column{Header: "publisher"}, output.Column{Header: "trust"}, output.Column{Header: "key_id"},
		output.Column{Header: "public_key_hex", Wide: true})
	for _, p := range pubs {
		ids := p.KeyIDs()
		for i, k := range p.TrustedKeys {
			t.Row(p.Publisher, "allowlisted", ids[i], k)
		}
		if p.TOFUKey != "" {
			t.Row(p.Publisher, "tofu", ids[len(ids)-1], p.TOFUKey)
		}
	}
	head := "Trust store: " + output.QuoteLine(path) + "\n"
	if t.Len() == 0 {
		return head + "No publishers are trusted yet (skills install --allow-tofu pins one, --trusted-publisher PUB=HEX allowlists one)."
	}
	return head + t.String(wide)
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
			return a.emit(r, "trust.rotate "+output.KV("trust_store", r.TrustStore, "publisher", r.Publisher, "outcome", r.Outcome, "statement_sha256", r.StatementSHA256))
		},
	}
	c.Flags().StringVar(&stmt, "statement", "", "rotation statement file (from palyra keys rotate)")
	sf.register(c, false)
	requireFlags(c, "statement")
	return c
}
