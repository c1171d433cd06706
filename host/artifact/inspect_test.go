package artifact

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/manifest"
)

// remanifest replaces skill.toml with edit applied to the built manifest,
// re-serialized by manifest.Marshal.
func remanifest(t testing.TB, e map[string][]byte, edit func(m *manifest.Manifest)) {
	t.Helper()
	m, err := manifest.Parse(e[ManifestPath])
	if err != nil {
		t.Fatalf("manifest.Parse(built): %v", err)
	}
	edit(m)
	b, err := manifest.Marshal(m)
	if err != nil {
		t.Fatalf("manifest.Marshal: %v", err)
	}
	e[ManifestPath] = b
}

// TestInspectErrors covers steps 2–11, each with a corrupt variant of a
// good artifact made in code.
func TestInspectErrors(t *testing.T) {
	t.Parallel()
	good := buildGood(t).Bytes
	other := seedKey(9)
	tests := []struct {
		name    string
		corrupt func(t *testing.T, e map[string][]byte)
		want    error
		code    string // want errcode.Of, when it differs from want's
		path    string // want Error.Path, when set
	}{
		// Step 2.
		{name: "skill.toml removed", corrupt: func(t *testing.T, e map[string][]byte) {
			delete(e, ManifestPath)
		}, want: ErrMissingEntry, path: ManifestPath},
		{name: "skill.toml not utf-8", corrupt: func(t *testing.T, e map[string][]byte) {
			e[ManifestPath] = append([]byte("name = \"\xff\"\n"), e[ManifestPath]...)
		}, want: manifest.ErrParse},
		{name: "skill.toml not toml", corrupt: func(t *testing.T, e map[string][]byte) {
			e[ManifestPath] = []byte("this is [not toml")
		}, want: manifest.ErrParse},
		{name: "skill.toml unknown key", corrupt: func(t *testing.T, e map[string][]byte) {
			e[ManifestPath] = append([]byte("surprise = true\n"), e[ManifestPath]...)
		}, want: manifest.ErrParse},
		// Step 3.
		{name: "sbom removed", corrupt: func(t *testing.T, e map[string][]byte) {
			delete(e, SBOMPath)
		}, want: ErrMissingEntry, path: SBOMPath},
		{name: "sbom wrong format", corrupt: func(t *testing.T, e map[string][]byte) {
			e[SBOMPath] = []byte(`{"bomFormat":"SPDX","specVersion":"2.3"}`)
		}, want: ErrInvalidSBOM},
		{name: "sbom empty spec version", corrupt: func(t *testing.T, e map[string][]byte) {
			e[SBOMPath] = []byte(`{"bomFormat":"CycloneDX","specVersion":""}`)
		}, want: ErrInvalidSBOM},
		{name: "sbom spec version not a string", corrupt: func(t *testing.T, e map[string][]byte) {
			e[SBOMPath] = []byte(`{"bomFormat":"CycloneDX","specVersion":1.6}`)
		}, want: ErrInvalidSBOM},
		{name: "sbom is an array", corrupt: func(t *testing.T, e map[string][]byte) {
			e[SBOMPath] = []byte(`[{"bomFormat":"CycloneDX","specVersion":"1.6"}]`)
		}, want: ErrInvalidSBOM},
		{name: "sbom trailing data", corrupt: func(t *testing.T, e map[string][]byte) {
			e[SBOMPath] = []byte(`{"bomFormat":"CycloneDX","specVersion":"1.6"} {}`)
		}, want: ErrInvalidSBOM},
		{name: "sbom nested too deep", corrupt: func(t *testing.T, e map[string][]byte) {
			deep := strings.Repeat("[", 200) + strings.Repeat("]", 200)
			e[SBOMPath] = []byte(`{"bomFormat":"CycloneDX","specVersion":"1.6","x":` + deep + `}`)
		}, want: ErrInvalidSBOM},
		// Step 4.
		{name: "provenance removed", corrupt: func(t *testing.T, e map[string][]byte) {
			delete(e, ProvenancePath)
		}, want: ErrMissingEntry, path: ProvenancePath},
		{name: "provenance without builder", corrupt: func(t *testing.T, e map[string][]byte) {
			e[ProvenancePath] = []byte(`{"subject":[{"name":"m"}]}`)
		}, want: ErrInvalidProvenance},
		{name: "provenance builder not an object", corrupt: func(t *testing.T, e map[string][]byte) {
			e[ProvenancePath] = []byte(`{"builder":"me","subject":[{"name":"m"}]}`)
		}, want: ErrInvalidProvenance},
		{name: "provenance empty subject", corrupt: func(t *testing.T, e map[string][]byte) {
			e[ProvenancePath] = []byte(`{"builder":{},"subject":[]}`)
		}, want: ErrInvalidProvenance},
		// Step 5.
		{name: "no module", corrupt: func(t *testing.T, e map[string][]byte) {
			e["modules/module.bin"] = e["modules/module.wasm"]
			delete(e, "modules/module.wasm")
		}, want: ErrMissingEntry, path: "modules/*.wasm"},
		// Step 6.
		{name: "signature.json removed", corrupt: func(t *testing.T, e map[string][]byte) {
			delete(e, SignaturePath)
		}, want: ErrMissingEntry, path: SignaturePath},
		{name: "signature unknown key", corrupt: func(t *testing.T, e map[string][]byte) {
			e[SignaturePath] = bytes.Replace(e[SignaturePath], []byte(`"algorithm"`), []byte(`"comment": "hi",
  "algorithm"`), 1)
		}, want: ErrInvalidSignatureDocument, path: SignaturePath},
		{name: "signature missing field", corrupt: func(t *testing.T, e map[string][]byte) {
			e[SignaturePath] = bytes.Replace(e[SignaturePath], []byte(`"algorithm": "ed25519-sha256",`), nil, 1)
		}, want: ErrInvalidSignatureDocument},
		{name: "signature duplicate field", corrupt: func(t *testing.T, e map[string][]byte) {
			e[SignaturePath] = bytes.Replace(e[SignaturePath], []byte(`"algorithm": "ed25519-sha256",`), []byte(`"algorithm": "ed25519-sha256", "algorithm": "ed25519-sha256",`), 1)
		}, want: ErrInvalidSignatureDocument},
		{name: "signature null field", corrupt: func(t *testing.T, e map[string][]byte) {
			e[SignaturePath] = bytes.Replace(e[SignaturePath], []byte(`"ed25519-sha256"`), []byte(`null`), 1)
		}, want: ErrInvalidSignatureDocument},
		{name: "signature float timestamp", corrupt: func(t *testing.T, e map[string][]byte) {
			e[SignaturePath] = bytes.Replace(e[SignaturePath], []byte(`1730000000000`), []byte(`1730000000000.0`), 1)
		}, want: ErrInvalidSignatureDocument},
		{name: "signature timestamp overflows i64", corrupt: func(t *testing.T, e map[string][]byte) {
			e[SignaturePath] = bytes.Replace(e[SignaturePath], []byte(`1730000000000`), []byte(`99999999999999999999`), 1)
		}, want: ErrInvalidSignatureDocument},
		{name: "signature trailing data", corrupt: func(t *testing.T, e map[string][]byte) {
			e[SignaturePath] = append(e[SignaturePath], []byte("{}")...)
		}, want: ErrInvalidSignatureDocument},
		{name: "signature not an object", corrupt: func(t *testing.T, e map[string][]byte) {
			e[SignaturePath] = []byte(`["ed25519-sha256"]`)
		}, want: ErrInvalidSignatureDocument},
		{name: "signature not json", corrupt: func(t *testing.T, e map[string][]byte) {
			e[SignaturePath] = []byte(`{"algorithm": `)
		}, want: ErrInvalidSignatureDocument},
		// Step 7.
		{name: "module byte flipped", corrupt: func(t *testing.T, e map[string][]byte) {
			m := bytes.Clone(e["modules/module.wasm"])
			m[len(m)-1] ^= 0x01
			e["modules/module.wasm"] = m
		}, want: ErrPayloadHashMismatch},
		{name: "one byte appended to module", corrupt: func(t *testing.T, e map[string][]byte) {
			e["modules/module.wasm"] = append(bytes.Clone(e["modules/module.wasm"]), 0)
		}, want: ErrPayloadHashMismatch},
		{name: "entry added", corrupt: func(t *testing.T, e map[string][]byte) {
			e["other/x"] = []byte("x")
		}, want: ErrPayloadHashMismatch},
		{name: "entry renamed", corrupt: func(t *testing.T, e map[string][]byte) {
			e["assets/prompt2.txt"] = e["assets/prompt.txt"]
			delete(e, "assets/prompt.txt")
		}, want: ErrPayloadHashMismatch},
		{name: "asset dropped", corrupt: func(t *testing.T, e map[string][]byte) {
			delete(e, "assets/prompt.txt")
		}, want: ErrPayloadHashMismatch},
		{name: "payload hash upper case", corrupt: func(t *testing.T, e map[string][]byte) {
			editSignature(t, e, func(s *Signature) { s.PayloadSHA256 = strings.ToUpper(s.PayloadSHA256) })
		}, want: ErrPayloadHashMismatch},
		// Step 8.
		{name: "wrong algorithm", corrupt: func(t *testing.T, e map[string][]byte) {
			editSignature(t, e, func(s *Signature) { s.Algorithm = "ed25519" })
		}, want: ErrSignatureVerification},
		{name: "wrong key_id", corrupt: func(t *testing.T, e map[string][]byte) {
			editSignature(t, e, func(s *Signature) { s.KeyID = "ed25519:0000000000000000" })
		}, want: ErrSignatureVerification},
		{name: "public key 31 bytes", corrupt: func(t *testing.T, e map[string][]byte) {
			editSignature(t, e, func(s *Signature) { s.PublicKeyBase64 = base64.StdEncoding.EncodeToString(make([]byte, 31)) })
		}, want: ErrSignatureVerification},
		{name: "signature without padding", corrupt: func(t *testing.T, e map[string][]byte) {
			editSignature(t, e, func(s *Signature) { s.SignatureBase64 = strings.TrimRight(s.SignatureBase64, "=") })
		}, want: ErrSignatureVerification},
		{name: "signature url-safe alphabet", corrupt: func(t *testing.T, e map[string][]byte) {
			editSignature(t, e, func(s *Signature) {
				raw, _ := base64.StdEncoding.DecodeString(s.SignatureBase64)
				s.SignatureBase64 = base64.URLEncoding.EncodeToString(urlDistinct(raw))
			})
		}, want: ErrSignatureVerification},
		{name: "signature non-canonical trailing bits", corrupt: func(t *testing.T, e map[string][]byte) {
			editSignature(t, e, func(s *Signature) { s.SignatureBase64 = nonCanonical(s.SignatureBase64) })
		}, want: ErrSignatureVerification},
		{name: "signature with a line break", corrupt: func(t *testing.T, e map[string][]byte) {
			editSignature(t, e, func(s *Signature) { s.SignatureBase64 = s.SignatureBase64[:40] + "\n" + s.SignatureBase64[40:] })
		}, want: ErrSignatureVerification},
		{name: "signature 63 bytes", corrupt: func(t *testing.T, e map[string][]byte) {
			editSignature(t, e, func(s *Signature) { s.SignatureBase64 = base64.StdEncoding.EncodeToString(make([]byte, 63)) })
		}, want: ErrSignatureVerification},
		{name: "signature by another key", corrupt: func(t *testing.T, e map[string][]byte) {
			editSignature(t, e, func(s *Signature) {
				s.SignatureBase64 = base64.StdEncoding.EncodeToString(ed25519.Sign(other, []byte(s.PayloadSHA256)))
			})
		}, want: ErrSignatureVerification},
		{name: "signature over raw digest", corrupt: func(t *testing.T, e map[string][]byte) {
			editSignature(t, e, func(s *Signature) {
				raw := make([]byte, 32)
				copy(raw, s.PayloadSHA256)
				s.SignatureBase64 = base64.StdEncoding.EncodeToString(ed25519.Sign(seedKey(5), raw))
			})
		}, want: ErrSignatureVerification},
		// Step 9.
		{name: "wrong publisher", corrupt: func(t *testing.T, e map[string][]byte) {
			editSignature(t, e, func(s *Signature) { s.Publisher = "evil" })
		}, want: ErrSignatureVerification, path: SignaturePath},
		// Step 10.
		{name: "unlisted entry, re-signed", corrupt: func(t *testing.T, e map[string][]byte) {
			e["other/x"] = []byte("x")
			resign(t, e, seedKey(5))
		}, want: manifest.ErrValidation, path: "other/x"},
		{name: "integrity hash changed, re-signed", corrupt: func(t *testing.T, e map[string][]byte) {
			remanifest(t, e, func(m *manifest.Manifest) {
				for i := range m.Integrity.Files {
					if m.Integrity.Files[i].Path == SBOMPath {
						m.Integrity.Files[i].SHA256 = strings.Repeat("0", 64)
					}
				}
			})
			resign(t, e, seedKey(5))
		}, want: manifest.ErrValidation, path: SBOMPath},
		{name: "integrity hash upper case, re-signed", corrupt: func(t *testing.T, e map[string][]byte) {
			// Edited as text: manifest.Marshal refuses upper-case hex.
			h := sha256Hex(e[SBOMPath])
			e[ManifestPath] = bytes.Replace(e[ManifestPath], []byte(h), []byte(strings.ToUpper(h)), 1)
			resign(t, e, seedKey(5))
		}, want: manifest.ErrValidation},
		{name: "integrity lists a missing entry, re-signed", corrupt: func(t *testing.T, e map[string][]byte) {
			remanifest(t, e, func(m *manifest.Manifest) {
				m.Integrity.Files = append(m.Integrity.Files, manifest.IntegrityFile{Path: "assets/ghost.txt", SHA256: strings.Repeat("a", 64)})
			})
			resign(t, e, seedKey(5))
		}, want: manifest.ErrValidation, path: "assets/ghost.txt"},
		{name: "integrity list empty, re-signed", corrupt: func(t *testing.T, e map[string][]byte) {
			remanifest(t, e, func(m *manifest.Manifest) { m.Integrity.Files = nil })
			resign(t, e, seedKey(5))
		}, want: manifest.ErrValidation},
		// Step 11.
		{name: "needs a newer runtime, re-signed", corrupt: func(t *testing.T, e map[string][]byte) {
			remanifest(t, e, func(m *manifest.Manifest) { m.Compat.MinPalyraVersion = "9.9.9" })
			resign(t, e, seedKey(5))
		}, want: manifest.ErrUnsupportedRuntimeVersion},
		{name: "needs a newer protocol, re-signed", corrupt: func(t *testing.T, e map[string][]byte) {
			remanifest(t, e, func(m *manifest.Manifest) { m.Compat.RequiredProtocolMajor = 2 })
			resign(t, e, seedKey(5))
		}, want: manifest.ErrUnsupportedProtocolMajor},
		// Order: the earlier step wins.
		{name: "missing sbom beats bad signature", corrupt: func(t *testing.T, e map[string][]byte) {
			delete(e, SBOMPath)
			e[SignaturePath] = []byte("garbage")
		}, want: ErrMissingEntry, path: SBOMPath},
		{name: "bad signature document beats payload mismatch", corrupt: func(t *testing.T, e map[string][]byte) {
			e["other/x"] = []byte("x")
			e[SignaturePath] = []byte("{}")
		}, want: ErrInvalidSignatureDocument},
		{name: "payload mismatch beats wrong key_id", corrupt: func(t *testing.T, e map[string][]byte) {
			e["other/x"] = []byte("x")
			editSignature(t, e, func(s *Signature) { s.KeyID = "ed25519:00" })
		}, want: ErrPayloadHashMismatch},
		{name: "manifest error beats missing sbom", corrupt: func(t *testing.T, e map[string][]byte) {
			delete(e, SBOMPath)
			e[ManifestPath] = []byte("[[[")
		}, want: manifest.ErrParse},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			data := messWith(t, good, func(e map[string][]byte) { tt.corrupt(t, e) })
			_, err := Inspect(data)
			if err == nil {
				t.Fatalf("Inspect: err = nil, want %v", tt.want)
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("Inspect: err = %v (code %s), want %v", err, errcode.Of(err), tt.want)
			}
			code := tt.code
			if code == "" {
				code = errcode.Of(tt.want)
			}
			if got := errcode.Of(err); got != code {
				t.Errorf("errcode.Of = %s, want %s (err %v)", got, code, err)
			}
			if !strings.HasPrefix(err.Error(), "artifact: ") {
				t.Errorf("error %q lacks the artifact: prefix", err)
			}
			if tt.path != "" {
				var ae *Error
				if !errors.As(err, &ae) || ae.Path != tt.path {
					t.Errorf("err = %v, want an *Error with Path %q", err, tt.path)
				}
			}
		})
	}
}

