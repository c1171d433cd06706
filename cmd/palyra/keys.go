package main

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/palyra-go/palyra/cmd/palyra/internal/output"
	"github.com/palyra-go/palyra/host/artifact"
	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/trust"
	"github.com/palyra-go/palyra/host/vault"
	"github.com/palyra-go/palyra/internal/fsutil"
	"github.com/spf13/cobra"
)

// errKeyExists refuses to overwrite an existing key file.
var errKeyExists = errcode.New("key_exists", "key file already exists")

// keyReport describes a public key.
type keyReport struct {
	KeyFile      string `json:"key_file,omitempty"`
	VaultRef     string `json:"vault_ref,omitempty"`
	PublicKeyHex string `json:"public_key_hex"`
	KeyID        string `json:"key_id"`
}

func (a *app) keysCommand() *cobra.Command {
	c := group("keys", "Generate and inspect Ed25519 signing keys (in files or the encrypted vault)",
		a.keysGenerateCommand(), a.keysPublicCommand(), a.keysRotateCommand())
	c.Long = "A signing key is an Ed25519 seed. It lives in a file (mode 0600) or, never on disk in clear, in the state directory's encrypted vault under signing/NAME:\n\n" +
		"  palyra keys generate --vault-ref signing/acme\n" +
		"  palyra skills package build ... --signing-key-vault-ref signing/acme\n" +
		"  palyra keys rotate --publisher acme --old-key-vault-ref signing/acme --new-key-vault-ref signing/acme_2027 --output rotation.json\n\n" +
		"No skill manifest can name the signing scope, so no skill can be granted a signing key; keys generate refuses every other scope. " +
		"An existing seed is imported with: printf %s \"$SEED_HEX\" | palyra secrets set signing/NAME. " +
		"The vault key comes from $PALYRA_VAULT_KEY, $PALYRA_VAULT_KEY_COMMAND, else <state>/secrets/vault.key. No command prints a seed."
	return c
}

func (a *app) keysGenerateCommand() *cobra.Command {
	var out, ref string
	c := &cobra.Command{
		Use:     "generate (--out FILE | --vault-ref signing/NAME)",
		Example: "  # a key in the encrypted vault (never on disk in clear)\n  palyra keys generate --vault-ref signing/acme\n\n  # a key file\n  palyra keys generate --out acme.key",
		Short:   "Make a new Ed25519 signing key, in a file (hex, mode 0600) or in the encrypted vault; never overwrites",
		Long: "generate makes a new Ed25519 signing key and prints its public key and key_id, never the key itself.\n\n" +
			"--out FILE writes the seed as hex to a new file (mode 0600). --vault-ref signing/NAME stores it in the state directory's encrypted vault instead " +
			"(the key is then never on disk in clear; package build, skills registry build and keys rotate read it with --signing-key-vault-ref / --old-key-vault-ref / --new-key-vault-ref). " +
			"Signing keys live in the vault scope \"signing\", which no skill manifest can name, so no skill can ever be granted one. " +
			"The vault key comes from $PALYRA_VAULT_KEY, $PALYRA_VAULT_KEY_COMMAND, else <state>/secrets/vault.key.",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if (out == "") == (ref == "") {
				return fmt.Errorf("%w: give exactly one of --out and --vault-ref", errUsage)
			}
			var name vault.Name
			if ref != "" {
				var err error
				if name, err = vault.ParseName(ref); err != nil {
					// Not quoted: it may be a key pasted in the wrong place.
					return fmt.Errorf("--vault-ref: %w", err)
				}
				if name.Scope != vault.SigningScope {
					return fmt.Errorf("%w: --vault-ref %s: signing keys live in the scope %q (e.g. %s/%s), which no skill can be granted; scope %q can be",
						errUsage, name, vault.SigningScope, vault.SigningScope, name.Key, name.Scope)
				}
			}
			pub, priv, err := ed25519.GenerateKey(rand.Reader)
			if err != nil {
				return fmt.Errorf("generate key: %w", err)
			}
			seed := []byte(hex.EncodeToString(priv.Seed()) + "\n")
			defer clear(seed)
			r := keyReport{KeyFile: out, PublicKeyHex: hex.EncodeToString(pub), KeyID: artifact.KeyID(pub)}
			if ref != "" {
				v, err := a.openVault()
				if err != nil {
					return err
				}
				if err := v.Create(cmd.Context(), name, seed); err != nil {
					if errors.Is(err, vault.ErrExists) {
						return fmt.Errorf("%w: vault entry %s exists (delete it first with palyra secrets delete %s if you mean to replace it)", errKeyExists, name, name)
					}
					return err
				}
				r.VaultRef = name.String()
				return a.emit(r, "keys.generate "+output.KV("vault_ref", r.VaultRef, "public_key_hex", r.PublicKeyHex, "key_id", r.KeyID))
			}
			if err := fsutil.WriteExclusive(out, seed, 0o600); err != nil {
				if errors.Is(err, fs.ErrExist) {
					return fmt.Errorf("%w: %s (remove it first if you mean to replace it)", errKeyExists, out)
				}
				return fmt.Errorf("%w: %v", errIO, err)
			}
			return a.emit(r, "keys.generate "+output.KV("key_file", r.KeyFile, "public_key_hex", r.PublicKeyHex, "key_id", r.KeyID))
		},
	}
	c.Flags().StringVar(&out, "out", "", "file to write the new key to (must not exist)")
	c.Flags().StringVar(&ref, "vault-ref", "", "store the new key in the encrypted vault as signing/NAME (must not exist)")
	return c
}

