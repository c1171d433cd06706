package main

import (
	"fmt"

	"github.com/palyra-go/palyra/host/trust"
	"github.com/spf13/cobra"
)

func (a *app) trustCommand() *cobra.Command {
	return group("trust", "Inspect and change the publisher trust store",
		a.trustShowCommand(), a.trustRotateCommand())
}

func (a *app) trustShowCommand() *cobra.Command {
	var tf trustFlags
	c := &cobra.Command{
		Use:   "show [--trust-store T]",
		Short: "Print the trust store: allowlisted and pinned publishers",
		Args:  noArgs,
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
			if a.jsonOut {
				_, err = a.stdout.Write(data)
				return err
			}
			return a.emit(nil, fmt.Sprintf("trust.show trust_store=%s\n%s", path, data))
		},
	}
	tf.register(c)
	return c
}

// rotateReport is the result of trust rotate.
type rotateReport struct {
	TrustStore string `json:"trust_store"`
	Publisher  string `json:"publisher"`
	Outcome    string `json:"outcome"`
}

func (a *app) trustRotateCommand() *cobra.Command {
	var (
		stmt string
		tf   trustFlags
	)
	c := &cobra.Command{
		Use:   "rotate --statement FILE [--trust-store T]",
		Short: "Apply a publisher's signed key rotation statement to the trust store",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			data, err := readSmallFile(stmt, maxSmallFileBytes)
			if err != nil {
				return err
			}
			rot, err := trust.ParseRotation(data)
			if err != nil {
				return err
			}
			f, path, err := a.openTrust(cmd, &tf)
			if err != nil {
				return err
			}
			outcome, err := f.ApplyRotation(cmd.Context(), rot)
			if err != nil {
				return err
			}
			r := rotateReport{TrustStore: path, Publisher: rot.Publisher, Outcome: string(outcome)}
			return a.emit(r, fmt.Sprintf("trust.rotate trust_store=%s publisher=%s outcome=%s", r.TrustStore, r.Publisher, r.Outcome))
		},
	}
	c.Flags().StringVar(&stmt, "statement", "", "rotation statement file (from palyra keys rotate)")
	tf.register(c)
	requireFlags(c, "statement")
	return c
}
