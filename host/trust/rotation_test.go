package trust_test

import (
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/trust"
)

var t0 = time.UnixMilli(1730000000000)

func mustRotation(t testing.TB, publisher string, oldSeed, newSeed byte, at time.Time) *trust.Rotation {
	t.Helper()
	r, err := trust.NewRotation(publisher, seedKey(oldSeed), seedKey(newSeed), at, "test")
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Verify(); err != nil {
		t.Fatal(err)
	}
	return r
}

func hexOf(b byte) string { return hex.EncodeToString(pub(b)) }

func TestApplyRotation(t *testing.T) {
	allow := func() *trust.Store {
		s := trust.NewStore()
		_ = s.AddTrusted("acme", hexOf(1))
		_ = s.AddTrusted("acme", hexOf(9))
		return s
	}
	pinned := func() *trust.Store {
		s := trust.NewStore()
		_, _ = s.Decide("acme", pub(1), true)
		return s
	}
	tests := []struct {
		name        string
		store       func() *trust.Store
		rot         *trust.Rotation
		want        trust.RotationOutcome
		wantErr     error
		wantTrusted []string
		wantPin     string
	}{
		{name: "allowlisted", store: allow, rot: mustRotation(t, "acme", 1, 2, t0), want: trust.RotationAllowlistKeyReplaced, wantTrusted: sorted(hexOf(2), hexOf(9))},
		{name: "tofu", store: pinned, rot: mustRotation(t, "acme", 1, 2, t0), want: trust.RotationTOFUPinMoved, wantPin: hexOf(2)},
		{name: "wrong old key, allowlisted", store: allow, rot: mustRotation(t, "acme", 3, 2, t0), wantErr: trust.ErrRotationNotApplicable, wantTrusted: sorted(hexOf(1), hexOf(9))},
		{name: "wrong old key, tofu", store: pinned, rot: mustRotation(t, "acme", 3, 2, t0), wantErr: trust.ErrRotationNotApplicable, wantPin: hexOf(1)},
		{name: "statement for another publisher", store: pinned, rot: mustRotation(t, "other", 1, 2, t0), wantErr: trust.ErrRotationNotApplicable, wantPin: hexOf(1)},
		{name: "unknown publisher", store: trust.NewStore, rot: mustRotation(t, "acme", 1, 2, t0), wantErr: trust.ErrRotationNotApplicable},
		{name: "new key already allowlisted next to old", store: func() *trust.Store { s := allow(); _ = s.AddTrusted("acme", hexOf(2)); return s }, rot: mustRotation(t, "acme", 1, 2, t0), want: trust.RotationAllowlistKeyReplaced, wantTrusted: sorted(hexOf(2), hexOf(9))},
		{name: "allowlist wins over pin", store: func() *trust.Store {
			s := pinned()
			_ = s.AddTrusted("acme", hexOf(5))
			return s
		}, rot: mustRotation(t, "acme", 1, 2, t0), wantErr: trust.ErrRotationNotApplicable, wantTrusted: []string{hexOf(5)}, wantPin: hexOf(1)},
		{name: "allowlisted with pin on old key", store: func() *trust.Store {
			s := pinned()
			_ = s.AddTrusted("acme", hexOf(1))
			return s
		}, rot: mustRotation(t, "acme", 1, 2, t0), want: trust.RotationAllowlistKeyReplaced, wantTrusted: []string{hexOf(2)}, wantPin: hexOf(2)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := tt.store()
			got, err := s.ApplyRotation(tt.rot)
			if !errors.Is(err, tt.wantErr) || (err == nil) != (tt.wantErr == nil) {
				t.Fatalf("ApplyRotation() error = %v, want %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("ApplyRotation() = %q, want %q", got, tt.want)
			}
			if keys := s.TrustedKeys("acme"); !reflect.DeepEqual(keys, tt.wantTrusted) {
				t.Errorf("trusted keys = %v, want %v", keys, tt.wantTrusted)
			}
			if pin, _ := s.TOFUKey("acme"); pin != tt.wantPin {
				t.Errorf("pin = %v, want %v", pin, tt.wantPin)
			}
			if err == nil {
				// Applying it again is harmless.
				again, err := s.ApplyRotation(tt.rot)
				if err != nil || again != trust.RotationAlreadyApplied {
					t.Errorf("second ApplyRotation() = %q, %v, want already_applied", again, err)
				}
				if d, err := s.Decide("acme", pub(2), false); err != nil {
					t.Errorf("new key not trusted after rotation: %q, %v", d, err)
				}
				if _, err := s.Decide("acme", pub(1), false); err == nil {
					t.Error("old key still trusted after rotation")
				}
			}
		})
	}
}

