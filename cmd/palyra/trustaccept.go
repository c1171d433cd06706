package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/palyra-go/palyra/cmd/internal/cliconfig"
	"github.com/palyra-go/palyra/cmd/palyra/internal/output"
	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/trust"
)

// acceptReport is the result of trust accept-changes: what the store file
// holds against its seal, and whether it was re-sealed.
type acceptReport struct {
	*trust.Review
	// Accepted reports that the file was re-sealed as it is.
	Accepted bool `json:"accepted"`
	// Principal is who accepted (--principal), "" when nobody did.
	Principal string `json:"principal,omitempty"`
}

// errNotConfirmed is accept-changes declined at the prompt.
var errNotConfirmed = errors.New("not confirmed: the trust store was left as it is and stays refused")

func (a *app) trustAcceptChangesCommand() *cobra.Command {
	var (
		tf  trustFlags
		yes bool
	)
	c := &cobra.Command{
		Use: "accept-changes [--trust-store T] [--yes]",
		Example: "  palyra trust accept-changes\n" +
			"  palyra trust accept-changes --yes -o json\n" +
			"  palyra trust accept-changes --trust-store ./trust-store.json --yes",
		Short: "Review changes made to the trust store outside palyra and re-seal it",
		Long: "The trust store is sealed with an integrity MAC (keyed from the vault key, else a key file next to the store) that every change palyra makes keeps up to date; " +
			"a store edited by hand, or by another tool, is refused with trust_store_tampered. accept-changes shows what differs from the sealed content " +
			"(allowlisted keys and TOFU pins added, removed, changed) and, once you confirm (at the prompt, or --yes; without a terminal --yes is required), seals the file as it is now. " +
			"A store that is intact is left alone.",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(tf.trusted) > 0 {
				return fmt.Errorf("%w: accept-changes takes no --trusted-publisher (it accepts the file as it is)", errUsage)
			}
			if tf.trustStore == "" && os.Getenv(cliconfig.EnvTrustStore) == "" {
				if _, err := cliconfig.ExistingLayout(a.stateDir); err != nil {
					return err
				}
			}
			f, _, err := a.openTrust(cmd, &tf)
			if err != nil {
				return err
			}
			shown, err := f.Review(cmd.Context())
			if err != nil {
				return err
			}
			if shown.Status == trust.IntegrityIntact {
				return a.emit(acceptReport{Review: shown}, "The trust store "+output.QuoteLine(shown.Path)+" is intact: its content is what palyra last sealed; nothing to accept.")
			}
			if !a.structured() || !yes {
				// The diff goes first, to stderr when the result is
				// structured, so that it is seen before any prompt.
				w := a.stdout
				if a.structured() {
					w = a.stderr
				}
				if _, err := io.WriteString(w, reviewText(shown, a.wide())); err != nil {
					return err
				}
			}
			// Ask before taking the store's lock, so that no writer waits
			// on a person; under the lock, accept only what was shown.
			if !yes {
				if a.palyra.nonInteractive {
					return nonInteractiveErr("accept-changes", "review the changes above, then run it again with --yes")
				}
				if !a.stdinIsTerminal() {
					return fmt.Errorf("%w: accept-changes asks for confirmation and standard input is not a terminal: review the changes above, then run it again with --yes", errUsage)
				}
				fmt.Fprint(a.stderr, "Accept these changes and re-seal the trust store? [y/N] ")
				line, _ := bufio.NewReader(a.stdin).ReadString('\n')
				if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
					return errNotConfirmed
				}
			}
			r, accepted, err := f.AcceptChanges(a.actor(cmd), func(r *trust.Review) (bool, error) {
				if r.Status != shown.Status || !slices.Equal(r.Changes, shown.Changes) {
					return false, fmt.Errorf("%w: the trust store changed again while it was reviewed; run palyra trust accept-changes again", errUsage)
				}
				return true, nil
			})
			if err != nil {
				return err
			}
			rep := acceptReport{Review: r, Accepted: accepted}
			if accepted {
				rep.Principal = host.PrincipalFrom(a.actor(cmd))
			}
			return a.emit(rep, "trust.accept-changes "+output.KV("trust_store", r.Path, "was", string(r.Status), "changes", fmt.Sprint(len(r.Changes)), "accepted", fmt.Sprint(accepted)))
		},
	}
	c.Flags().StringVar(&tf.trustStore, "trust-store", "", "trust store file (default $PALYRA_SKILLS_TRUST_STORE, else <state>/skills/trust-store.json)")
	c.Flags().BoolVarP(&yes, "yes", "y", false, "accept without asking (required when standard input is not a terminal)")
	return c
}

// stdinIsTerminal reports whether standard input is a terminal, where a
// prompt can be answered.
func (a *app) stdinIsTerminal() bool {
	f, ok := a.stdin.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// reviewText prints a review for people: why the store is refused and one
// row per key added, removed or changed (-o wide adds the full keys).
func reviewText(r *trust.Review, wide bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Trust store: %s\n", output.QuoteLine(r.Path))
	switch r.Status {
	case trust.IntegrityUnsealed:
		b.WriteString("It has no integrity seal yet (a store from before integrity checks, or written by Palyra).\n")
	default:
		fmt.Fprintf(&b, "It was changed outside palyra: %s.\n", r.Reason)
	}
	if !r.BaselineVerified {
		b.WriteString("The sealed content cannot be verified, so every key is shown as added.\n")
	}
	if len(r.Changes) == 0 {
		b.WriteString("No publisher or key differs from the sealed content (only the seal itself changed).\n")
		return b.String()
	}
	t := output.NewTable(output.Column{Header: "change"}, output.Column{Header: "publisher"}, output.Column{Header: "trust"},
		output.Column{Header: "old_key_id"}, output.Column{Header: "new_key_id"},
		output.Column{Header: "old_key", Wide: true}, output.Column{Header: "new_key", Wide: true})
	for _, c := range r.Changes {
		t.Row(c.Change, c.Publisher, c.Trust, keyIDOf(c.OldKey), keyIDOf(c.NewKey), dash(c.OldKey), dash(c.NewKey))
	}
	b.WriteString(t.String(wide))
	if !strings.HasSuffix(b.String(), "\n") {
		b.WriteString("\n")
	}
	return b.String()
}

// keyIDOf is the key id of a hex key, "-" for none.
func keyIDOf(k string) string {
	if k == "" {
		return "-"
	}
	return trust.PublisherInfo{TOFUKey: k}.KeyIDs()[0]
}
