package vault

import (
	"bytes"
	"context"
	"fmt"
	"time"
)

// Sealed is one vault entry as it is stored: still encrypted, with the key
// check of the vault that sealed it. It carries no secret value and no key
// material, so it may travel (a cluster replicates the vault's ciphertext
// this way while every node keeps its own key). Only a vault whose key
// opens KeyCheck can use it.
type Sealed struct {
	Nonce      []byte    `json:"nonce"`
	Ciphertext []byte    `json:"ciphertext"`
	KeyCheck   []byte    `json:"key_check"`
	UpdatedAt  time.Time `json:"updated_at"`
}

// Same reports whether s and o are the same sealed value (same nonce and
// ciphertext; the key check and time are not compared).
func (s Sealed) Same(o Sealed) bool {
	return bytes.Equal(s.Nonce, o.Nonce) && bytes.Equal(s.Ciphertext, o.Ciphertext)
}

// SealedEntries returns every entry of the vault still sealed, each with
// the vault's key check. It never needs the key.
func (v *Vault) SealedEntries(ctx context.Context) (map[Name]Sealed, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("vault: sealed entries: %w", err)
	}
	st, err := v.load()
	if err != nil {
		return nil, err
	}
	out := make(map[Name]Sealed, len(st.entries))
	for n, e := range st.entries {
		out[n] = Sealed{Nonce: bytes.Clone(e.nonce), Ciphertext: bytes.Clone(e.ciphertext), KeyCheck: bytes.Clone(st.keyCheck), UpdatedAt: e.updatedAt}
	}
	return out, nil
}

// Import stores a sealed entry from another vault under name, as it is,
// and reports whether the file changed (false when the entry is already
// there). It needs this vault's key, and stores only what that key opens:
// a key that does not open s.KeyCheck fails with ErrKeyMismatch, an entry
// that does not authenticate under name with ErrCorrupt, and nothing is
// written; so the vault never holds an entry it cannot open, and a node
// without the key sees the secret as missing (Has is false), never a
// crypto error at Get. An empty vault takes s.KeyCheck as its own.
func (v *Vault) Import(ctx context.Context, name Name, s Sealed) (bool, error) {
	if err := name.Validate(); err != nil {
		return false, err
	}
	k, err := v.key(ctx, false)
	if err != nil {
		return false, err
	}
	aead, err := newAEAD(k)
	if err != nil {
		return false, err
	}
	if !keyMatches(aead, s.KeyCheck) {
		return false, fmt.Errorf("%w: the key from %s did not seal the imported entry %s", ErrKeyMismatch, v.keySource(), name)
	}
	plain, err := aead.Open(nil, s.Nonce, s.Ciphertext, entryAAD(name))
	if err != nil {
		return false, fmt.Errorf("%w: the imported entry %s does not authenticate under its name", ErrCorrupt, name)
	}
	clear(plain)
	changed := false
	err = v.update(ctx, func(st *state) (bool, error) {
		if st.keyCheck == nil {
			st.keyCheck = bytes.Clone(s.KeyCheck)
		} else if !keyMatches(aead, st.keyCheck) {
			return false, v.mismatch()
		}
		if e, ok := st.entries[name]; ok && bytes.Equal(e.nonce, s.Nonce) && bytes.Equal(e.ciphertext, s.Ciphertext) {
			return false, nil
		}
		if _, ok := st.entries[name]; !ok && len(st.entries) >= MaxEntries {
			return false, fmt.Errorf("%w: %s holds %d secrets, the %d-entry limit; cannot add %s", ErrFull, v.Path(), len(st.entries), MaxEntries, name)
		}
		st.entries[name] = sealedEntry{nonce: bytes.Clone(s.Nonce), ciphertext: bytes.Clone(s.Ciphertext), updatedAt: s.UpdatedAt.UTC().Truncate(time.Second)}
		changed = true
		return true, nil
	})
	return changed, err
}

// DeleteSealed removes the entry under name only if it is exactly s (see
// Sealed.Same), and reports whether it did: a replicated delete never
// removes a value this vault got elsewhere since. It never needs the key.
func (v *Vault) DeleteSealed(ctx context.Context, name Name, s Sealed) (bool, error) {
	if err := name.Validate(); err != nil {
		return false, err
	}
	deleted := false
	err := v.update(ctx, func(st *state) (bool, error) {
		e, ok := st.entries[name]
		if !ok || !bytes.Equal(e.nonce, s.Nonce) || !bytes.Equal(e.ciphertext, s.Ciphertext) {
			return false, nil
		}
		delete(st.entries, name)
		deleted = true
		return true, nil
	})
	return deleted, err
}
