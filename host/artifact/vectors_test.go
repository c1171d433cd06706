package artifact

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// vectorsDir holds the compatibility vectors (testdata/vectors/README.md).
var vectorsDir = filepath.Join("..", "..", "testdata", "vectors")

type vectorEntry struct {
	Path   string `json:"path"`
	Bytes  int    `json:"bytes"`
	SHA256 string `json:"sha256"`
}

type vectorArtifact struct {
	SigningSeedHex  string        `json:"signing_seed_hex"`
	PublicKeyHex    string        `json:"public_key_hex"`
	KeyID           string        `json:"key_id"`
	PayloadSHA256   string        `json:"payload_sha256"`
	SignatureBase64 string        `json:"signature_base64"`
	Entries         []vectorEntry `json:"entries_in_hash_order"`
	IntegrityFiles  []vectorEntry `json:"integrity_files"`
	Expected        struct {
		ManifestWarnings []string `json:"manifest_warnings"`
		CapabilityGrants struct {
			HTTPHosts       []string `json:"http_hosts"`
			SecretKeys      []string `json:"secret_keys"`
			StoragePrefixes []string `json:"storage_prefixes"`
			Channels        []string `json:"channels"`
		} `json:"capability_grants"`
		PolicyBindings []struct {
			Action           string `json:"action"`
			Resource         string `json:"resource"`
			RequiresApproval bool   `json:"requires_approval"`
		} `json:"policy_bindings"`
	} `json:"expected"`
}

type vectorFile struct {
	Framing struct {
		Entries        map[string]string `json:"entries"`
		HashedBytesHex string            `json:"hashed_bytes_hex"`
		PayloadSHA256  string            `json:"payload_sha256"`
	} `json:"framing_example"`
	Artifacts map[string]vectorArtifact `json:"artifacts"`
}

func loadVectors(t testing.TB) vectorFile {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(vectorsDir, "derived", "expected.json"))
	if err != nil {
		t.Fatalf("vectors: %v", err)
	}
	var v vectorFile
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("expected.json: %v", err)
	}
	if len(v.Artifacts) != 2 {
		t.Fatalf("expected.json lists %d artifacts, want 2", len(v.Artifacts))
	}
	return v
}