func sorted(keys ...string) []string {
	if keys[0] > keys[1] {
		keys[0], keys[1] = keys[1], keys[0]
	}
	return keys
}

// TestRotationSignatures: a statement whose either signature fails, or any
// signed field of which was changed, is refused and changes nothing.
func TestRotationSignatures(t *testing.T) {
	good := mustRotation(t, "acme", 1, 2, t0)
	attacker := seedKey(0x66)
	tests := []struct {
		name   string
		mutate func(r *trust.Rotation)
		which  string
	}{
		{"old signature flipped", func(r *trust.Rotation) { r.OldKeySignature[0] ^= 1 }, "old key"},
		{"new signature flipped", func(r *trust.Rotation) { r.NewKeySignature[10] ^= 1 }, "new key"},
		{"signatures swapped", func(r *trust.Rotation) { r.OldKeySignature, r.NewKeySignature = r.NewKeySignature, r.OldKeySignature }, "old key"},
		{"publisher changed", func(r *trust.Rotation) { r.Publisher = "acme2" }, "old key"},
		{"reason changed", func(r *trust.Rotation) { r.Reason = "compromise" }, "old key"},
		{"issued_at changed", func(r *trust.Rotation) { r.IssuedAt = r.IssuedAt.Add(time.Millisecond) }, "old key"},
		{"keys reversed", func(r *trust.Rotation) { r.OldKey, r.NewKey = r.NewKey, r.OldKey }, "old key"},
		// The attacker puts their own key as the new key: the old key's
		// signature no longer matches.
		{"new key replaced", func(r *trust.Rotation) {
			r.NewKey = attacker.Public().(ed25519.PublicKey)
			r.NewKeySignature = ed25519.Sign(attacker, []byte(r.Digest()))
		}, "old key"},
		// The holder of the old key names a key they do not hold: they
		// cannot countersign it.
		{"new key not possessed", func(r *trust.Rotation) {
			r.NewKey = pub(0x03)
			r.OldKeySignature = ed25519.Sign(seedKey(1), []byte(r.Digest()))
			r.NewKeySignature = ed25519.Sign(attacker, []byte(r.Digest()))
		}, "new key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, _ := good.Marshal()
			r, err := trust.ParseRotation(data)
			if err != nil {
				t.Fatal(err)
			}
			tt.mutate(r)
			err = r.Verify()
			if !errors.Is(err, trust.ErrRotationSignature) || errcode.Of(err) != "rotation_signature_invalid" {
				t.Fatalf("Verify() = %v, want ErrRotationSignature", err)
			}
			if !strings.Contains(err.Error(), tt.which) {
				t.Errorf("error %q does not name the %s signature", err, tt.which)
			}
			s := trust.NewStore()
			_ = s.AddTrusted("acme", hexOf(1))
			_ = s.AddTrusted("acme2", hexOf(1))
			if _, err := s.ApplyRotation(r); !errors.Is(err, trust.ErrRotationSignature) {
				t.Errorf("ApplyRotation() = %v", err)
			}
			if !reflect.DeepEqual(s.TrustedKeys("acme"), []string{hexOf(1)}) {
				t.Error("store changed")
			}
		})
	}
}

// TestRotationTamperedDocument edits the encoded statement.
func TestRotationTamperedDocument(t *testing.T) {
	data, _ := mustRotation(t, "acme", 1, 2, t0).Marshal()
	tamper := func(old, new string) []byte {
		if !strings.Contains(string(data), old) {
			t.Fatalf("%q not in the document", old)
		}
		return []byte(strings.Replace(string(data), old, new, 1))
	}
	for name, doc := range map[string][]byte{
		"publisher": tamper(`"acme"`, `"acmf"`),
		"issued_at": tamper("1730000000000", "1730000000001"),
		"reason":    tamper(`"test"`, `"tesT"`),
		"new key":   tamper(hexOf(2), hexOf(3)),
	} {
		r, err := trust.ParseRotation(doc)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := r.Verify(); !errors.Is(err, trust.ErrRotationSignature) {
			t.Errorf("%s tampered: Verify() = %v", name, err)
		}
	}
}

