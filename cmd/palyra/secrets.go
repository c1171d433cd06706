package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/palyra-go/palyra/cmd/internal/cliconfig"
	"github.com/palyra-go/palyra/cmd/palyra/internal/output"
	"github.com/palyra-go/palyra/host/vault"
	"github.com/spf13/cobra"
)

// secretReport is the JSON result of secrets set and one element of
// secrets list. It never carries the value or its length.
type secretReport struct {
	Name      string `json:"name"`
	Scope     string `json:"scope"`
	Key       string `json:"key"`
	UpdatedAt string `json:"updated_at"`
}

// secretDeleteReport is the JSON result of secrets delete.
type secretDeleteReport struct {
	Name    string `json:"name"`
	Scope   string `json:"scope"`
	Key     string `json:"key"`
	Deleted bool   `json:"deleted"`
}

func newSecretReport(e vault.Entry) secretReport {
	return secretReport{Name: e.Name.String(), Scope: e.Name.Scope, Key: e.Name.Key, UpdatedAt: e.UpdatedAt.UTC().Format(time.RFC3339)}
}

// secretsCommand is `palyra secrets`: the encrypted vault of the state
// directory, whose values skills use by handle.
func (a *app) secretsCommand() *cobra.Command {
	return group("secrets", "Store, list and delete the secrets skills use by handle (encrypted vault in the state directory)",
		a.secretsSetCommand(), a.secretsListCommand(), a.secretsDeleteCommand())
}

func (a *app) secretsSetCommand() *cobra.Command {
	var keepNewline bool
	c := &cobra.Command{
		Use:     "set <scope>/<key> < VALUE",
		Example: "  printf %s \"$TOKEN\" | palyra secrets set skill:acme.echo_http/api_token",
		Short:   "Store a secret read from stdin (never from the command line)",
		Long: "set stores the value piped on stdin under <scope>/<key>, for example\n\n" +
			"  printf %s \"$TOKEN\" | palyra secrets set skill:acme.echo_http/api_token\n\n" +
			"The scope is global, skill:<id>, principal:<id> or channel:<id>, or signing for a signing key's seed (no skill can be granted that scope; see palyra keys --help). One trailing newline (\\n or \\r\\n) is removed unless --keep-newline is given. " +
			"A terminal on stdin is refused, so the value is never typed where it echoes; the command line never carries it (it would show in ps and in shell history).\n\n" +
			"The vault key comes from $PALYRA_VAULT_KEY, $PALYRA_VAULT_KEY_COMMAND, else <state>/secrets/vault.key (created on first use, mode 0600).",
		Args: secretNameOnly,
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := vault.ParseName(args[0])
			if err != nil {
				return err
			}
			value, err := a.readSecretValue(keepNewline)
			if err != nil {
				return err
			}
			defer clear(value)
			v, err := a.openVault()
			if err != nil {
				return err
			}
			if err := v.Set(cmd.Context(), name, value); err != nil {
				return err
			}
			r := secretReport{Name: name.String(), Scope: name.Scope, Key: name.Key}
			if list, err := v.List(cmd.Context()); err == nil {
				for _, e := range list {
					if e.Name == name {
						r = newSecretReport(e)
					}
				}
			}
			return a.emit(r, fmt.Sprintf("secret %s set", r.Name))
		},
	}
	c.Flags().BoolVar(&keepNewline, "keep-newline", false, "keep a trailing newline of the value")
	return c
}

// secretNameOnly accepts exactly one argument, the name. A second one is
// most likely the value: the error says to pipe it, and never repeats it.
func secretNameOnly(cmd *cobra.Command, args []string) error {
	switch {
	case len(args) == 0:
		return fmt.Errorf("%w: %s needs the secret's name <scope>/<key>; pipe the value on stdin", errUsage, cmd.CommandPath())
	case len(args) > 1:
		return fmt.Errorf("%w: %s takes only the secret's name; the value is never taken from the command line (it would show in ps and shell history): pipe it on stdin, e.g. printf %%s \"$TOKEN\" | %s <scope>/<key>", errUsage, cmd.CommandPath(), cmd.CommandPath())
	}
	return nil
}

