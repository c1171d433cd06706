package artifact

import (
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestVerifyTrustFlow(t *testing.T) {
	t.Parallel()
	data := buildGood(t).Bytes
	ctx := context.Background()
	store := newTestStore()

	if _, err := Verify(ctx, data, VerifyOptions{Trust: store}); !errors.Is(err, errUntrusted) {
		t.Fatalf("Verify(empty store, no TOFU) = %v, want untrusted publisher", err)
	}
	r, err := Verify(ctx, data, VerifyOptions{Trust: store, AllowTOFU: true})
	if err != nil || r.TrustDecision != "tofu_newly_pinned" {
		t.Fatalf("Verify(TOFU) = %+v, %v; want tofu_newly_pinned", r, err)
	}
	pub := seedKey(5).Public().(ed25519.PublicKey)
	if store.tofu["acme"] != hex.EncodeToString(pub) {
		t.Fatalf("store pinned %q", store.tofu["acme"])
	}
	r, err = Verify(ctx, data, VerifyOptions{Trust: store})
	if err != nil || r.TrustDecision != "tofu_pinned" {
		t.Fatalf("second Verify = %+v, %v; want tofu_pinned", r, err)
	}

	// The same payload signed by another key: pinned key mismatch.
	other := messWith(t, data, func(e map[string][]byte) { resign(t, e, seedKey(9)) })
	if _, err := Verify(ctx, other, VerifyOptions{Trust: store, AllowTOFU: true}); !errors.Is(err, errTOFUKeyChange) {
		t.Fatalf("Verify(other key) = %v, want TOFU key mismatch", err)
	}
	allow := &testStore{trusted: map[string][]string{"acme": {hex.EncodeToString(pub)}}, tofu: map[string]string{}}
	if r, err := Verify(ctx, data, VerifyOptions{Trust: allow}); err != nil || r.TrustDecision != "allowlisted" {
		t.Fatalf("Verify(allowlist) = %+v, %v", r, err)
	}
	if _, err := Verify(ctx, other, VerifyOptions{Trust: allow, AllowTOFU: true}); !errors.Is(err, errTrustedKey) {
		t.Fatalf("Verify(allowlist, other key) = %v, want trusted key mismatch", err)
	}
}

func TestVerifyFailsClosed(t *testing.T) {
	t.Parallel()
	data := buildGood(t).Bytes
	_, err := Verify(context.Background(), data, VerifyOptions{AllowTOFU: true})
	wantErr(t, err, ErrTrustRequired)

	empty := TrustDeciderFunc(func(context.Context, string, ed25519.PublicKey, bool) (string, error) { return "", nil })
	_, err = Verify(context.Background(), data, VerifyOptions{Trust: empty})
	wantErr(t, err, ErrTrustRequired)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Verify(ctx, data, VerifyOptions{Trust: newTestStore(), AllowTOFU: true}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Verify(cancelled) = %v, want context.Canceled", err)
	}
	// A structural failure comes before the trust decision.
	called := false
	spy := TrustDeciderFunc(func(context.Context, string, ed25519.PublicKey, bool) (string, error) {
		called = true
		return "allowlisted", nil
	})
	bad := messWith(t, data, func(e map[string][]byte) { e["other/x"] = []byte("x") })
	if _, err := Verify(context.Background(), bad, VerifyOptions{Trust: spy}); !errors.Is(err, ErrPayloadHashMismatch) || called {
		t.Fatalf("Verify(tampered) = %v, decider called %v", err, called)
	}
}

func TestVerifyReportShape(t *testing.T) {
	t.Parallel()
	built := buildGood(t)
	at := time.UnixMilli(1735000000123)
	r, err := Verify(context.Background(), built.Bytes, VerifyOptions{
		Trust: newTestStore(), AllowTOFU: true, Now: func() time.Time { return at },
	})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Accepted || r.PayloadSHA256 != built.PayloadSHA256 || r.Inspection == nil {
		t.Fatalf("report %+v", r)
	}
	ev := r.AuditEvent
	if ev.EventKind != "skill.artifact.verified" || ev.SkillID != "acme.echo_http" || ev.Publisher != "acme" ||
		ev.Version != "1.0.0" || ev.PayloadSHA256 != built.PayloadSHA256 || ev.TrustDecision != "tofu_newly_pinned" ||
		ev.VerifiedAtUnixMS != 1735000000123 {
		t.Fatalf("audit event %+v", ev)
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"accepted", "trust_decision", "payload_sha256", "manifest", "manifest_warnings", "capability_grants", "policy_bindings", "audit_event"} {
		if _, ok := doc[k]; !ok {
			t.Errorf("report JSON lacks %q: %s", k, b)
		}
	}
	if len(doc) != 8 {
		t.Errorf("report JSON has %d keys, want 8: %s", len(doc), b)
	}
	if string(doc["manifest_warnings"]) != "[]" {
		t.Errorf("manifest_warnings = %s, want []", doc["manifest_warnings"])
	}
	if !strings.Contains(string(doc["capability_grants"]), `"channels":[]`) {
		t.Errorf("capability_grants = %s, want channels []", doc["capability_grants"])
	}
	var ae map[string]json.RawMessage
	json.Unmarshal(doc["audit_event"], &ae)
	for _, k := range []string{"event_kind", "skill_id", "publisher", "version", "payload_sha256", "trust_decision", "verified_at_unix_ms", "policy_bindings"} {
		if _, ok := ae[k]; !ok {
			t.Errorf("audit_event lacks %q", k)
		}
	}
}

// TestVerifyGrants checks the derived grants and bindings (Palyra's tests:
// http_hosts = [api.example.com], storage_prefixes = [skills/cache],
// tool.execute among the bindings). They come from host/manifest.
func TestVerifyGrants(t *testing.T) {
	t.Parallel()
	r, err := Verify(context.Background(), buildGood(t).Bytes, VerifyOptions{Trust: newTestStore(), AllowTOFU: true})
	if err != nil {
		t.Fatal(err)
	}
	g := r.CapabilityGrants
	if strings.Join(g.HTTPHosts, ",") != "api.example.com" || strings.Join(g.StoragePrefixes, ",") != "skills/cache" {
		t.Errorf("grants %+v", g)
	}
	found := false
	for _, b := range r.PolicyBindings {
		if b.Action == "tool.execute" && b.Resource == "tool:acme.echo" {
			found = true
		}
	}
	if !found {
		t.Errorf("policy bindings %+v lack tool.execute on tool:acme.echo", r.PolicyBindings)
	}
}

func TestErrorFormat(t *testing.T) {
	t.Parallel()
	e := &Error{Err: ErrEntryTooLarge, Path: "modules/a.wasm", Limit: 16, Actual: 17}
	if got, want := e.Error(), `artifact: entry too large "modules/a.wasm": 17 (limit 16)`; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	cause := errors.New("boom")
	e = &Error{Err: ErrInvalidZip, Path: "x", Detail: "crc-32 mismatch", Cause: cause}
	if !errors.Is(e, ErrInvalidZip) || !errors.Is(e, cause) {
		t.Errorf("%v does not unwrap to both sentinel and cause", e)
	}
	if got, want := e.Error(), `artifact: invalid zip "x": crc-32 mismatch: boom`; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}