// trustStoreFile reads a derived trust-store JSON into a testStore.
func trustStoreFile(t testing.TB, name string) *testStore {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(vectorsDir, "derived", name))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Trusted map[string][]string `json:"trusted_publishers"`
		TOFU    map[string]string   `json:"tofu_publishers"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	return &testStore{trusted: f.Trusted, tofu: f.TOFU}
}

func TestVectorFraming(t *testing.T) {
	t.Parallel()
	v := loadVectors(t)
	e := map[string][]byte{}
	for k, s := range v.Framing.Entries {
		e[k] = []byte(s)
	}
	if got := PayloadSHA256(e); got != v.Framing.PayloadSHA256 {
		t.Fatalf("PayloadSHA256(framing example) = %s, want %s", got, v.Framing.PayloadSHA256)
	}
}

// TestVectorArtifacts checks both derived artifacts: hash, key_id,
// signature and per-entry digests match exactly, signature.json is
// rendered byte-identically, and the trust outcomes are as listed.
func TestVectorArtifacts(t *testing.T) {
	t.Parallel()
	v := loadVectors(t)
	for file, want := range v.Artifacts {
		t.Run(file, func(t *testing.T) {
			t.Parallel()
			a, err := ReadFile(filepath.Join(vectorsDir, "derived", file))
			if err != nil {
				t.Fatalf("ReadFile: %v", err)
			}
			in, err := a.Inspect()
			if err != nil {
				t.Fatalf("Inspect: %v", err)
			}
			if in.PayloadSHA256 != want.PayloadSHA256 {
				t.Errorf("payload_sha256 = %s, want %s", in.PayloadSHA256, want.PayloadSHA256)
			}
			if in.Signature.KeyID != want.KeyID {
				t.Errorf("key_id = %s, want %s", in.Signature.KeyID, want.KeyID)
			}
			if in.Signature.SignatureBase64 != want.SignatureBase64 {
				t.Errorf("signature_base64 = %s, want %s", in.Signature.SignatureBase64, want.SignatureBase64)
			}
			if got := hex.EncodeToString(in.PublicKey); got != want.PublicKeyHex {
				t.Errorf("public key = %s, want %s", got, want.PublicKeyHex)
			}
			if got := KeyID(in.PublicKey); got != want.KeyID {
				t.Errorf("KeyID = %s, want %s", got, want.KeyID)
			}
			var order []string
			for _, name := range a.Names() {
				if name != SignaturePath {
					order = append(order, name)
				}
			}
			if len(order) != len(want.Entries) {
				t.Fatalf("entries %q, want %d", order, len(want.Entries))
			}
			for i, we := range want.Entries {
				data, _ := a.Entry(we.Path)
				if order[i] != we.Path || len(data) != we.Bytes || sha256Hex(data) != we.SHA256 {
					t.Errorf("entry %d: %s (%d bytes, %s), want %s (%d bytes, %s)", i, order[i], len(data), sha256Hex(data), we.Path, we.Bytes, we.SHA256)
				}
			}
			var integ []string
			for _, f := range in.Manifest.Integrity.Files {
				integ = append(integ, f.Path+"="+f.SHA256)
			}
			var wantInteg []string
			for _, f := range want.IntegrityFiles {
				wantInteg = append(wantInteg, f.Path+"="+f.SHA256)
			}
			if strings.Join(integ, ",") != strings.Join(wantInteg, ",") {
				t.Errorf("integrity %q, want %q", integ, wantInteg)
			}
			// signature.json as we would write it is byte-identical.
			rendered, err := in.Signature.marshal()
			if err != nil {
				t.Fatal(err)
			}
			if raw, _ := a.Entry(SignaturePath); !bytes.Equal(rendered, raw) {
				t.Errorf("signature.json rendering differs:\n%s\nwant:\n%s", rendered, raw)
			}
			// Re-sign the vector's own entries (exact skill.toml bytes) with
			// the vector seed: same hash and signature.
			seed, _ := hex.DecodeString(want.SigningSeedHex)
			key, err := ParseSigningKey([]byte(want.SigningSeedHex))
			if err != nil || !bytes.Equal(key.Seed(), seed) {
				t.Fatalf("ParseSigningKey(seed hex): %v", err)
			}
			entries := map[string][]byte{}
			for _, name := range a.Names() {
				entries[name], _ = a.Entry(name)
			}
			payload := PayloadSHA256(entries)
			sig := signPayload(key, in.Manifest.Publisher, payload, in.Signature.SignedAtUnixMS)
			if payload != want.PayloadSHA256 || sig != in.Signature {
				t.Errorf("re-signed %+v, want %+v", sig, in.Signature)
			}
		})
	}
}

// TestVectorTrust checks the trust outcomes listed in expected.json.
func TestVectorTrust(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	echo := filepath.Join(vectorsDir, "derived", "acme.echo_http-1.0.0.palyra-skill")
	hook := filepath.Join(vectorsDir, "derived", "acme.hook_skill-1.0.0.palyra-skill")
	echoData, err := os.ReadFile(echo)
	if err != nil {
		t.Fatal(err)
	}
	hookData, err := os.ReadFile(hook)
	if err != nil {
		t.Fatal(err)
	}

	store := newTestStore()
	if _, err := Verify(ctx, echoData, VerifyOptions{Trust: store}); !errors.Is(err, errUntrusted) {
		t.Errorf("empty store without TOFU: %v, want UntrustedPublisher", err)
	}
	r, err := Verify(ctx, echoData, VerifyOptions{Trust: store, AllowTOFU: true})
	if err != nil || r.TrustDecision != "tofu_newly_pinned" {
		t.Fatalf("empty store with TOFU: %+v, %v", r, err)
	}
	after := trustStoreFile(t, "trust-store.after-tofu-echo.json")
	if store.tofu["acme"] != after.tofu["acme"] {
		t.Errorf("pinned %q, want %q (trust-store.after-tofu-echo.json)", store.tofu["acme"], after.tofu["acme"])
	}
	if r, err := Verify(ctx, echoData, VerifyOptions{Trust: after}); err != nil || r.TrustDecision != "tofu_pinned" {
		t.Errorf("after-tofu store: %+v, %v; want tofu_pinned", r, err)
	}
	if r, err := Verify(ctx, echoData, VerifyOptions{Trust: trustStoreFile(t, "trust-store.allowlist-echo.json")}); err != nil || r.TrustDecision != "allowlisted" {
		t.Errorf("allowlist store: %+v, %v; want allowlisted", r, err)
	}
	otherKey := &testStore{trusted: map[string][]string{"acme": {strings.Repeat("ab", 32)}}, tofu: map[string]string{}}
	if _, err := Verify(ctx, echoData, VerifyOptions{Trust: otherKey, AllowTOFU: true}); !errors.Is(err, errTrustedKey) {
		t.Errorf("allowlist with another key: %v, want TrustedPublisherKeyMismatch", err)
	}
	if _, err := Verify(ctx, hookData, VerifyOptions{Trust: after, AllowTOFU: true}); !errors.Is(err, errTOFUKeyChange) {
		t.Errorf("hook skill against the echo pin: %v, want TofuKeyMismatch", err)
	}
	if r, err := Verify(ctx, hookData, VerifyOptions{Trust: newTestStore(), AllowTOFU: true}); err != nil || r.TrustDecision != "tofu_newly_pinned" {
		t.Errorf("hook skill, empty store, TOFU: %+v, %v", r, err)
	}
}

// TestVectorDerived compares warnings, grants and bindings with
// expected.json. These come from host/manifest's Warnings,
// CapabilityGrants and PolicyBindings.
func TestVectorDerived(t *testing.T) {
	t.Parallel()
	v := loadVectors(t)
	for file, want := range v.Artifacts {
		t.Run(file, func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(filepath.Join(vectorsDir, "derived", file))
			if err != nil {
				t.Fatal(err)
			}
			r, err := Verify(context.Background(), data, VerifyOptions{Trust: newTestStore(), AllowTOFU: true})
			if err != nil {
				t.Fatal(err)
			}
			var codes []string
			for _, w := range r.ManifestWarnings {
				codes = append(codes, w.Code)
			}
			if strings.Join(codes, ",") != strings.Join(want.Expected.ManifestWarnings, ",") {
				t.Errorf("warnings %q, want %q", codes, want.Expected.ManifestWarnings)
			}
			gotGrants, _ := json.Marshal(r.CapabilityGrants)
			wantGrants, _ := json.Marshal(want.Expected.CapabilityGrants)
			if !bytes.Equal(normJSON(t, gotGrants), normJSON(t, wantGrants)) {
				t.Errorf("grants %s, want %s", gotGrants, wantGrants)
			}
			gotB, _ := json.Marshal(r.PolicyBindings)
			wantB, _ := json.Marshal(want.Expected.PolicyBindings)
			if !bytes.Equal(normJSON(t, gotB), normJSON(t, wantB)) {
				t.Errorf("bindings %s, want %s", gotB, wantB)
			}
		})
	}
}

func normJSON(t testing.TB, b []byte) []byte {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(v)
	return out
}

// TestVectorExampleInputs: the echo example inputs are the vector's entries,
// so building them with the same seed signs the same module, asset, SBOM
// and provenance bytes; our own build of them verifies.
func TestVectorExampleInputs(t *testing.T) {
	t.Parallel()
	v := loadVectors(t)
	want := v.Artifacts["acme.echo_http-1.0.0.palyra-skill"]
	dir := filepath.Join(vectorsDir, "palyra-echo-http-example")
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	files := map[string][]byte{
		"modules/module.wasm": read("module.wasm"),
		"assets/prompt.txt":   read(filepath.Join("assets", "prompt.txt")),
		SBOMPath:              read("sbom.cdx.json"),
		ProvenancePath:        read("provenance.json"),
	}
	for _, we := range want.Entries {
		if b, ok := files[we.Path]; ok && sha256Hex(b) != we.SHA256 {
			t.Errorf("example %s differs from the vector entry", we.Path)
		}
	}
	key, err := ParseSigningKey([]byte(want.SigningSeedHex + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	// Palyra's CLI test passes absolute paths.
	absDir, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	modulePath, err := ModuleEntryPath(filepath.Join(absDir, "module.wasm"))
	if err != nil || modulePath != "modules/module.wasm" {
		t.Fatalf("ModuleEntryPath(absolute) = %q, %v", modulePath, err)
	}
	built, err := Build(BuildInput{
		Manifest:   read("skill.toml"),
		Modules:    []File{{Path: CLIPath(filepath.Join(absDir, "module.wasm")), Data: files["modules/module.wasm"]}},
		Assets:     []File{{Path: CLIPath(filepath.Join(absDir, "assets", "prompt.txt")), Data: files["assets/prompt.txt"]}},
		SBOM:       files[SBOMPath],
		Provenance: files[ProvenancePath],
		SigningKey: key,
		SignedAt:   testSignAt,
	})
	if err != nil {
		t.Fatalf("Build(example): %v", err)
	}
	if got := KeyID(key.Public().(ed25519.PublicKey)); built.Signature.KeyID != want.KeyID || got != want.KeyID {
		t.Errorf("key_id %s, want %s", built.Signature.KeyID, want.KeyID)
	}
	if pk, _ := base64.StdEncoding.DecodeString(built.Signature.PublicKeyBase64); hex.EncodeToString(pk) != want.PublicKeyHex {
		t.Errorf("public key %x, want %s", pk, want.PublicKeyHex)
	}
	r, err := Verify(context.Background(), built.Bytes, VerifyOptions{Trust: trustStoreFile(t, "trust-store.allowlist-echo.json")})
	if err != nil || r.TrustDecision != "allowlisted" {
		t.Fatalf("Verify(our build of the example) = %+v, %v", r, err)
	}
	// Ours re-serializes skill.toml, so only its payload hash differs from
	// the vector's (whose skill.toml is the original text plus the list).
	for name, b := range files {
		if !bytes.Equal(built.Entries[name], b) {
			t.Errorf("built %s differs from the input", name)
		}
	}
}