// readSecretValue reads the value from stdin, refusing a terminal, an
// empty value and one over vault.MaxSecretBytes, and strips one trailing
// newline unless keepNewline is set.
func (a *app) readSecretValue(keepNewline bool) ([]byte, error) {
	if f, ok := a.stdin.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			return nil, fmt.Errorf("%w: stdin is a terminal (or another character device): pipe the value on stdin, e.g. printf %%s \"$TOKEN\" | palyra secrets set <scope>/<key>", errUsage)
		}
	}
	// Room for the limit plus a "\r\n" that is stripped, plus one byte to
	// see that there is more.
	const room = vault.MaxSecretBytes + 2
	value, err := io.ReadAll(io.LimitReader(a.stdin, room+1))
	if err != nil {
		clear(value)
		return nil, fmt.Errorf("%w: read the value from stdin: %v", errIO, err)
	}
	if len(value) > room {
		clear(value)
		return nil, fmt.Errorf("%w: stdin holds more than %d bytes, over the %d-byte limit", vault.ErrValueTooLarge, room, vault.MaxSecretBytes)
	}
	if !keepNewline {
		if bytes.HasSuffix(value, []byte("\r\n")) {
			value = value[:len(value)-2]
		} else if bytes.HasSuffix(value, []byte("\n")) {
			value = value[:len(value)-1]
		}
	}
	if len(value) == 0 {
		return nil, fmt.Errorf("%w: stdin was empty; pipe the value on stdin", vault.ErrValueEmpty)
	}
	return value, nil
}

func (a *app) secretsListCommand() *cobra.Command {
	return &cobra.Command{
		Use:     "list",
		Example: "  palyra secrets list\n  palyra secrets list -o json",
		Short:   "List stored secrets: names and update times, never values",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// Listing only looks: a state directory that does not exist
			// is refused rather than shown as an empty vault.
			if _, err := cliconfig.ExistingLayout(a.stateDir); err != nil {
				return err
			}
			v, err := a.openVault()
			if err != nil {
				return err
			}
			list, err := v.List(cmd.Context())
			if err != nil {
				return err
			}
			out := make([]secretReport, 0, len(list))
			t := output.NewTable(output.Column{Header: "name"}, output.Column{Header: "scope"}, output.Column{Header: "key"}, output.Column{Header: "updated"})
			for _, e := range list {
				r := newSecretReport(e)
				out = append(out, r)
				t.Row(r.Name, r.Scope, r.Key, r.UpdatedAt)
			}
			text := t.String(a.wide())
			if len(list) == 0 {
				text = "No secrets stored."
			}
			return a.emit(out, text)
		},
	}
}

func (a *app) secretsDeleteCommand() *cobra.Command {
	return &cobra.Command{
		Use:     "delete <scope>/<key>",
		Example: "  palyra secrets delete skill:acme.echo_http/api_token",
		Short:   "Delete a stored secret",
		Args:    exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := vault.ParseName(args[0])
			if err != nil {
				return err
			}
			v, err := a.openVault()
			if err != nil {
				return err
			}
			deleted, err := v.Delete(cmd.Context(), name)
			if err != nil {
				return err
			}
			if !deleted {
				return fmt.Errorf("%w: %s is not stored in %s", vault.ErrNotFound, name, v.Path())
			}
			r := secretDeleteReport{Name: name.String(), Scope: name.Scope, Key: name.Key, Deleted: true}
			return a.emit(r, fmt.Sprintf("secret %s deleted", r.Name))
		},
	}
}

// openVault opens the vault of the state directory (--state-dir, else
// $PALYRA_STATE_DIR, else the per-user default) with the key sources of the
// environment.
func (a *app) openVault() (*vault.Vault, error) {
	state, err := cliconfig.StateDir(a.stateDir)
	if err != nil {
		return nil, err
	}
	encoded, command := cliconfig.VaultKey()
	return vault.Open(vault.Config{StateDir: state, EncodedKey: encoded, KeyCommand: command})
}
