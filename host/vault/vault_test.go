package vault_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/vault"
)

func TestRoundTripWithKeyFile(t *testing.T) {
	state := t.TempDir()
	v := openVault(t, vault.Config{StateDir: state})
	if _, err := os.Stat(filepath.Join(state, "secrets")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Open created the secrets directory: %v", err)
	}
	before := time.Now().UTC().Truncate(time.Second)
	values := map[string]string{
		"skill:acme.echo_http/api_token": "tok-1",
		"principal:admin:ops/api_token":  "tok-2",
		"global/shared":                  "line one\nline two\x00binary",
	}
	for n, val := range values {
		mustSet(t, v, n, val)
	}
	for n, val := range values {
		if got := mustGet(t, v, n); got != val {
			t.Errorf("Get %s = %q, want %q", n, got, val)
		}
	}
	// A second Vault on the same directory reads the key from the file.
	v2 := openVault(t, vault.Config{StateDir: state})
	for n, val := range values {
		if got := mustGet(t, v2, n); got != val {
			t.Errorf("second vault: Get %s = %q, want %q", n, got, val)
		}
	}
	// Overwrite.
	mustSet(t, v2, "global/shared", "new")
	if got := mustGet(t, v, "global/shared"); got != "new" {
		t.Errorf("after overwrite Get = %q", got)
	}

	list, err := v.List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range list {
		names = append(names, e.Name.String())
		if e.UpdatedAt.Before(before) || e.UpdatedAt.After(time.Now().Add(time.Second)) {
			t.Errorf("%s updated_at %v is not around now", e.Name, e.UpdatedAt)
		}
	}
	want := []string{"global/shared", "principal:admin:ops/api_token", "skill:acme.echo_http/api_token"}
	if strings.Join(names, ",") != strings.Join(want, ",") {
		t.Errorf("List = %q, want %q", names, want)
	}

	for path, mode := range map[string]os.FileMode{
		filepath.Join(state, "secrets"):            0o700 | os.ModeDir,
		filepath.Join(state, "secrets/vault.json"): 0o600,
		filepath.Join(state, "secrets/vault.key"):  0o600,
	} {
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode() != mode {
			t.Errorf("%s mode = %v, want %v", path, st.Mode(), mode)
		}
	}
	keyText, err := os.ReadFile(v.KeyPath())
	if err != nil {
		t.Fatal(err)
	}
	if k, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(keyText))); err != nil || len(k) != 32 {
		t.Errorf("key file is not base64 of 32 bytes: %d bytes, %v", len(k), err)
	}
	raw, _ := os.ReadFile(v.Path())
	for _, val := range values {
		if bytes.Contains(raw, []byte(val)) {
			t.Errorf("vault file holds the plaintext %q", val)
		}
	}
	d := readDoc(t, v.Path())
	if d.Version != 1 || d.KeyCheck == "" || len(d.Entries) != 3 {
		t.Errorf("vault file = version %d, key_check %q, %d entries", d.Version, d.KeyCheck, len(d.Entries))
	}
}

func TestHasAndDelete(t *testing.T) {
	v := openVault(t, vault.Config{StateDir: t.TempDir(), Key: testKey(1)})
	n := vault.MustParseName("channel:discord:acct_1/bot_token")
	if ok, err := v.Has(t.Context(), n); err != nil || ok {
		t.Fatalf("Has on an empty vault = %v, %v", ok, err)
	}
	if _, err := v.Get(t.Context(), n); !errors.Is(err, vault.ErrNotFound) || errcode.Of(err) != "secret_not_found" {
		t.Fatalf("Get on an empty vault = %v", err)
	}
	mustSet(t, v, n.String(), "x")
	if ok, err := v.Has(t.Context(), n); err != nil || !ok {
		t.Fatalf("Has after Set = %v, %v", ok, err)
	}
	// Has, List and Delete need no key: a vault opened with a wrong one
	// still answers them.
	other := openVault(t, vault.Config{StateDir: filepath.Dir(filepath.Dir(v.Path())), Key: testKey(2)})
	if ok, err := other.Has(t.Context(), n); err != nil || !ok {
		t.Fatalf("Has with another key = %v, %v", ok, err)
	}
	if deleted, err := other.Delete(t.Context(), n); err != nil || !deleted {
		t.Fatalf("Delete = %v, %v", deleted, err)
	}
	if deleted, err := v.Delete(t.Context(), n); err != nil || deleted {
		t.Fatalf("second Delete = %v, %v", deleted, err)
	}
	if _, err := v.Get(t.Context(), n); !errors.Is(err, vault.ErrNotFound) {
		t.Fatalf("Get after Delete = %v", err)
	}
	// The key check stays, so the wrong key is still refused for Set.
	if err := other.Set(t.Context(), n, []byte("y")); !errors.Is(err, vault.ErrKeyMismatch) {
		t.Fatalf("Set with the wrong key after Delete = %v", err)
	}
}