func TestParseRotation(t *testing.T) {
	r := mustRotation(t, "acme", 1, 2, t0)
	data, _ := r.Marshal()
	doc := string(data)
	noReason, _ := trust.NewRotation("acme", seedKey(1), seedKey(2), t0, "")
	noReasonDoc, _ := noReason.Marshal()
	if strings.Contains(string(noReasonDoc), "reason") {
		t.Errorf("empty reason is written:\n%s", noReasonDoc)
	}
	const sigField = `"old_key_signature_base64": "`
	i := strings.Index(doc, sigField) + len(sigField)
	sig := doc[i : i+88] // the old key's signature, base64
	tests := []struct {
		name    string
		in      string
		wantErr string // "" = parses
	}{
		{"canonical", doc, ""},
		{"no reason", string(noReasonDoc), ""},
		{"empty reason", strings.Replace(string(noReasonDoc), `"issued_at_unix_ms": 1730000000000,`, `"issued_at_unix_ms": 1730000000000, "reason": "",`, 1), ""},
		{"unknown field", strings.Replace(doc, `"schema_version": 1,`, `"schema_version": 1, "expires_at_unix_ms": 1,`, 1), `unknown field "expires_at_unix_ms"`},
		{"duplicate field", strings.Replace(doc, `"schema_version": 1,`, `"schema_version": 1, "publisher": "evil",`, 1), `duplicate key "publisher"`},
		{"missing field", strings.Replace(doc, `"schema_version": 1,`, ``, 1), "missing field schema_version"},
		{"null field", strings.Replace(doc, `"reason": "test"`, `"reason": null`, 1), "reason must be a string, not null"},
		{"schema 2", strings.Replace(doc, `"schema_version": 1`, `"schema_version": 2`, 1), "schema_version 2 is not supported"},
		{"schema 1.0", strings.Replace(doc, `"schema_version": 1`, `"schema_version": 1.0`, 1), "must be an integer"},
		{"upper-case key hex", strings.Replace(doc, hexOf(2), strings.ToUpper(hexOf(2)), 1), "64 lower-case hex"},
		{"short key", strings.Replace(doc, hexOf(2), hexOf(2)[:62], 1), "64 lower-case hex"},
		{"unpadded signature", strings.Replace(doc, sig, strings.TrimRight(sig, "="), 1), "padded standard base64"},
		{"url-safe signature", strings.Replace(doc, sig, strings.NewReplacer("+", "-", "/", "_").Replace(sig), 1), "padded standard base64"},
		{"same keys", strings.Replace(doc, hexOf(2), hexOf(1), 1), "old and new key are the same"},
		{"invalid publisher", strings.Replace(doc, `"acme"`, `"Acme"`, 1), `publisher "Acme"`},
		{"zero issued_at", strings.Replace(doc, "1730000000000", "0", 1), "must be positive"},
		{"huge issued_at", strings.Replace(doc, "1730000000000", "99999999999999999999", 1), "int64 range"},
		{"control character in reason", strings.Replace(doc, `"test"`, `"te\u001bst"`, 1), "control character"},
		{"long reason", strings.Replace(doc, `"test"`, `"`+strings.Repeat("x", trust.MaxRotationReasonLen+1)+`"`, 1), "reason is 257 bytes"},
		{"trailing data", doc + "{}", "data after"},
		{"array", "[]", "must be an object"},
		{"empty", "", "unexpected end"},
		{"too large", doc + strings.Repeat(" ", trust.MaxRotationSize), "the limit is 16384 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := trust.ParseRotation([]byte(tt.in))
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("ParseRotation() = %v", err)
				}
				if err := got.Verify(); err != nil {
					t.Errorf("Verify() = %v", err)
				}
				return
			}
			if !errors.Is(err, trust.ErrInvalidRotation) || errcode.Of(err) != "invalid_rotation" {
				t.Fatalf("ParseRotation() error = %v, want ErrInvalidRotation", err)
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error %q does not contain %q", err, tt.wantErr)
			}
		})
	}
}

func TestNewRotationRejects(t *testing.T) {
	tests := []struct {
		name     string
		pub      string
		old, new ed25519.PrivateKey
		at       time.Time
		reason   string
	}{
		{"same key", "acme", seedKey(1), seedKey(1), t0, ""},
		{"bad publisher", "ACME", seedKey(1), seedKey(2), t0, ""},
		{"untrimmed publisher", "acme ", seedKey(1), seedKey(2), t0, ""},
		{"zero time", "acme", seedKey(1), seedKey(2), time.Time{}, ""},
		{"short key", "acme", seedKey(1)[:10], seedKey(2), t0, ""},
		{"newline in reason", "acme", seedKey(1), seedKey(2), t0, "a\nb"},
	}
	for _, tt := range tests {
		if _, err := trust.NewRotation(tt.pub, tt.old, tt.new, tt.at, tt.reason); !errors.Is(err, trust.ErrInvalidRotation) {
			t.Errorf("%s: NewRotation() = %v, want ErrInvalidRotation", tt.name, err)
		}
	}
}