// urlDistinct returns sig, or sig with a byte changed so that its base64
// contains '+' or '/' and the URL-safe encoding differs.
func urlDistinct(sig []byte) []byte {
	s := bytes.Clone(sig)
	for !strings.ContainsAny(base64.StdEncoding.EncodeToString(s), "+/") {
		s[0]++
	}
	return s
}

// nonCanonical sets unused low bits in the last base64 character before
// the padding, so a lenient decoder yields the same bytes.
func nonCanonical(s string) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	i := strings.IndexByte(s, '=') - 1
	v := strings.IndexByte(alphabet, s[i])
	return s[:i] + string(alphabet[v|1]) + s[i+1:]
}

// TestNonCanonicalHelper checks the helper does what it claims: Go's
// lenient decoder accepts the string, with the same bytes.
func TestNonCanonicalHelper(t *testing.T) {
	t.Parallel()
	sig := base64.StdEncoding.EncodeToString(make([]byte, 64))
	nc := nonCanonical(sig)
	b, err := base64.StdEncoding.DecodeString(nc)
	if err != nil || !bytes.Equal(b, make([]byte, 64)) || nc == sig {
		t.Fatalf("nonCanonical(%q) = %q: lenient decode %x, %v", sig, nc, b, err)
	}
}

// TestInspectGood covers the palyra-skills acceptance items on a good
// artifact.
func TestInspectGood(t *testing.T) {
	t.Parallel()
	built := buildGood(t)
	in, err := Inspect(built.Bytes)
	if err != nil {
		t.Fatalf("Inspect: %v", err)
	}
	for _, name := range []string{SignaturePath, "modules/module.wasm", ManifestPath, SBOMPath, ProvenancePath, "assets/prompt.txt"} {
		if _, ok := in.Entries[name]; !ok {
			t.Errorf("Entries lacks %s", name)
		}
	}
	if in.PayloadSHA256 != built.PayloadSHA256 || in.Signature != built.Signature {
		t.Errorf("Inspect gave %s / %+v, Build gave %s / %+v", in.PayloadSHA256, in.Signature, built.PayloadSHA256, built.Signature)
	}
	if !bytes.Equal(in.PublicKey, seedKey(5).Public().(ed25519.PublicKey)) {
		t.Errorf("PublicKey = %x", in.PublicKey)
	}
	if len(in.Warnings) != 0 {
		t.Errorf("Warnings = %+v, want none for the sample v2 manifest", in.Warnings)
	}
}

