package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/trust"
	"github.com/palyra-go/palyra/internal/testskill"
)

// sampleIndex is a valid two-entry index.
func sampleIndex() Index {
	n := uint64(10)
	return Index{SchemaVersion: 1, GeneratedAtUnixMS: 1, Entries: []Entry{
		{SkillID: "acme.a", Version: "1.0.0", Publisher: "acme", Artifact: "a.palyra-skill", ArtifactSHA256: strings.Repeat("a", 64), ArtifactBytes: &n},
		{SkillID: "acme.a", Version: "1.1.0", Publisher: "acme", Artifact: "b.palyra-skill", ArtifactSHA256: strings.Repeat("b", 64)},
	}}
}

// signedDoc returns idx signed by hub with testskill.Key(7), as JSON.
func signedDoc(t testing.TB, idx Index) []byte {
	t.Helper()
	doc := &Document{SchemaVersion: 1, Index: idx, Signature: Sign(&idx, testskill.Key(7), "hub", buildTime)}
	b, err := Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// compactDoc is signedDoc without indentation (a big index that fits a
// page).
func compactDoc(t testing.TB, idx Index) []byte {
	t.Helper()
	b, err := json.Marshal(&Document{SchemaVersion: 1, Index: idx, Signature: Sign(&idx, testskill.Key(7), "hub", buildTime)})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// edit decodes doc into generic JSON, applies f and encodes it again.
func edit(t testing.TB, doc []byte, f func(m map[string]any)) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(doc, &m); err != nil {
		t.Fatal(err)
	}
	f(m)
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func sub(m map[string]any, key string) map[string]any { return m[key].(map[string]any) }
func entry0(m map[string]any) map[string]any {
	return sub(m, "index")["entries"].([]any)[0].(map[string]any)
}

// TestParseRefusals: every structural and entry rule of Parse, each with
// its code.
func TestParseRefusals(t *testing.T) {
	good := signedDoc(t, sampleIndex())
	many := sampleIndex()
	many.Entries = nil
	for i := 0; i <= MaxEntries; i++ {
		many.Entries = append(many.Entries, Entry{SkillID: "s", Version: fmt.Sprintf("1.0.%d", i), Publisher: "p", Artifact: "a", ArtifactSHA256: strings.Repeat("0", 64)})
	}
	dup := sampleIndex()
	dup.Entries[1].Version = "01.0.0" // the same version as 1.0.0, numerically
	cases := []struct {
		name string
		doc  []byte
		want *errcode.Sentinel
	}{
		{"unknown document field", edit(t, good, func(m map[string]any) { m["extra"] = 1 }), ErrInvalidIndex},
		{"unknown index field", edit(t, good, func(m map[string]any) { sub(m, "index")["extra"] = 1 }), ErrInvalidIndex},
		{"unknown entry field", edit(t, good, func(m map[string]any) { entry0(m)["mirror"] = "x" }), ErrInvalidIndex},
		{"unknown signature field", edit(t, good, func(m map[string]any) { sub(m, "signature")["extra"] = 1 }), ErrInvalidIndex},
		{"missing signature", edit(t, good, func(m map[string]any) { delete(m, "signature") }), ErrInvalidIndex},
		{"missing entry field", edit(t, good, func(m map[string]any) { delete(entry0(m), "artifact_sha256") }), ErrInvalidIndex},
		{"duplicate field", []byte(strings.Replace(string(good), `"schema_version": 1,`, `"schema_version": 1, "schema_version": 1,`, 1)), ErrInvalidIndex},
		{"schema version 2", edit(t, good, func(m map[string]any) { sub(m, "index")["schema_version"] = 2 }), ErrInvalidIndex},
		{"trailing data", append(append([]byte{}, good...), []byte(" {}")...), ErrInvalidIndex},
		{"not an object", []byte(`[]`), ErrInvalidIndex},
		{"string version number", edit(t, good, func(m map[string]any) { sub(m, "signature")["signed_at_unix_ms"] = "1" }), ErrInvalidIndex},
		{"artifact_bytes negative", edit(t, good, func(m map[string]any) { entry0(m)["artifact_bytes"] = -1 }), ErrInvalidIndex},
		{"bad semver", edit(t, good, func(m map[string]any) { entry0(m)["version"] = "1.0" }), ErrInvalidEntry},
		{"pre-release semver", edit(t, good, func(m map[string]any) { entry0(m)["version"] = "1.0.0-rc.1" }), ErrInvalidEntry},
		{"bad sha hex", edit(t, good, func(m map[string]any) { entry0(m)["artifact_sha256"] = strings.Repeat("g", 64) }), ErrInvalidEntry},
		{"short sha", edit(t, good, func(m map[string]any) { entry0(m)["artifact_sha256"] = strings.Repeat("a", 63) }), ErrInvalidEntry},
		{"empty skill_id", edit(t, good, func(m map[string]any) { entry0(m)["skill_id"] = " " }), ErrInvalidEntry},
		{"empty publisher", edit(t, good, func(m map[string]any) { entry0(m)["publisher"] = "" }), ErrInvalidEntry},
		{"empty artifact", edit(t, good, func(m map[string]any) { entry0(m)["artifact"] = "" }), ErrInvalidEntry},
		{"duplicate entry", signedDoc(t, dup), ErrDuplicateEntry},
		{"too many entries", compactDoc(t, many), ErrTooManyEntries},
		{"oversized page", append(append([]byte{}, good...), make([]byte, MaxIndexPageBytes)...), ErrPageTooLarge},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse(c.doc)
			if !errors.Is(err, c.want) {
				t.Fatalf("Parse: %v, want %s", err, c.want.Code())
			}
		})
	}
	if _, err := Parse(good); err != nil {
		t.Fatalf("Parse(good): %v", err)
	}
	// null optional fields are absent.
	d, err := Parse(edit(t, good, func(m map[string]any) { entry0(m)["artifact_bytes"] = nil; sub(m, "index")["next_page"] = nil }))
	if err != nil || d.Index.Entries[0].ArtifactBytes != nil || d.Index.NextPage != nil {
		t.Fatalf("Parse with nulls: %v", err)
	}
}