// TestFileApplyRotation: the happy path persists, the log refuses replays
// of older statements after the keys went round in a circle, and the
// recorded statement itself can be re-applied.
func TestFileApplyRotation(t *testing.T) {
	ctx := context.Background()
	f := trust.OpenFile(filepath.Join(t.TempDir(), "trust-store.json"))
	if _, err := f.Decide(ctx, "acme", pub(1), true); err != nil {
		t.Fatal(err)
	}
	aToB := mustRotation(t, "acme", 1, 2, t0)
	bToA := mustRotation(t, "acme", 2, 1, t0.Add(time.Hour))

	if out, err := f.ApplyRotation(ctx, aToB); err != nil || out != trust.RotationTOFUPinMoved {
		t.Fatalf("A→B: %q, %v", out, err)
	}
	if d, err := f.Decide(ctx, "acme", pub(2), false); err != nil || d != trust.DecisionTOFUPinned {
		t.Fatalf("after A→B, key B: %q, %v", d, err)
	}
	if out, err := f.ApplyRotation(ctx, aToB); err != nil || out != trust.RotationAlreadyApplied {
		t.Errorf("A→B again: %q, %v", out, err)
	}
	if out, err := f.ApplyRotation(ctx, bToA); err != nil || out != trust.RotationTOFUPinMoved {
		t.Fatalf("B→A: %q, %v", out, err)
	}
	// Replaying the older A→B would now apply to the store; the log refuses.
	s, _ := f.Load(ctx)
	if _, err := s.Clone().ApplyRotation(aToB); err != nil {
		t.Fatalf("precondition: the store alone would accept the replay: %v", err)
	}
	_, err := f.ApplyRotation(ctx, aToB)
	if !errors.Is(err, trust.ErrRotationReplayed) || errcode.Of(err) != "rotation_replayed" {
		t.Fatalf("replayed A→B: %v, want ErrRotationReplayed", err)
	}
	if d, err := f.Decide(ctx, "acme", pub(1), false); err != nil || d != trust.DecisionTOFUPinned {
		t.Errorf("replay changed the store: %q, %v", d, err)
	}
	if out, err := f.ApplyRotation(ctx, bToA); err != nil || out != trust.RotationAlreadyApplied {
		t.Errorf("B→A again: %q, %v", out, err)
	}
	// A newer A→B is fine.
	if out, err := f.ApplyRotation(ctx, mustRotation(t, "acme", 1, 2, t0.Add(2*time.Hour))); err != nil || out != trust.RotationTOFUPinMoved {
		t.Errorf("newer A→B: %q, %v", out, err)
	}
	// Statements from the future are refused.
	_, err = f.ApplyRotation(ctx, mustRotation(t, "acme", 2, 3, time.Now().Add(48*time.Hour)))
	if !errors.Is(err, trust.ErrInvalidRotation) {
		t.Errorf("future statement: %v", err)
	}
	// Not applicable and bad signatures change neither file.
	before := readFile(t, f.Path())
	logBefore := readFile(t, f.RotationLogPath())
	if _, err := f.ApplyRotation(ctx, mustRotation(t, "acme", 7, 8, t0.Add(3*time.Hour))); !errors.Is(err, trust.ErrRotationNotApplicable) {
		t.Errorf("wrong old key: %v", err)
	}
	bad := mustRotation(t, "acme", 2, 3, t0.Add(4*time.Hour))
	bad.NewKeySignature[0] ^= 1
	if _, err := f.ApplyRotation(ctx, bad); !errors.Is(err, trust.ErrRotationSignature) {
		t.Errorf("bad signature: %v", err)
	}
	if string(readFile(t, f.Path())) != string(before) || string(readFile(t, f.RotationLogPath())) != string(logBefore) {
		t.Error("a refused statement changed the files")
	}
	fi, err := os.Stat(f.RotationLogPath())
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("rotation log: %v, %v", fi, err)
	}
	if !strings.Contains(string(logBefore), `"acme": {`) {
		t.Errorf("rotation log:\n%s", logBefore)
	}
}

func TestRotationLogStrict(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	f := trust.OpenFile(filepath.Join(dir, "trust-store.json"))
	if _, err := f.Decide(ctx, "acme", pub(1), true); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{
		`{"schema_version":1,"publishers":{},"extra":1}`,
		`{"publishers":{}}`,
		`{"schema_version":1,"publishers":{"Acme":{"issued_at_unix_ms":1,"statement_sha256":"x"}}}`,
		`{"schema_version":1,"publishers":{"acme":{"issued_at_unix_ms":1}}}`,
		`[`,
	} {
		if err := os.WriteFile(f.RotationLogPath(), []byte(bad), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := f.ApplyRotation(ctx, mustRotation(t, "acme", 1, 2, t0)); !errors.Is(err, trust.ErrInvalidStore) {
			t.Errorf("log %s: %v, want ErrInvalidStore", bad, err)
		}
	}
}
