package vault

import (
	"context"
	"crypto/hkdf"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// deriveInfoPrefix domain-separates every subkey derived from the vault key;
// the purpose follows it, so two purposes never share a subkey and no
// subkey is the vault key itself.
const deriveInfoPrefix = "palyra-go/vault/subkey/v1\x00"

// DeriveKey returns a 32-byte subkey of the vault key for purpose (a short
// constant naming its use, such as "trust-store-mac"): HKDF-SHA256 with the
// vault key as secret, no salt and "palyra-go/vault/subkey/v1\x00"+purpose
// as info. The raw vault key never leaves the package.
//
// It never creates a key: when no key source is configured and the key
// file does not exist, the error wraps ErrKeyMissing, so a caller can fall
// back to a key of its own. Other key errors (insecure file, failing
// command) are returned as they are.
func (v *Vault) DeriveKey(ctx context.Context, purpose string) ([]byte, error) {
	if purpose == "" {
		return nil, fmt.Errorf("%w: DeriveKey needs a purpose", ErrInvalidConfig)
	}
	if v.cfgKey == nil && v.encodedKey == "" && v.keyCommand == "" {
		if _, err := os.Stat(v.KeyPath()); errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: no vault key is configured (%s, %s) and the key file %s does not exist", ErrKeyMissing, srcEncodedKey, srcKeyCommand, v.KeyPath())
		}
	}
	k, err := v.key(ctx, false)
	if err != nil {
		return nil, err
	}
	sub, err := hkdf.Key(sha256.New, k, nil, deriveInfoPrefix+purpose, KeyBytes)
	if err != nil {
		return nil, fmt.Errorf("vault: derive %s subkey: %w", purpose, err)
	}
	return sub, nil
}

// KeyFromFile reports whether the vault's key comes from its key file
// (<state>/secrets/vault.key) rather than a configured source (Config.Key,
// EncodedKey or KeyCommand). A key from the file protects no more than
// the files beside it; a configured one is out of reach of whoever can
// only write the state directory.
func (v *Vault) KeyFromFile() bool {
	return v.cfgKey == nil && v.encodedKey == "" && v.keyCommand == ""
}