func TestWrongKey(t *testing.T) {
	state := t.TempDir()
	mustSet(t, openVault(t, vault.Config{StateDir: state, Key: testKey(1)}), "global/k", "v")
	wrong := openVault(t, vault.Config{StateDir: state, Key: testKey(2)})
	n := vault.MustParseName("global/k")
	_, err := wrong.Get(t.Context(), n)
	if !errors.Is(err, vault.ErrKeyMismatch) || errcode.Of(err) != "vault_key_mismatch" {
		t.Fatalf("Get with the wrong key = %v", err)
	}
	if !strings.Contains(err.Error(), "vault.json") {
		t.Errorf("error %q does not name the vault file", err)
	}
	if err := wrong.Set(t.Context(), vault.MustParseName("global/other"), []byte("v")); !errors.Is(err, vault.ErrKeyMismatch) {
		t.Fatalf("Set with the wrong key = %v", err)
	}
	list, err := wrong.List(t.Context())
	if err != nil || len(list) != 1 {
		t.Fatalf("List with the wrong key = %v, %v (the failed Set must write nothing)", list, err)
	}
}

func TestTamperedAndSwappedEntries(t *testing.T) {
	tests := []struct {
		name   string
		tamper func(d *doc)
		get    string
		want   error
	}{
		{"flipped ciphertext byte", func(d *doc) {
			e := d.Entries["global/a"]
			ct, _ := base64.StdEncoding.DecodeString(e.Ciphertext)
			ct[0] ^= 1
			e.Ciphertext = base64.StdEncoding.EncodeToString(ct)
			d.Entries["global/a"] = e
		}, "global/a", vault.ErrCorrupt},
		{"flipped tag byte", func(d *doc) {
			e := d.Entries["global/a"]
			ct, _ := base64.StdEncoding.DecodeString(e.Ciphertext)
			ct[len(ct)-1] ^= 0x80
			e.Ciphertext = base64.StdEncoding.EncodeToString(ct)
			d.Entries["global/a"] = e
		}, "global/a", vault.ErrCorrupt},
		{"other nonce", func(d *doc) {
			e := d.Entries["global/a"]
			e.Nonce = d.Entries["global/b"].Nonce
			d.Entries["global/a"] = e
		}, "global/a", vault.ErrCorrupt},
		{"swapped entries", func(d *doc) {
			d.Entries["global/a"], d.Entries["global/b"] = d.Entries["global/b"], d.Entries["global/a"]
		}, "global/b", vault.ErrCorrupt},
		{"entry copied to a new name", func(d *doc) {
			d.Entries["skill:evil/a"] = d.Entries["global/a"]
		}, "skill:evil/a", vault.ErrCorrupt},
		{"replaced key check", func(d *doc) {
			kc, _ := base64.StdEncoding.DecodeString(d.KeyCheck)
			kc[len(kc)-1] ^= 1
			d.KeyCheck = base64.StdEncoding.EncodeToString(kc)
		}, "global/a", vault.ErrKeyMismatch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := openVault(t, vault.Config{StateDir: t.TempDir(), Key: testKey(7)})
			mustSet(t, v, "global/a", "value-a")
			mustSet(t, v, "global/b", "value-b")
			d := readDoc(t, v.Path())
			tt.tamper(&d)
			writeDoc(t, v.Path(), d)
			got, err := v.Get(t.Context(), vault.MustParseName(tt.get))
			if !errors.Is(err, tt.want) {
				t.Fatalf("Get %s = %q, %v; want %v", tt.get, got, err, tt.want)
			}
			if tt.want == vault.ErrCorrupt && !strings.Contains(err.Error(), tt.get) {
				t.Errorf("error %q does not name the entry", err)
			}
		})
	}
}

