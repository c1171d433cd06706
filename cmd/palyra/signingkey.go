package main

import (
	"context"
	"crypto/ed25519"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/palyra-go/palyra/host/artifact"
	"github.com/palyra-go/palyra/host/vault"
)

// keySource is where one signing key comes from: a file, stdin, or an entry
// of the state directory's encrypted vault (Palyra's
// --signing-key-vault-ref). Exactly one is given. The seed is never
// written anywhere in clear, printed or logged.
type keySource struct {
	// what names the key in messages ("signing key", "old key").
	what string
	// The flags' names ("" when the command has no such flag) and values.
	fileFlag, stdinFlag, vaultFlag string
	file, vaultRef                 string
	stdin                          bool
}

// register adds the key's flags to c.
func (k *keySource) register(c *cobra.Command) {
	f := c.Flags()
	if k.fileFlag != "" {
		f.StringVar(&k.file, k.fileFlag, "", k.what+" file (32 raw bytes, or hex or standard base64 of the 32-byte Ed25519 seed)")
	}
	if k.stdinFlag != "" {
		f.BoolVar(&k.stdin, k.stdinFlag, false, "read the "+k.what+" from stdin")
	}
	if k.vaultFlag != "" {
		f.StringVar(&k.vaultRef, k.vaultFlag, "", "read the "+k.what+" from the encrypted vault entry SCOPE/KEY (e.g. signing/acme; see palyra keys generate --vault-ref)")
	}
}

// flags lists the flags of the key, for messages.
func (k *keySource) flags() string {
	var names []string
	for _, n := range []string{k.fileFlag, k.stdinFlag, k.vaultFlag} {
		if n != "" {
			names = append(names, "--"+n)
		}
	}
	switch len(names) {
	case 1:
		return names[0]
	case 2:
		return names[0] + " and " + names[1]
	default:
		return names[0] + ", " + names[1] + " and " + names[2]
	}
}

// load returns the key from the one source given.
func (k *keySource) load(ctx context.Context, a *app) (ed25519.PrivateKey, error) {
	n := 0
	for _, set := range []bool{k.file != "", k.stdin, k.vaultRef != ""} {
		if set {
			n++
		}
	}
	if n != 1 {
		return nil, fmt.Errorf("%w: give exactly one of %s", errUsage, k.flags())
	}
	if k.vaultRef == "" {
		return a.loadSigningKey(k.file, k.stdin)
	}
	return a.vaultSigningKey(ctx, k.what, k.vaultRef)
}

// vaultSigningKey reads a signing key from the state directory's vault. An
// entry that is no signing key is reported by its name and size, never
// its value.
func (a *app) vaultSigningKey(ctx context.Context, what, ref string) (ed25519.PrivateKey, error) {
	name, err := vault.ParseName(ref)
	if err != nil {
		// Not quoted: what fails to parse as a name may be the key itself,
		// pasted in the wrong place. The error says the part at fault.
		return nil, fmt.Errorf("%s vault ref: %w", what, err)
	}
	v, err := a.openVault()
	if err != nil {
		return nil, err
	}
	data, err := v.Get(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("%s from the vault: %w", what, err)
	}
	defer clear(data)
	key, err := artifact.ParseSigningKey(data)
	if err != nil {
		// The parser's error names the size seen, never the bytes.
		return nil, fmt.Errorf("%s: vault entry %s is not a signing key: %w", what, name, err)
	}
	return key, nil
}
