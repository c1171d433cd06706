package main

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/palyra-go/palyra/host/artifact"
	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/trust"
	"github.com/palyra-go/palyra/internal/fsutil"
	"github.com/spf13/cobra"
)

// errKeyExists refuses to overwrite an existing key file.
var errKeyExists = errcode.New("key_exists", "key file already exists")

// keyReport describes a public key.
type keyReport struct {
	KeyFile      string `json:"key_file,omitempty"`
	PublicKeyHex string `json:"public_key_hex"`
	KeyID        string `json:"key_id"`
}

func (a *app) keysCommand() *cobra.Command {
	return group("keys", "Generate and inspect Ed25519 signing keys",
		a.keysGenerateCommand(), a.keysPublicCommand(), a.keysRotateCommand())
}

func (a *app) keysGenerateCommand() *cobra.Command {
	var out string
	c := &cobra.Command{
		Use:   "generate --out FILE",
		Short: "Write a new Ed25519 seed (hex, mode 0600); never overwrites",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			pub, priv, err := ed25519.GenerateKey(rand.Reader)
			if err != nil {
				return fmt.Errorf("generate key: %w", err)
			}
			seed := hex.EncodeToString(priv.Seed()) + "\n"
			if err := fsutil.WriteExclusive(out, []byte(seed), 0o600); err != nil {
				if errors.Is(err, fs.ErrExist) {
					return fmt.Errorf("%w: %s (remove it first if you mean to replace it)", errKeyExists, out)
				}
				return fmt.Errorf("%w: %v", errIO, err)
			}
			r := keyReport{KeyFile: out, PublicKeyHex: hex.EncodeToString(pub), KeyID: artifact.KeyID(pub)}
			return a.emit(r, fmt.Sprintf("keys.generate key_file=%s public_key_hex=%s key_id=%s", r.KeyFile, r.PublicKeyHex, r.KeyID))
		},
	}
	c.Flags().StringVar(&out, "out", "", "file to write the new key to (must not exist)")
	requireFlags(c, "out")
	return c
}

func (a *app) keysPublicCommand() *cobra.Command {
	var keyFile string
	c := &cobra.Command{
		Use:   "public --key FILE",
		Short: "Print the public key and key_id of a signing key",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			priv, err := a.loadSigningKey(keyFile, false)
			if err != nil {
				return err
			}
			pub := priv.Public().(ed25519.PublicKey)
			r := keyReport{KeyFile: keyFile, PublicKeyHex: hex.EncodeToString(pub), KeyID: artifact.KeyID(pub)}
			return a.emit(r, fmt.Sprintf("keys.public public_key_hex=%s key_id=%s", r.PublicKeyHex, r.KeyID))
		},
	}
	c.Flags().StringVar(&keyFile, "key", "", "signing key file (32 raw bytes, hex or base64)")
	requireFlags(c, "key")
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
	var publisher, oldKey, newKey, out, reason string
	c := &cobra.Command{
		Use:   "rotate --publisher P --old-key FILE --new-key FILE --output FILE",
		Short: "Sign a rotation statement that moves a publisher from its old key to a new one",
		Long: "rotate writes a rotation statement: a small document signed by the publisher's old key and countersigned by the new key.\n" +
			"Give it to operators; `palyra trust rotate --statement FILE` then moves their trust store from the old key to the new one without hand-editing.",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			oldPriv, err := a.loadSigningKey(oldKey, false)
			if err != nil {
				return err
			}
			newPriv, err := a.loadSigningKey(newKey, false)
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
			return a.emit(r, fmt.Sprintf("keys.rotate statement=%s publisher=%s old_key_id=%s new_key_id=%s", r.Statement, r.Publisher, r.OldKeyID, r.NewKeyID))
		},
	}
	c.Flags().StringVar(&publisher, "publisher", "", "publisher whose key rotates")
	c.Flags().StringVar(&oldKey, "old-key", "", "current signing key file")
	c.Flags().StringVar(&newKey, "new-key", "", "new signing key file")
	c.Flags().StringVar(&out, "output", "", "file to write the statement to")
	c.Flags().StringVar(&reason, "reason", "", "optional reason recorded in the statement")
	requireFlags(c, "publisher", "old-key", "new-key", "output")
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