func TestCorruptFile(t *testing.T) {
	v := openVault(t, vault.Config{StateDir: t.TempDir(), Key: testKey(3)})
	mustSet(t, v, "global/a", "value")
	good := readDoc(t, v.Path())
	goodEntry := good.Entries["global/a"]
	tests := []struct {
		name string
		data string
		want error
	}{
		{"empty", "", vault.ErrCorrupt},
		{"not json", "not json", vault.ErrCorrupt},
		{"array", "[]", vault.ErrCorrupt},
		{"version 2", `{"version":2,"entries":{}}`, vault.ErrCorrupt},
		{"no version", `{"entries":{}}`, vault.ErrCorrupt},
		{"unknown field", `{"version":1,"entries":{},"extra":1}`, vault.ErrCorrupt},
		{"trailing data", `{"version":1,"entries":{}} {}`, vault.ErrCorrupt},
		{"entries without key check", fmt.Sprintf(`{"version":1,"entries":{"global/a":{"nonce":%q,"ciphertext":%q,"updated_at":%q}}}`, goodEntry.Nonce, goodEntry.Ciphertext, goodEntry.UpdatedAt), vault.ErrCorrupt},
		{"bad entry name", fmt.Sprintf(`{"version":1,"key_check":%q,"entries":{"Global/a":{"nonce":%q,"ciphertext":%q,"updated_at":%q}}}`, good.KeyCheck, goodEntry.Nonce, goodEntry.Ciphertext, goodEntry.UpdatedAt), vault.ErrInvalidName},
		{"short nonce", fmt.Sprintf(`{"version":1,"key_check":%q,"entries":{"global/a":{"nonce":"AAAA","ciphertext":%q,"updated_at":%q}}}`, good.KeyCheck, goodEntry.Ciphertext, goodEntry.UpdatedAt), vault.ErrCorrupt},
		{"short ciphertext", fmt.Sprintf(`{"version":1,"key_check":%q,"entries":{"global/a":{"nonce":%q,"ciphertext":"AAAA","updated_at":%q}}}`, good.KeyCheck, goodEntry.Nonce, goodEntry.UpdatedAt), vault.ErrCorrupt},
		{"bad time", fmt.Sprintf(`{"version":1,"key_check":%q,"entries":{"global/a":{"nonce":%q,"ciphertext":%q,"updated_at":"yesterday"}}}`, good.KeyCheck, goodEntry.Nonce, goodEntry.Ciphertext), vault.ErrCorrupt},
		{"bad key check", `{"version":1,"key_check":"!!","entries":{}}`, vault.ErrCorrupt},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := os.WriteFile(v.Path(), []byte(tt.data), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := v.List(t.Context())
			if !errors.Is(err, tt.want) || !errors.Is(err, vault.ErrCorrupt) {
				t.Fatalf("List = %v, want %v", err, tt.want)
			}
			if !strings.Contains(err.Error(), v.Path()) {
				t.Errorf("error %q does not name the file", err)
			}
			// A writer refuses to replace a file it cannot read.
			if err := v.Set(t.Context(), vault.MustParseName("global/b"), []byte("x")); !errors.Is(err, vault.ErrCorrupt) {
				t.Fatalf("Set over a corrupt file = %v", err)
			}
			if got, _ := os.ReadFile(v.Path()); string(got) != tt.data {
				t.Fatal("Set replaced a corrupt file")
			}
		})
	}
}