// TestLimitErrorsNameLimitAndSize: a limit's error names the limit and the
// size seen.
func TestLimitErrorsNameLimitAndSize(t *testing.T) {
	big := make([]byte, MaxIndexPageBytes+5)
	_, err := Parse(big)
	if err == nil || !strings.Contains(err.Error(), "MaxIndexPageBytes") || !strings.Contains(err.Error(), fmt.Sprint(MaxIndexPageBytes+5)) {
		t.Fatalf("err = %v", err)
	}
}

// TestVerify: a valid index verifies; tampering with the signed index, the
// key id, the algorithm or the signature encoding is refused; the key goes
// through the trust store: untrusted without TOFU, pinned with it, then a
// pinned-other-key refusal; no trust callback is an error.
func TestVerify(t *testing.T) {
	ctx := context.Background()
	good := signedDoc(t, sampleIndex())
	parse := func(b []byte) *Document {
		t.Helper()
		d, err := Parse(b)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	allow := trustingKey(t, "hub", testskill.Key(7))
	bad := []struct {
		name string
		doc  []byte
	}{
		{"tampered entry", edit(t, good, func(m map[string]any) { entry0(m)["artifact"] = "evil.palyra-skill" })},
		{"tampered generated_at", edit(t, good, func(m map[string]any) { sub(m, "index")["generated_at_unix_ms"] = 2 })},
		{"added next_page", edit(t, good, func(m map[string]any) { sub(m, "index")["next_page"] = "more.json" })},
		{"payload hash claims the tampered index", func() []byte {
			idx := sampleIndex()
			b := signedDoc(t, idx)
			idx.Entries[0].Artifact = "evil"
			return edit(t, b, func(m map[string]any) {
				entry0(m)["artifact"] = "evil"
				sub(m, "signature")["payload_sha256"] = PayloadSHA256(&idx)
			})
		}()},
		{"key_id", edit(t, good, func(m map[string]any) { sub(m, "signature")["key_id"] = "ed25519:0000000000000000" })},
		{"algorithm", edit(t, good, func(m map[string]any) { sub(m, "signature")["algorithm"] = "ed25519" })},
		{"unpadded signature", edit(t, good, func(m map[string]any) {
			s := sub(m, "signature")
			s["signature_base64"] = strings.TrimRight(s["signature_base64"].(string), "=")
		})},
		{"other key", edit(t, good, func(m map[string]any) {
			s := sub(m, "signature")
			other := Sign(&Index{}, testskill.Key(8), "hub", buildTime)
			s["public_key_base64"], s["key_id"] = other.PublicKeyBase64, other.KeyID
		})},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			if _, err := Verify(ctx, parse(c.doc), allow, false); !errors.Is(err, ErrSignatureInvalid) {
				t.Fatalf("Verify: %v, want %s", err, ErrSignatureInvalid.Code())
			}
		})
	}

	if _, err := Verify(ctx, parse(good), nil, true); !errors.Is(err, ErrTrustRequired) {
		t.Fatalf("no trust: %v", err)
	}
	store := trust.NewStore()
	if _, err := Verify(ctx, parse(good), storeTrust(store), false); !errors.Is(err, trust.ErrUntrustedPublisher) {
		t.Fatalf("untrusted: %v, want %s", err, trust.ErrUntrustedPublisher.Code())
	}
	v, err := Verify(ctx, parse(good), storeTrust(store), true)
	if err != nil || v.TrustDecision != string(trust.DecisionTOFUNewlyPinned) {
		t.Fatalf("TOFU: %v %v", v, err)
	}
	if v, err = Verify(ctx, parse(good), storeTrust(store), false); err != nil || v.TrustDecision != string(trust.DecisionTOFUPinned) {
		t.Fatalf("pinned: %v %v", v, err)
	}
	idx := sampleIndex()
	otherDoc := &Document{SchemaVersion: 1, Index: idx, Signature: Sign(&idx, testskill.Key(8), "hub", buildTime)}
	if _, err := Verify(ctx, otherDoc, storeTrust(store), true); !errors.Is(err, trust.ErrTOFUKeyMismatch) {
		t.Fatalf("pinned to another key: %v, want %s", err, trust.ErrTOFUKeyMismatch.Code())
	}
}