func (a *app) keysPublicCommand() *cobra.Command {
	key := keySource{what: "signing key", fileFlag: "key", vaultFlag: "vault-ref"}
	c := &cobra.Command{
		Use:     "public (--key FILE | --vault-ref SCOPE/KEY)",
		Example: "  palyra keys public --vault-ref signing/acme\n  palyra keys public --key acme.key -o json",
		Short:   "Print the public key and key_id of a signing key",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			priv, err := key.load(cmd.Context(), a)
			if err != nil {
				return err
			}
			pub := priv.Public().(ed25519.PublicKey)
			r := keyReport{KeyFile: key.file, VaultRef: key.vaultRef, PublicKeyHex: hex.EncodeToString(pub), KeyID: artifact.KeyID(pub)}
			return a.emit(r, "keys.public "+output.KV("public_key_hex", r.PublicKeyHex, "key_id", r.KeyID))
		},
	}
	key.register(c)
	return c
}

// rotationReport describes a rotation statement written by keys rotate.
type rotationReport struct {
	Statement       string `json:"statement"`
	Publisher       string `json:"publisher"`
	OldKeyID        string `json:"old_key_id"`
	NewKeyID        string `json:"new_key_id"`
	NewPublicKeyHex string `json:"new_public_key_hex"`
}

func (a *app) keysRotateCommand() *cobra.Command {
	var publisher, out, reason string
	oldKey := keySource{what: "old key", fileFlag: "old-key", vaultFlag: "old-key-vault-ref"}
	newKey := keySource{what: "new key", fileFlag: "new-key", vaultFlag: "new-key-vault-ref"}
	c := &cobra.Command{
		Use:     "rotate --publisher P (--old-key FILE | --old-key-vault-ref REF) (--new-key FILE | --new-key-vault-ref REF) --output FILE",
		Example: "  palyra keys rotate --publisher acme --old-key-vault-ref signing/acme --new-key-vault-ref signing/acme-2026 --output rotation.json",
		Short:   "Sign a rotation statement that moves a publisher from its old key to a new one",
		Long: "rotate writes a rotation statement: a small document signed by the publisher's old key and countersigned by the new key.\n" +
			"Give it to operators; `palyra trust rotate --statement FILE` then moves their trust store from the old key to the new one without hand-editing.\n\n" +
			"Each key comes from a file or from the state directory's vault (signing/NAME, see palyra keys generate --vault-ref).",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			oldPriv, err := oldKey.load(cmd.Context(), a)
			if err != nil {
				return err
			}
			newPriv, err := newKey.load(cmd.Context(), a)
			if err != nil {
				return err
			}
			rot, err := trust.NewRotation(publisher, oldPriv, newPriv, time.Now(), reason)
			if err != nil {
				return err
			}
			data, err := rot.Marshal()
			if err != nil {
				return err
			}
			if err := fsutil.WriteAtomic(out, data, 0o644); err != nil {
				return fmt.Errorf("%w: %v", errIO, err)
			}
			oldPub := oldPriv.Public().(ed25519.PublicKey)
			newPub := newPriv.Public().(ed25519.PublicKey)
			r := rotationReport{Statement: out, Publisher: publisher, OldKeyID: artifact.KeyID(oldPub), NewKeyID: artifact.KeyID(newPub), NewPublicKeyHex: hex.EncodeToString(newPub)}
			return a.emit(r, "keys.rotate "+output.KV("statement", r.Statement, "publisher", r.Publisher, "old_key_id", r.OldKeyID, "new_key_id", r.NewKeyID))
		},
	}
	c.Flags().StringVar(&publisher, "publisher", "", "publisher whose key rotates")
	oldKey.register(c)
	newKey.register(c)
	c.Flags().StringVar(&out, "output", "", "file to write the statement to")
	c.Flags().StringVar(&reason, "reason", "", "optional reason recorded in the statement")
	requireFlags(c, "publisher", "output")
	return c
}

// loadSigningKey reads a signing key from a file, or from stdin when
// fromStdin is set, in any form artifact.ParseSigningKey accepts.
func (a *app) loadSigningKey(path string, fromStdin bool) (ed25519.PrivateKey, error) {
	var data []byte
	var err error
	if fromStdin {
		data, err = readLimited(a.stdin, maxSmallFileBytes, "stdin")
	} else {
		data, err = readSmallFile(path, maxSmallFileBytes)
	}
	if err != nil {
		return nil, err
	}
	return artifact.ParseSigningKey(data)
}