func TestFileTooLarge(t *testing.T) {
	v := openVault(t, vault.Config{StateDir: t.TempDir(), Key: testKey(3)})
	if err := os.MkdirAll(filepath.Dir(v.Path()), 0o700); err != nil {
		t.Fatal(err)
	}
	// A sparse file: the reader stops one byte past the limit.
	f, err := os.Create(v.Path())
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(vault.MaxVaultFileBytes + 10); err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, err = v.Has(t.Context(), vault.MustParseName("global/a"))
	if !errors.Is(err, vault.ErrFileTooLarge) || !strings.Contains(err.Error(), fmt.Sprint(vault.MaxVaultFileBytes)) {
		t.Fatalf("Has on an oversized file = %v", err)
	}
}

func TestValueLimits(t *testing.T) {
	v := openVault(t, vault.Config{StateDir: t.TempDir(), Key: testKey(4)})
	n := vault.MustParseName("global/big")
	tests := []struct {
		size int
		want error
		text string
	}{
		{size: 1},
		{size: vault.MaxSecretBytes},
		{size: 0, want: vault.ErrValueEmpty},
		{size: vault.MaxSecretBytes + 1, want: vault.ErrValueTooLarge, text: "value is 65537 bytes, over the 65536-byte limit"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.size), func(t *testing.T) {
			val := bytes.Repeat([]byte{'x'}, tt.size)
			err := v.Set(t.Context(), n, val)
			if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Fatalf("Set %d bytes = %v, want %v", tt.size, err, tt.want)
			}
			if err != nil {
				if !strings.Contains(err.Error(), tt.text) {
					t.Errorf("error %q lacks %q", err, tt.text)
				}
				return
			}
			if got, err := v.Get(t.Context(), n); err != nil || !bytes.Equal(got, val) {
				t.Fatalf("Get = %d bytes, %v", len(got), err)
			}
		})
	}
}

func TestInvalidNameRefused(t *testing.T) {
	v := openVault(t, vault.Config{StateDir: t.TempDir(), Key: testKey(4)})
	bad := vault.Name{Scope: "skill:", Key: "k"}
	ctx := t.Context()
	_, getErr := v.Get(ctx, bad)
	_, hasErr := v.Has(ctx, bad)
	_, delErr := v.Delete(ctx, bad)
	for op, err := range map[string]error{"Set": v.Set(ctx, bad, []byte("x")), "Get": getErr, "Has": hasErr, "Delete": delErr} {
		if !errors.Is(err, vault.ErrInvalidName) {
			t.Errorf("%s with an invalid name = %v", op, err)
		}
	}
}

func TestInsecureKeyFile(t *testing.T) {
	tests := []struct {
		mode os.FileMode
		ok   bool
	}{
		{0o600, true},
		{0o400, true},
		{0o640, false},
		{0o604, false},
		{0o644, false},
		{0o700, false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%04o", tt.mode), func(t *testing.T) {
			state := t.TempDir()
			mustSet(t, openVault(t, vault.Config{StateDir: state}), "global/k", "v")
			v := openVault(t, vault.Config{StateDir: state})
			if err := os.Chmod(v.KeyPath(), tt.mode); err != nil {
				t.Fatal(err)
			}
			got, err := v.Get(t.Context(), vault.MustParseName("global/k"))
			if tt.ok {
				if err != nil || string(got) != "v" {
					t.Fatalf("Get = %q, %v", got, err)
				}
				return
			}
			if !errors.Is(err, vault.ErrKeyInsecure) || errcode.Of(err) != "vault_key_insecure" {
				t.Fatalf("Get with key mode %04o = %v", tt.mode, err)
			}
			if msg := err.Error(); !strings.Contains(msg, v.KeyPath()) || !strings.Contains(msg, fmt.Sprintf("%04o", tt.mode)) {
				t.Errorf("error %q does not name the path and the mode", msg)
			}
			// Nor does Set use it, or replace it.
			if err := v.Set(t.Context(), vault.MustParseName("global/k2"), []byte("v")); !errors.Is(err, vault.ErrKeyInsecure) {
				t.Fatalf("Set with an insecure key file = %v", err)
			}
		})
	}
}

