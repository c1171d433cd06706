package main

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/palyra-go/palyra/host/artifact"
	"github.com/palyra-go/palyra/host/registry"
	"github.com/palyra-go/palyra/host/vault"
)

// TestSigningKeyFromVault: keys generate --vault-ref stores a new key in
// the encrypted vault and prints only its public half; package build and
// keys public sign and read with it by reference; the seed is nowhere in
// clear (no file of the state dir, no output); a second generate, a scope
// skills can be granted, a missing entry and an entry that is no key are
// refused with their codes.
func TestSigningKeyFromVault(t *testing.T) {
	state := t.TempDir()
	var gen keyReport
	cli(t, state, "", "keys", "generate", "--json", "--vault-ref", "signing/acme").decode(t, &gen)
	if gen.VaultRef != "signing/acme" || gen.KeyFile != "" || len(gen.PublicKeyHex) != 64 {
		t.Fatalf("generate: %+v", gen)
	}

	// The seed, read back the way a signer does, is nowhere in clear.
	v, err := vault.Open(vault.Config{StateDir: state})
	if err != nil {
		t.Fatal(err)
	}
	stored, err := v.Get(t.Context(), vault.MustParseName("signing/acme"))
	if err != nil {
		t.Fatal(err)
	}
	priv, err := artifact.ParseSigningKey(stored)
	if err != nil {
		t.Fatal(err)
	}
	seedHex := hex.EncodeToString(priv.Seed())
	secrets := []string{seedHex, strings.ToUpper(seedHex), base64.StdEncoding.EncodeToString(priv.Seed())}

	out := filepath.Join(t.TempDir(), "echo.palyra-skill")
	var built buildReport
	r := cli(t, state, "", append(buildArgs(out), "--signing-key-vault-ref", "signing/acme")...)
	r.decode(t, &built)
	if built.SignatureKeyID != gen.KeyID {
		t.Fatalf("built with key %s, generated %s", built.SignatureKeyID, gen.KeyID)
	}
	var pub keyReport
	pr := cli(t, state, "", "keys", "public", "--json", "--vault-ref", "signing/acme")
	pr.decode(t, &pub)
	if pub.PublicKeyHex != gen.PublicKeyHex || pub.KeyID != gen.KeyID {
		t.Fatalf("public: %+v, generated %+v", pub, gen)
	}
	outputs := r.stdout + r.stderr + pr.stdout + pr.stderr
	err = filepath.WalkDir(state, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		outputs += string(data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range secrets {
		if strings.Contains(outputs, s) {
			t.Fatalf("the seed is in clear in the state dir or an output")
		}
	}

	for _, tc := range []struct {
		name, code string
		args       []string
	}{
		{"the entry exists", "key_exists", []string{"keys", "generate", "--json", "--vault-ref", "signing/acme"}},
		{"a scope skills can be granted", "usage", []string{"keys", "generate", "--json", "--vault-ref", "global/acme"}},
		{"both destinations", "usage", []string{"keys", "generate", "--json", "--vault-ref", "signing/x", "--out", filepath.Join(t.TempDir(), "k")}},
		{"no entry", "secret_not_found", append(buildArgs(filepath.Join(t.TempDir(), "a.palyra-skill")), "--signing-key-vault-ref", "signing/nobody")},
		{"two key sources", "usage", append(buildArgs(filepath.Join(t.TempDir(), "b.palyra-skill")), "--signing-key-vault-ref", "signing/acme", "--signing-key-stdin")},
		{"an entry that is no key", "invalid_signing_key", []string{"keys", "public", "--json", "--vault-ref", "global/note"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "an entry that is no key" {
				if err := v.Set(t.Context(), vault.MustParseName("global/note"), []byte("not a key, but a secret value")); err != nil {
					t.Fatal(err)
				}
			}
			r := cli(t, state, seed01, tc.args...)
			if r.code == 0 {
				t.Fatalf("accepted: %s", r.stdout)
			}
			if got := r.errorCode(t); got != tc.code {
				t.Fatalf("code %s, want %s: %s", got, tc.code, r.stdout)
			}
			if strings.Contains(r.stdout+r.stderr, "not a key, but") {
				t.Fatalf("a vault value is in the output: %s", r.stdout)
			}
		})
	}
}

// errorMessage decodes a --json failure's message.
func (r result) errorMessage(t *testing.T) string {
	t.Helper()
	var rep errorReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("failure output is not an error report: %v\n%s", err, r.stdout)
	}
	return rep.Error.Message
}

// seedForms returns the encodings a seed could leak in: hex (both cases),
// standard and URL base64 with and without padding, and the raw bytes.
func seedForms(seed []byte) []string {
	h := hex.EncodeToString(seed)
	return []string{
		h, strings.ToUpper(h),
		base64.StdEncoding.EncodeToString(seed), base64.RawStdEncoding.EncodeToString(seed),
		base64.URLEncoding.EncodeToString(seed), base64.RawURLEncoding.EncodeToString(seed),
		string(seed),
	}
}

// noSeedUnder fails when a regular file under root holds seed in any form,
// and returns how many files it read.
func noSeedUnder(t *testing.T, root string, seed []byte) int {
	t.Helper()
	files := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files++
		for _, f := range seedForms(seed) {
			if strings.Contains(string(data), f) {
				t.Errorf("%s holds the signing seed", p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestVaultSigningKeyNoCopyAnywhere signs with a vault key in text and JSON
// mode and then looks for the seed, in every encoding it could take, in
// each command's output and in every file of the state directory, the
// temporary directory ($TMPDIR, so a temporary copy would show) and the
// output directory; it also checks the artifact verifies against the
// generated public key.
func TestVaultSigningKeyNoCopyAnywhere(t *testing.T) {
	clearVaultEnv(t)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	state, outDir := t.TempDir(), t.TempDir()
	const ref = "signing/acme"
	var outputs []result
	run := func(args ...string) result {
		r := cli(t, state, "", args...)
		outputs = append(outputs, r)
		return r
	}
	var gen keyReport
	run("keys", "generate", "--json", "--vault-ref", ref).decode(t, &gen)
	if r := run("keys", "generate", "--vault-ref", "signing/second"); r.code != exitOK || !strings.HasPrefix(r.stdout, "keys.generate vault_ref=signing/second public_key_hex=") {
		t.Fatalf("generate (text): exit %d %q %s", r.code, r.stdout, r.stderr)
	}
	art := filepath.Join(outDir, "echo.palyra-skill")
	if r := run(append(slicesWithout(buildArgs(art), "--json"), "--signing-key-vault-ref", ref)...); r.code != exitOK || !strings.Contains(r.stdout, "key_id="+gen.KeyID) {
		t.Fatalf("build (text): exit %d %q %s", r.code, r.stdout, r.stderr)
	}
	var built buildReport
	run(append(buildArgs(filepath.Join(outDir, "again.palyra-skill")), "--signing-key-vault-ref", ref)...).decode(t, &built)
	if built.SignatureKeyID != gen.KeyID {
		t.Fatalf("signed by %s, want the generated %s", built.SignatureKeyID, gen.KeyID)
	}
	var v struct {
		Accepted bool `json:"accepted"`
	}
	run("skills", "package", "verify", "--json", "--artifact", art, "--trusted-publisher", "acme="+gen.PublicKeyHex).decode(t, &v)
	if !v.Accepted {
		t.Fatal("the artifact does not verify against the generated public key")
	}

	stored := []byte(vaultGet(t, state, ref))
	key, err := artifact.ParseSigningKey(stored)
	if err != nil {
		t.Fatal(err)
	}
	if got := hex.EncodeToString(key.Public().(ed25519.PublicKey)); got != gen.PublicKeyHex {
		t.Fatalf("the vault's seed has public key %s, want %s", got, gen.PublicKeyHex)
	}
	seed := key.Seed()
	if noSeedUnder(t, filepath.Join(state, "secrets"), seed) == 0 {
		t.Fatal("no vault file was read: the walk checked nothing")
	}
	for _, dir := range []string{state, tmp, outDir} {
		noSeedUnder(t, dir, seed)
	}
	for _, r := range outputs {
		for _, f := range seedForms(seed) {
			if strings.Contains(r.stdout+r.stderr, f) {
				t.Fatalf("a command printed the seed\nstdout: %s\nstderr: %s", r.stdout, r.stderr)
			}
		}
	}
}

// TestVaultSigningKeyRefusals: each refusal's code, a message naming the
// entry (or the flag) and never a stored value or a key pasted where a
// vault ref belongs.
func TestVaultSigningKeyRefusals(t *testing.T) {
	clearVaultEnv(t)
	state, dir := t.TempDir(), t.TempDir()
	const notASeed = "this-is-not-a-seed-Value-9137"
	if r := cli(t, state, notASeed, "secrets", "set", "signing/bad"); r.code != exitOK {
		t.Fatalf("secrets set: %s", r.stderr)
	}
	var gen keyReport
	cli(t, state, "", "keys", "generate", "--json", "--vault-ref", "signing/acme").decode(t, &gen)
	keyFile := filepath.Join(dir, "k.key")
	if err := os.WriteFile(keyFile, []byte(seed01), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "o.palyra-skill")
	build := func(extra ...string) []string { return append(buildArgs(out), extra...) }
	rot := filepath.Join(dir, "rotation.json")
	// Keys pasted where a vault ref belongs: hex, and base64 holding a '/'.
	const b64Seed = "/wEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE="

	tests := []struct {
		name, code, mentions string
		args                 []string
		stdin                string
	}{
		{"generate over an existing entry", "key_exists", "signing/acme", []string{"keys", "generate", "--vault-ref", "signing/acme"}, ""},
		{"generate over an entry that is no key", "key_exists", "signing/bad", []string{"keys", "generate", "--vault-ref", "signing/bad"}, ""},
		{"generate into a skill's scope", "usage", "skill:acme.echo_http/signing", []string{"keys", "generate", "--vault-ref", "skill:acme.echo_http/signing"}, ""},
		{"build from a missing entry", "secret_not_found", "signing/nope", build("--signing-key-vault-ref", "signing/nope"), ""},
		{"build from an entry that is no key", "invalid_signing_key", "signing/bad", build("--signing-key-vault-ref", "signing/bad"), ""},
		{"public from a missing entry", "secret_not_found", "signing/nope", []string{"keys", "public", "--vault-ref", "signing/nope"}, ""},
		{"rotate from a missing entry", "secret_not_found", "signing/nope", []string{"keys", "rotate", "--publisher", "acme", "--old-key-vault-ref", "signing/acme", "--new-key-vault-ref", "signing/nope", "--output", rot}, ""},
		{"hex key as build's vault ref", "vault_invalid_name", "vault ref", build("--signing-key-vault-ref", seed01), ""},
		{"base64 key as public's vault ref", "vault_invalid_name", "vault ref", []string{"keys", "public", "--vault-ref", b64Seed}, ""},
		{"hex key as rotate's vault ref", "vault_invalid_name", "vault ref", []string{"keys", "rotate", "--publisher", "acme", "--old-key-vault-ref", seed01, "--new-key-vault-ref", "signing/acme", "--output", rot}, ""},
		{"hex key as generate's vault ref", "vault_invalid_name", "--vault-ref", []string{"keys", "generate", "--vault-ref", seed01}, ""},
		{"base64 key as generate's vault ref", "vault_invalid_name", "--vault-ref", []string{"keys", "generate", "--vault-ref", b64Seed}, ""},
		{"generate with no destination", "usage", "--out", []string{"keys", "generate"}, ""},
		{"build with file and vault", "usage", "--signing-key-vault-ref", build("--signing-key", keyFile, "--signing-key-vault-ref", "signing/acme"), ""},
		{"public with file and vault", "usage", "--vault-ref", []string{"keys", "public", "--key", keyFile, "--vault-ref", "signing/acme"}, ""},
		{"public with no key", "usage", "--key", []string{"keys", "public"}, ""},
		{"rotate with two old keys", "usage", "--old-key-vault-ref", []string{"keys", "rotate", "--publisher", "acme", "--old-key", keyFile, "--old-key-vault-ref", "signing/acme", "--new-key-vault-ref", "signing/acme", "--output", rot}, ""},
		{"rotate with no new key", "usage", "--new-key-vault-ref", []string{"keys", "rotate", "--publisher", "acme", "--old-key", keyFile, "--output", rot}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := cli(t, state, tt.stdin, append([]string{"--json"}, tt.args...)...)
			if r.code == exitOK || r.errorCode(t) != tt.code {
				t.Fatalf("exit %d, stdout %s, stderr %s; want %s", r.code, r.stdout, r.stderr, tt.code)
			}
			if msg := r.errorMessage(t); !strings.Contains(msg, tt.mentions) {
				t.Fatalf("message %q does not name %s", msg, tt.mentions)
			}
			for _, secret := range []string{notASeed, seed01, b64Seed} {
				r.noValue(t, secret)
			}
			for _, p := range []string{out, rot} {
				if _, err := os.Stat(p); err == nil {
					t.Fatalf("a refused command wrote %s", p)
				}
			}
		})
	}
	// The refused generates changed no entry and stored none.
	var pub keyReport
	cli(t, state, "", "keys", "public", "--json", "--vault-ref", "signing/acme").decode(t, &pub)
	if pub.KeyID != gen.KeyID {
		t.Fatalf("signing/acme now holds key %s, want %s", pub.KeyID, gen.KeyID)
	}
	if got := vaultGet(t, state, "signing/bad"); got != notASeed {
		t.Fatal("signing/bad was replaced")
	}
	v, err := vault.Open(vault.Config{StateDir: state})
	if err != nil {
		t.Fatal(err)
	}
	if has, err := v.Has(t.Context(), vault.MustParseName("skill:acme.echo_http/signing")); err != nil || has {
		t.Fatalf("a refused generate stored skill:acme.echo_http/signing (%v)", err)
	}
}

// TestKeyRotationFromVault signs rotation statements with keys from the
// vault (one imported with secrets set) and from a file and the vault, and
// applies one to a trust store pinned on the old key.
func TestKeyRotationFromVault(t *testing.T) {
	clearVaultEnv(t)
	state := t.TempDir()
	if r := cli(t, state, seed01, "secrets", "set", "signing/old"); r.code != exitOK {
		t.Fatalf("secrets set: %s", r.stderr)
	}
	var gen keyReport
	cli(t, state, "", "keys", "generate", "--json", "--vault-ref", "signing/new").decode(t, &gen)
	stmt := filepath.Join(t.TempDir(), "rotation.json")
	var rot rotationReport
	cli(t, state, "", "keys", "rotate", "--json", "--publisher", "acme",
		"--old-key-vault-ref", "signing/old", "--new-key-vault-ref", "signing/new", "--output", stmt).decode(t, &rot)
	if rot.OldKeyID != "ed25519:34750f98bd59fcfc" || rot.NewKeyID != gen.KeyID || rot.NewPublicKeyHex != gen.PublicKeyHex {
		t.Fatalf("rotate report = %+v, new key %+v", rot, gen)
	}
	oldFile := filepath.Join(t.TempDir(), "old.key")
	if err := os.WriteFile(oldFile, []byte(seed01), 0o600); err != nil {
		t.Fatal(err)
	}
	mixed := filepath.Join(t.TempDir(), "rotation.json")
	cli(t, state, "", "keys", "rotate", "--json", "--publisher", "acme",
		"--old-key", oldFile, "--new-key-vault-ref", "signing/new", "--output", mixed).decode(t, &rot)
	if rot.OldKeyID != "ed25519:34750f98bd59fcfc" || rot.NewKeyID != gen.KeyID {
		t.Fatalf("rotate (file and vault) report = %+v", rot)
	}

	// An operator pinned on the old key moves to the new one.
	operator := t.TempDir()
	oldArt := filepath.Join(t.TempDir(), "old.palyra-skill")
	newArt := filepath.Join(t.TempDir(), "new.palyra-skill")
	var built buildReport
	cli(t, state, "", append(buildArgs(oldArt), "--signing-key-vault-ref", "signing/old")...).decode(t, &built)
	cli(t, state, "", append(buildArgs(newArt), "--signing-key-vault-ref", "signing/new")...).decode(t, &built)
	var v struct {
		TrustDecision string `json:"trust_decision"`
	}
	cli(t, operator, "", "skills", "package", "verify", "--json", "--artifact", oldArt, "--allow-tofu").decode(t, &v)
	var applied rotateReport
	cli(t, operator, "", "trust", "rotate", "--json", "--statement", stmt).decode(t, &applied)
	cli(t, operator, "", "skills", "package", "verify", "--json", "--artifact", newArt).decode(t, &v)
	if v.TrustDecision != "tofu_pinned" {
		t.Fatalf("the new key after rotation: %+v", v)
	}
}

// TestRegistryBuildFromVault signs a registry index with a vault key: the
// index's signature verifies with the generated public key, and neither the
// registry directory nor the output holds the seed.
func TestRegistryBuildFromVault(t *testing.T) {
	clearVaultEnv(t)
	state, dir := t.TempDir(), t.TempDir()
	goodSkill.write(t, dir)
	var gen keyReport
	cli(t, state, "", "keys", "generate", "--json", "--vault-ref", "signing/hub").decode(t, &gen)
	var rep struct {
		KeyID     string `json:"key_id"`
		Publisher string `json:"publisher"`
	}
	r := cli(t, state, "", "skills", "registry", "build", "--json", "--dir", dir, "--signing-key-vault-ref", "signing/hub", "--publisher", "hub")
	r.decode(t, &rep)
	if rep.KeyID != gen.KeyID || rep.Publisher != "hub" {
		t.Fatalf("registry build = %+v, want key %s", rep, gen.KeyID)
	}
	data, err := os.ReadFile(filepath.Join(dir, "index.json"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := registry.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	trustGenerated := func(_ context.Context, publisher string, key ed25519.PublicKey, _ bool) (string, error) {
		if publisher != "hub" || hex.EncodeToString(key) != gen.PublicKeyHex {
			return "", fmt.Errorf("index signed by %s with %x, want hub with the generated key", publisher, key)
		}
		return "allowlisted", nil
	}
	if _, err := registry.Verify(t.Context(), doc, trustGenerated, false); err != nil {
		t.Fatal(err)
	}
	key, err := artifact.ParseSigningKey([]byte(vaultGet(t, state, "signing/hub")))
	if err != nil {
		t.Fatal(err)
	}
	noSeedUnder(t, dir, key.Seed())
	for _, f := range seedForms(key.Seed()) {
		if strings.Contains(r.stdout+r.stderr, f) {
			t.Fatal("registry build printed the seed")
		}
	}
	if r := cli(t, state, "", "--json", "skills", "registry", "build", "--dir", dir, "--signing-key-vault-ref", "signing/nope"); r.code == exitOK || r.errorCode(t) != "secret_not_found" || !strings.Contains(r.errorMessage(t), "signing/nope") {
		t.Fatalf("missing vault key: exit %d %s", r.code, r.stdout)
	}
}