func TestInspectLegacyWarning(t *testing.T) {
	t.Parallel()
	in := sampleInput()
	in.Manifest = []byte(legacyManifest)
	built, err := Build(in)
	if err != nil {
		t.Fatalf("Build(legacy): %v", err)
	}
	if !bytes.Contains(built.Entries[ManifestPath], []byte("min_palyra_version")) {
		t.Errorf("built skill.toml does not use the current compat names:\n%s", built.Entries[ManifestPath])
	}
	got, err := Inspect(built.Bytes)
	if err != nil {
		t.Fatalf("Inspect: %v", err)
	}
	var codes []string
	for _, w := range got.Warnings {
		codes = append(codes, w.Code)
	}
	if !strings.Contains(strings.Join(codes, ","), "legacy_manifest_version") {
		t.Fatalf("Warnings = %q, want legacy_manifest_version", codes)
	}
}

// TestBackslashNames renames a zip entry to use '\': the payload hash is
// over normalized names, so the artifact still verifies, also when
// GODEBUG=zipinsecurepath=0 makes archive/zip flag the name.
func TestBackslashNames(t *testing.T) {
	good := buildGood(t)
	e := entriesOf(t, good.Bytes)
	raw := rawFromEntries(e)
	for i := range raw {
		raw[i].name = strings.ReplaceAll(raw[i].name, "/", `\`)
	}
	data := rawZip(t, raw)
	for _, godebug := range []string{"", "zipinsecurepath=0"} {
		t.Run("GODEBUG="+godebug, func(t *testing.T) {
			t.Setenv("GODEBUG", godebug)
			in, err := Inspect(data)
			if err != nil {
				t.Fatalf("Inspect: %v", err)
			}
			if in.PayloadSHA256 != good.PayloadSHA256 {
				t.Fatalf("payload %s, want %s", in.PayloadSHA256, good.PayloadSHA256)
			}
		})
	}
}

// TestIntegrityPathsNormalized: integrity paths are normalized before the
// comparison, and a path breaking the rule is ErrInvalidPath.
func TestIntegrityPathsNormalized(t *testing.T) {
	t.Parallel()
	good := buildGood(t).Bytes
	ok := messWith(t, good, func(e map[string][]byte) {
		remanifest(t, e, func(m *manifest.Manifest) {
			for i := range m.Integrity.Files {
				m.Integrity.Files[i].Path = strings.ReplaceAll(m.Integrity.Files[i].Path, "/", `\`)
			}
		})
		resign(t, e, seedKey(5))
	})
	if _, err := Inspect(ok); err != nil {
		t.Fatalf("Inspect(backslash integrity paths): %v", err)
	}
	m := &manifest.Manifest{Integrity: manifest.Integrity{Files: []manifest.IntegrityFile{{Path: "../x", SHA256: "00"}}}}
	wantErr(t, checkIntegrity(m, nil), ErrInvalidPath)
}