func TestKeyFileNotRegular(t *testing.T) {
	v := openVault(t, vault.Config{StateDir: t.TempDir()})
	if err := os.MkdirAll(v.KeyPath(), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := v.Set(t.Context(), vault.MustParseName("global/k"), []byte("v")); !errors.Is(err, vault.ErrKeyInsecure) {
		t.Fatalf("Set with a directory as key file = %v", err)
	}
}

func TestKeyMissingForSealedVault(t *testing.T) {
	state := t.TempDir()
	v := openVault(t, vault.Config{StateDir: state})
	mustSet(t, v, "global/k", "v")
	if err := os.Remove(v.KeyPath()); err != nil {
		t.Fatal(err)
	}
	v2 := openVault(t, vault.Config{StateDir: state})
	if _, err := v2.Get(t.Context(), vault.MustParseName("global/k")); !errors.Is(err, vault.ErrKeyMissing) {
		t.Fatalf("Get without the key file = %v", err)
	}
	if err := v2.Set(t.Context(), vault.MustParseName("global/k2"), []byte("v")); !errors.Is(err, vault.ErrKeyMissing) {
		t.Fatalf("Set without the key file = %v", err)
	}
	if _, err := os.Stat(v2.KeyPath()); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a new key file was made for a sealed vault: %v", err)
	}
}

func TestEncodedKey(t *testing.T) {
	state := t.TempDir()
	k := testKey(9)
	tests := []struct {
		name string
		env  string
		want error
	}{
		{"base64 key", b64(k), nil},
		{"base64 key with newline", b64(k) + "\n", nil},
		{"not base64", "not base64!", vault.ErrKeyInvalid},
		{"16 bytes", b64(k[:16]), vault.ErrKeyInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := openVault(t, vault.Config{StateDir: state, EncodedKey: tt.env})
			err := v.Set(t.Context(), vault.MustParseName("global/env"), []byte("from-env"))
			if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Fatalf("Set = %v, want %v", err, tt.want)
			}
			if err != nil {
				if !strings.Contains(err.Error(), "Config.EncodedKey ($PALYRA_VAULT_KEY)") {
					t.Errorf("error %q does not name the source", err)
				}
				return
			}
			// The same key given in Config opens it; no key file was made.
			byCfg := openVault(t, vault.Config{StateDir: state, Key: k})
			if got := mustGet(t, byCfg, "global/env"); got != "from-env" {
				t.Fatalf("Get = %q", got)
			}
			if _, err := os.Stat(v.KeyPath()); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("a key file was made although EncodedKey is set: %v", err)
			}
		})
	}
}

func TestKeySourceOrder(t *testing.T) {
	state := t.TempDir()
	// Config.Key wins over both other sources; the command would fail.
	mustSet(t, openVault(t, vault.Config{StateDir: state, Key: testKey(1), EncodedKey: b64(testKey(2)), KeyCommand: "exit 1"}), "global/a", "v")
	mustGet(t, openVault(t, vault.Config{StateDir: state, Key: testKey(1)}), "global/a")
	// EncodedKey wins over the command.
	_, err := openVault(t, vault.Config{StateDir: state, EncodedKey: b64(testKey(2)), KeyCommand: "exit 1"}).Get(t.Context(), vault.MustParseName("global/a"))
	if !errors.Is(err, vault.ErrKeyMismatch) {
		t.Fatalf("Get with EncodedKey set to another key = %v, want a mismatch (not a command failure)", err)
	}
	if !strings.Contains(err.Error(), "Config.EncodedKey ($PALYRA_VAULT_KEY)") {
		t.Errorf("mismatch %q does not name the key source", err)
	}
}

