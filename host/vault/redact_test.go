package vault_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/palyra-go/palyra/host/vault"
)

// TestNoSecretInErrors drives every failure path with a known value and
// known key material, and checks that no error shows either, in any
// formatting.
func TestNoSecretInErrors(t *testing.T) {
	const value = "sk-LIVE-value-7d1e5c0ffee"
	sum := sha256.Sum256([]byte("the vault key of this test"))
	key := sum[:]
	keyB64 := b64(key)
	otherSum := sha256.Sum256([]byte("another key"))
	otherKey := otherSum[:]
	secrets := []string{value, keyB64, string(key), base64.RawURLEncoding.EncodeToString(key), fmt.Sprintf("%x", key), keyB64[:20]}

	ctx := t.Context()
	name := vault.MustParseName("skill:acme.echo_http/api_token")
	var errs []error
	add := func(label string, err error) {
		t.Helper()
		if err == nil {
			t.Errorf("%s: no error", label)
			return
		}
		errs = append(errs, fmt.Errorf("%s: %w", label, err))
	}

	// A sealed vault with the key in its file.
	state := t.TempDir()
	if err := os.MkdirAll(state+"/secrets", 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(state+"/secrets/vault.key", []byte(keyB64+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	good := openVault(t, vault.Config{StateDir: state})
	if err := good.Set(ctx, name, []byte(value)); err != nil {
		t.Fatal(err)
	}

	add("too large", good.Set(ctx, name, []byte(value+strings.Repeat(value, vault.MaxSecretBytes/len(value)))))
	add("invalid name", good.Set(ctx, vault.Name{Scope: "skill:x", Key: value}, []byte(value)))
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	add("cancelled", good.Set(cancelled, name, []byte(value)))

	wrong := openVault(t, vault.Config{StateDir: state, Key: otherKey})
	add("set wrong key", wrong.Set(ctx, name, []byte(value)))
	_, err := wrong.Get(ctx, name)
	add("get wrong key", err)

	for _, envVal := range []string{keyB64[:30], value, keyB64 + "=="} {
		v := openVault(t, vault.Config{StateDir: state, EncodedKey: envVal})
		_, err := v.Get(ctx, name)
		add("bad env key", err)
	}
	for _, cmd := range []string{
		fmt.Sprintf("printf '%%s %%s' %s %s >&2; exit 1", keyB64, value),
		fmt.Sprintf("printf 'key=%s\\n' >&2; exit 1", keyB64),
		fmt.Sprintf("printf %%s %s", value),
		fmt.Sprintf("printf %%s %s", keyB64[:40]),
		fmt.Sprintf("for i in $(seq 200); do printf %%s %s; done", keyB64),
		fmt.Sprintf("printf %%s %s; sleep 60", keyB64),
	} {
		v := openVault(t, vault.Config{StateDir: state, KeyCommand: cmd})
		cctx := ctx
		if strings.Contains(cmd, "sleep") {
			var cancel context.CancelFunc
			cctx, cancel = context.WithTimeout(ctx, 50*time.Millisecond)
			defer cancel()
		}
		_, err := v.Get(cctx, name)
		add("key command", err)
	}

	// Key file problems.
	if err := os.Chmod(state+"/secrets/vault.key", 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = openVault(t, vault.Config{StateDir: state}).Get(ctx, name)
	add("insecure key file", err)
	if err := os.WriteFile(state+"/secrets/vault.key", []byte(value+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(state+"/secrets/vault.key", 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = openVault(t, vault.Config{StateDir: state}).Get(ctx, name)
	add("key file not a key", err)
	if err := os.Remove(state + "/secrets/vault.key"); err != nil {
		t.Fatal(err)
	}
	_, err = openVault(t, vault.Config{StateDir: state}).Get(ctx, name)
	add("key file missing", err)

	// A tampered entry.
	byCfg := openVault(t, vault.Config{StateDir: state, Key: key})
	d := readDoc(t, byCfg.Path())
	e := d.Entries[name.String()]
	ct, _ := base64.StdEncoding.DecodeString(e.Ciphertext)
	ct[3] ^= 1
	e.Ciphertext = base64.StdEncoding.EncodeToString(ct)
	d.Entries[name.String()] = e
	writeDoc(t, byCfg.Path(), d)
	_, err = byCfg.Get(ctx, name)
	add("tampered", err)

	for _, err := range errs {
		for _, form := range []string{err.Error(), fmt.Sprintf("%v", err), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", err)} {
			for _, s := range secrets {
				if strings.Contains(form, s) {
					t.Errorf("error shows secret material %q: %s", s, form)
				}
			}
		}
	}
	if len(errs) < 15 {
		t.Fatalf("only %d failure paths ran", len(errs))
	}
}