func TestKeyCommand(t *testing.T) {
	k := testKey(5)
	tests := []struct {
		name    string
		command string
		want    error
		text    string
	}{
		{name: "printf", command: "printf %s " + b64(k)},
		{name: "echo with newline", command: "echo " + b64(k)},
		{name: "exit status", command: "echo boom >&2; exit 3", want: vault.ErrKeyCommand, text: `stderr: "boom"`},
		{name: "not a key", command: "printf %s nope", want: vault.ErrKeyInvalid, text: "Config.KeyCommand ($PALYRA_VAULT_KEY_COMMAND)"},
		{name: "too much output", command: "head -c 5000 /dev/zero", want: vault.ErrKeyCommand, text: "5000 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			state := t.TempDir()
			v := openVault(t, vault.Config{StateDir: state, KeyCommand: tt.command})
			err := v.Set(t.Context(), vault.MustParseName("global/cmd"), []byte("from-cmd"))
			if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Fatalf("Set = %v, want %v", err, tt.want)
			}
			if err != nil {
				if !strings.Contains(err.Error(), tt.text) {
					t.Errorf("error %q lacks %q", err, tt.text)
				}
				if strings.Contains(err.Error(), tt.command) {
					t.Errorf("error %q quotes the command", err)
				}
				return
			}
			if got := mustGet(t, openVault(t, vault.Config{StateDir: state, Key: k}), "global/cmd"); got != "from-cmd" {
				t.Fatalf("Get = %q", got)
			}
		})
	}
}

func TestKeyCommandBoundByContext(t *testing.T) {
	v := openVault(t, vault.Config{StateDir: t.TempDir(), KeyCommand: "sleep 60 & sleep 60; wait"})
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	err := v.Set(ctx, vault.MustParseName("global/k"), []byte("v"))
	if !errors.Is(err, vault.ErrKeyCommand) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Set with a hanging key command = %v", err)
	}
}

func TestOpenConfig(t *testing.T) {
	tests := []struct {
		name string
		cfg  vault.Config
		ok   bool
	}{
		{"state dir", vault.Config{StateDir: "rel/state"}, true},
		{"key", vault.Config{StateDir: "s", Key: testKey(1)}, true},
		{"no state dir", vault.Config{}, false},
		{"short key", vault.Config{StateDir: "s", Key: make([]byte, 16)}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := vault.Open(tt.cfg)
			if tt.ok != (err == nil) {
				t.Fatalf("Open = %v", err)
			}
			if err != nil {
				if !errors.Is(err, vault.ErrInvalidConfig) {
					t.Fatalf("Open error %v does not wrap ErrInvalidConfig", err)
				}
				return
			}
			if !filepath.IsAbs(v.Path()) || filepath.Base(v.Path()) != "vault.json" {
				t.Fatalf("Path = %q", v.Path())
			}
		})
	}
}

func TestConfigKeyIsCopied(t *testing.T) {
	state := t.TempDir()
	k := testKey(6)
	v := openVault(t, vault.Config{StateDir: state, Key: k})
	clear(k)
	mustSet(t, v, "global/a", "v")
	if got := mustGet(t, openVault(t, vault.Config{StateDir: state, Key: testKey(6)}), "global/a"); got != "v" {
		t.Fatalf("Get = %q", got)
	}
}

// TestConcurrentSet runs writers through one shared Vault and through Vaults
// of their own (as separate processes would), with a reader that parses the
// file all along: every write survives and the file is never half-written.
func TestConcurrentSet(t *testing.T) {
	state := t.TempDir()
	shared := openVault(t, vault.Config{StateDir: state})
	const writers, each = 6, 5
	var wg sync.WaitGroup
	errs := make(chan error, writers*each+1)
	done := make(chan struct{})
	var reads int
	var readerWG sync.WaitGroup
	readerWG.Add(1)
	r := openVault(t, vault.Config{StateDir: state})
	go func() {
		defer readerWG.Done()
		for {
			select {
			case <-done:
				return
			default:
			}
			if _, err := r.List(context.Background()); err != nil {
				errs <- fmt.Errorf("reader: %w", err)
				return
			}
			reads++
		}
	}()
	for w := range writers {
		v := shared
		if w%2 == 1 {
			v = openVault(t, vault.Config{StateDir: state})
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				n := vault.MustParseName(fmt.Sprintf("skill:w%d/k%d", w, i))
				if err := v.Set(context.Background(), n, []byte(fmt.Sprintf("value-%d-%d", w, i))); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(done)
	readerWG.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if reads == 0 {
		t.Error("the reader never read")
	}
	list, err := shared.List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != writers*each {
		t.Fatalf("List has %d entries, want %d", len(list), writers*each)
	}
	for w := range writers {
		for i := range each {
			if got := mustGet(t, shared, fmt.Sprintf("skill:w%d/k%d", w, i)); got != fmt.Sprintf("value-%d-%d", w, i) {
				t.Errorf("skill:w%d/k%d = %q", w, i, got)
			}
		}
	}
}

func TestCancelledContext(t *testing.T) {
	v := openVault(t, vault.Config{StateDir: t.TempDir(), Key: testKey(1)})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	n := vault.MustParseName("global/k")
	_, getErr := v.Get(ctx, n)
	_, hasErr := v.Has(ctx, n)
	_, listErr := v.List(ctx)
	_, delErr := v.Delete(ctx, n)
	for op, err := range map[string]error{"Set": v.Set(ctx, n, []byte("x")), "Get": getErr, "Has": hasErr, "List": listErr, "Delete": delErr} {
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a cancelled context = %v", op, err)
		}
	}
	if _, err := os.Stat(v.Path()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a cancelled Set wrote the vault: %v", err)
	}
}

// TestEnvironmentIgnored: the package reads no environment. With the
// variables palyra fills EncodedKey and KeyCommand from set, a vault
// configured with neither uses its key file.
func TestEnvironmentIgnored(t *testing.T) {
	t.Setenv("PALYRA_VAULT_KEY", b64(testKey(7)))
	t.Setenv("PALYRA_VAULT_KEY_COMMAND", "exit 1")
	state := t.TempDir()
	v := openVault(t, vault.Config{StateDir: state})
	mustSet(t, v, "global/a", "v")
	if _, err := os.Stat(v.KeyPath()); err != nil {
		t.Fatalf("no key file was made: %v", err)
	}
	_, err := openVault(t, vault.Config{StateDir: state, Key: testKey(7)}).Get(t.Context(), vault.MustParseName("global/a"))
	if !errors.Is(err, vault.ErrKeyMismatch) {
		t.Fatalf("the vault was sealed with the environment's key: Get = %v", err)
	}
}

// TestCreate: Create stores a new name and refuses one that holds a
// value, changing nothing; the signing scope is a valid name.
func TestCreate(t *testing.T) {
	ctx := t.Context()
	v, err := vault.Open(vault.Config{StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	name := vault.MustParseName(vault.SigningScope + "/acme")
	if err := v.Create(ctx, name, []byte("first")); err != nil {
		t.Fatal(err)
	}
	if err := v.Create(ctx, name, []byte("second")); !errors.Is(err, vault.ErrExists) {
		t.Fatalf("second Create: %v, want vault.ErrExists", err)
	}
	if got, err := v.Get(ctx, name); err != nil || string(got) != "first" {
		t.Fatalf("after a refused Create: %q, %v", got, err)
	}
}

// TestConcurrentCreate races Creates of one name from several Vaults on one
// fresh state directory (the first also makes the key file): exactly one
// wins, and its value is the one stored.
func TestConcurrentCreate(t *testing.T) {
	state := t.TempDir()
	n := vault.MustParseName(vault.SigningScope + "/acme")
	const racers = 6
	var wg sync.WaitGroup
	results := make([]error, racers)
	for i := range racers {
		v := openVault(t, vault.Config{StateDir: state})
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = v.Create(context.Background(), n, []byte(fmt.Sprintf("value-%d", i)))
		}()
	}
	wg.Wait()
	winner := -1
	for i, err := range results {
		switch {
		case err == nil && winner >= 0:
			t.Fatalf("Creates %d and %d both succeeded", winner, i)
		case err == nil:
			winner = i
		case !errors.Is(err, vault.ErrExists) || errcode.Of(err) != "secret_exists":
			t.Fatalf("Create %d = %v, want nil or secret_exists", i, err)
		case !strings.Contains(err.Error(), n.String()) || strings.Contains(err.Error(), "value-"):
			t.Fatalf("error %q must name the entry and no value", err)
		}
	}
	if winner < 0 {
		t.Fatal("no Create succeeded")
	}
	if got := mustGet(t, openVault(t, vault.Config{StateDir: state}), n.String()); got != fmt.Sprintf("value-%d", winner) {
		t.Fatalf("stored %q, want the winner's value-%d", got, winner)
	}
}
