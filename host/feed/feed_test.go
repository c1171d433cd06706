package feed_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/feed"
	"github.com/palyra-go/palyra/host/trust"
)

func key(b byte) ed25519.PrivateKey { return ed25519.NewKeyFromSeed(bytes.Repeat([]byte{b}, 32)) }

func pubHex(k ed25519.PrivateKey) string { return hex.EncodeToString(k.Public().(ed25519.PublicKey)) }

func digest(b byte) string { return strings.Repeat(fmt.Sprintf("%02x", b), 32) }

var at = time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)

func sample(serial uint64) feed.Feed {
	return feed.Feed{SchemaVersion: 1, Issuer: "acme-security", Serial: serial, IssuedAt: at, Entries: []feed.Entry{
		{Kind: feed.KindModuleSHA256, Value: digest(1), Reason: "CVE-2026-0001: heap overflow", Reference: "https://example.test/adv/1"},
		{Kind: feed.KindArtifactSHA256, Value: digest(2), Reason: "withdrawn by its publisher"},
		{Kind: feed.KindPublisherKey, Value: pubHex(key(9)), Reason: "key compromised"},
	}}
}

func mustSign(t *testing.T, f feed.Feed, keys ...ed25519.PrivateKey) []byte {
	t.Helper()
	b, err := feed.Sign(f, keys...)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// storeWith returns a trust store allowlisting key for publisher, and
// pinning tofu (TOFU) for "pinned".
func storeWith(t *testing.T, publisher string, k ed25519.PrivateKey) *trust.Store {
	t.Helper()
	s := trust.NewStore()
	if err := s.AddTrusted(publisher, pubHex(k)); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestVerify: a feed verifies only with a key the trust store allowlists
// for its issuer; an unknown key, another publisher's key, a TOFU pin, a
// changed payload or a bad signature is untrusted_deny_feed.
func TestVerify(t *testing.T) {
	good := mustSign(t, sample(1), key(1))
	tofu := trust.NewStore()
	if _, err := tofu.Decide("acme-security", key(1).Public().(ed25519.PublicKey), true); err != nil {
		t.Fatal(err)
	}
	changed := func() []byte {
		var env feed.Envelope
		if err := json.Unmarshal(good, &env); err != nil {
			t.Fatal(err)
		}
		p, _ := base64.StdEncoding.DecodeString(env.Payload)
		p = bytes.Replace(p, []byte(`"serial":1`), []byte(`"serial":2`), 1)
		env.Payload = base64.StdEncoding.EncodeToString(p)
		b, _ := json.Marshal(env)
		return b
	}()
	for _, tc := range []struct {
		name  string
		data  []byte
		store *trust.Store
		want  error
	}{
		{"trusted key", good, storeWith(t, "acme-security", key(1)), nil},
		{"second signature trusted", mustSign(t, sample(1), key(5), key(1)), storeWith(t, "acme-security", key(1)), nil},
		{"unknown key", mustSign(t, sample(1), key(2)), storeWith(t, "acme-security", key(1)), feed.ErrUntrustedFeed},
		{"issuer not allowlisted", good, storeWith(t, "acme", key(1)), feed.ErrUntrustedFeed},
		{"tofu pin does not count", good, tofu, feed.ErrUntrustedFeed},
		{"empty store", good, trust.NewStore(), feed.ErrUntrustedFeed},
		{"payload changed after signing", changed, storeWith(t, "acme-security", key(1)), feed.ErrUntrustedFeed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := feed.Parse(tc.data)
			if err != nil {
				t.Fatal(err)
			}
			err = s.Verify(tc.store)
			if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
				t.Fatalf("verify: %v, want %v", err, tc.want)
			}
			if err == nil && s.KeyID != pubHex(key(1)) {
				t.Fatalf("key id %s", s.KeyID)
			}
			if err != nil && errcode.Of(err) != "untrusted_deny_feed" {
				t.Fatalf("code %s", errcode.Of(err))
			}
		})
	}
}

// TestParseRejects: malformed feeds are invalid_deny_feed with a message
// that names what is wrong; the size and entry limits say the limit and
// the size seen.
func TestParseRejects(t *testing.T) {
	withEntries := func(es ...feed.Entry) feed.Feed { f := sample(1); f.Entries = es; return f }
	payload := func(raw string) []byte {
		b, _ := json.Marshal(feed.Envelope{PayloadType: feed.PayloadType, Payload: base64.StdEncoding.EncodeToString([]byte(raw)),
			Signatures: []feed.Signature{{KeyID: pubHex(key(1)), Sig: "AA=="}}})
		return b
	}
	many := make([]feed.Entry, feed.MaxEntries+1)
	for i := range many {
		many[i] = feed.Entry{Kind: feed.KindModuleSHA256, Value: fmt.Sprintf("%064x", i), Reason: "r"}
	}
	manyPayload, _ := json.Marshal(withEntries(many...))
	for _, tc := range []struct {
		name string
		data []byte
		want []string
	}{
		{"too large", bytes.Repeat([]byte(" "), feed.MaxFileBytes+1), []string{fmt.Sprint(feed.MaxFileBytes + 1), fmt.Sprint(feed.MaxFileBytes)}},
		{"too many entries", payload(string(manyPayload)), []string{"10001 entries", "limit of 10000"}},
		{"not json", []byte("{"), []string{"envelope"}},
		{"unknown envelope key", []byte(`{"payloadType":"` + feed.PayloadType + `","payload":"","signatures":[],"x":1}`), []string{"unknown field"}},
		{"wrong payload type", []byte(`{"payloadType":"text/plain","payload":"","signatures":[{"keyid":"a","sig":"b"}]}`), []string{"payloadType"}},
		{"no signature", []byte(`{"payloadType":"` + feed.PayloadType + `","payload":"","signatures":[]}`), []string{"no signature"}},
		{"bad base64", []byte(`{"payloadType":"` + feed.PayloadType + `","payload":"!!","signatures":[{"keyid":"a","sig":"b"}]}`), []string{"base64"}},
		{"schema version", payload(`{"schema_version":2,"issuer":"a","serial":1,"issued_at":"2026-01-01T00:00:00Z","entries":[]}`), []string{"schema_version 2"}},
		{"serial 0", payload(`{"schema_version":1,"issuer":"a","serial":0,"issued_at":"2026-01-01T00:00:00Z","entries":[]}`), []string{"serial"}},
		{"negative serial", payload(`{"schema_version":1,"issuer":"a","serial":-1,"issued_at":"2026-01-01T00:00:00Z","entries":[]}`), []string{"payload"}},
		{"no entries", payload(`{"schema_version":1,"issuer":"a","serial":1,"issued_at":"2026-01-01T00:00:00Z"}`), []string{"entries is missing"}},
		{"no issued_at", payload(`{"schema_version":1,"issuer":"a","serial":1,"entries":[]}`), []string{"issued_at"}},
		{"bad issuer", payload(`{"schema_version":1,"issuer":"Acme","serial":1,"issued_at":"2026-01-01T00:00:00Z","entries":[]}`), []string{"issuer"}},
		{"unknown payload key", payload(`{"schema_version":1,"issuer":"a","serial":1,"issued_at":"2026-01-01T00:00:00Z","entries":[],"extra":true}`), []string{"unknown field"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := feed.Parse(tc.data)
			if !errors.Is(err, feed.ErrInvalidFeed) {
				t.Fatalf("parse: %v, want invalid_deny_feed", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Fatalf("error %q does not say %q", err, w)
				}
			}
		})
	}
	for name, f := range map[string]feed.Feed{
		"unknown kind":  withEntries(feed.Entry{Kind: "cve", Value: digest(1), Reason: "r"}),
		"short value":   withEntries(feed.Entry{Kind: feed.KindModuleSHA256, Value: "abcd", Reason: "r"}),
		"no reason":     withEntries(feed.Entry{Kind: feed.KindModuleSHA256, Value: digest(1)}),
		"long reason":   withEntries(feed.Entry{Kind: feed.KindModuleSHA256, Value: digest(1), Reason: strings.Repeat("x", feed.MaxTextBytes+1)}),
		"control chars": withEntries(feed.Entry{Kind: feed.KindModuleSHA256, Value: digest(1), Reason: "a\x1b[2Jb"}),
		"duplicate": withEntries(feed.Entry{Kind: feed.KindModuleSHA256, Value: digest(1), Reason: "r"},
			feed.Entry{Kind: feed.KindModuleSHA256, Value: strings.ToUpper(digest(1)), Reason: "again"}),
	} {
		if _, err := feed.Sign(f, key(1)); !errors.Is(err, feed.ErrInvalidFeed) {
			t.Errorf("%s: sign: %v, want invalid_deny_feed", name, err)
		}
	}
}

// TestMatch: each kind matches what it names, upper-case values fold, and
// the description carries the reason, the reference and the feed.
func TestMatch(t *testing.T) {
	f := sample(3)
	f.Entries[0].Value = strings.ToUpper(f.Entries[0].Value)
	s, err := feed.Parse(mustSign(t, f, key(1)))
	if err != nil {
		t.Fatal(err)
	}
	ms := s.Match(feed.Subject{
		ArtifactSHA256: digest(2), PublisherKey: pubHex(key(9)),
		Modules: map[string]string{"modules/a.wasm": digest(7), "modules/b.wasm": digest(1)},
	}, []string{"modules/a.wasm", "modules/b.wasm"})
	if len(ms) != 3 || ms[0].Target != "artifact" || ms[1].Target != "publisher key" || ms[2].Target != "modules/b.wasm" {
		t.Fatalf("matches %+v", ms)
	}
	d := ms[2].Describe(s)
	for _, w := range []string{"modules/b.wasm", digest(1), "CVE-2026-0001", "https://example.test/adv/1", "serial 3", "acme-security"} {
		if !strings.Contains(d, w) {
			t.Fatalf("%q does not say %q", d, w)
		}
	}
	if ms := s.Match(feed.Subject{Modules: map[string]string{"modules/a.wasm": digest(7)}}, []string{"modules/a.wasm"}); len(ms) != 0 {
		t.Fatalf("clean subject matched %+v", ms)
	}
}

// TestUpdate: Update installs a verified feed atomically; an older serial
// is refused, the same feed again changes nothing, the same serial with
// other content is refused, an untrusted feed is refused and leaves the
// installed one; Load verifies the installed file again, so an edit to it
// or a trust store that no longer trusts its issuer fails closed.
func TestUpdate(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "feed", "deny-feed.json")
	store := storeWith(t, "acme-security", key(1))
	if in, err := feed.Load(ctx, path, store); in != nil || err != nil {
		t.Fatalf("no feed: %v %v", in, err)
	}
	v5 := mustSign(t, sample(5), key(1))
	res, err := feed.Update(ctx, path, v5, store, "user:ops", at)
	if err != nil || !res.Changed || res.PreviousSerial != 0 || res.Feed.Feed.Serial != 5 {
		t.Fatalf("first update: %+v %v", res, err)
	}
	in, err := feed.Load(ctx, path, store)
	if err != nil || in.Feed.Serial != 5 || in.UpdatedBy != "user:ops" || !in.UpdatedAt.Equal(at) || len(in.Feed.Entries) != 3 {
		t.Fatalf("load: %+v %v", in, err)
	}
	if res, err := feed.Update(ctx, path, v5, store, "user:ops", at); err != nil || res.Changed {
		t.Fatalf("same feed again: %+v %v", res, err)
	}
	older := mustSign(t, sample(4), key(1))
	if _, err := feed.Update(ctx, path, older, store, "user:ops", at); !errors.Is(err, feed.ErrFeedNotNewer) || !strings.Contains(err.Error(), "serial 4 is older than the installed feed's serial 5") {
		t.Fatalf("older: %v", err)
	}
	other := sample(5)
	other.Entries = other.Entries[:1]
	if _, err := feed.Update(ctx, path, mustSign(t, other, key(1)), store, "user:ops", at); !errors.Is(err, feed.ErrFeedNotNewer) {
		t.Fatalf("same serial, other content: %v", err)
	}
	if _, err := feed.Update(ctx, path, mustSign(t, sample(9), key(2)), store, "user:ops", at); !errors.Is(err, feed.ErrUntrustedFeed) {
		t.Fatalf("untrusted: %v", err)
	}
	if in, _ := feed.Load(ctx, path, store); in.Feed.Serial != 5 {
		t.Fatalf("a refused update changed the feed: %d", in.Feed.Serial)
	}
	res, err = feed.Update(ctx, path, mustSign(t, sample(6), key(1)), store, "user:ops", at.Add(time.Hour))
	if err != nil || res.PreviousSerial != 5 || !res.Changed {
		t.Fatalf("newer: %+v %v", res, err)
	}

	// The trust store no longer trusts the issuer: fail closed.
	if _, err := feed.Load(ctx, path, storeWith(t, "acme-security", key(3))); !errors.Is(err, feed.ErrUntrustedFeed) {
		t.Fatalf("issuer untrusted now: %v", err)
	}
	// An entry removed from the installed file by hand: the signature fails.
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var st map[string]json.RawMessage
	if err := json.Unmarshal(data, &st); err != nil {
		t.Fatal(err)
	}
	var env feed.Envelope
	if err := json.Unmarshal(st["envelope"], &env); err != nil {
		t.Fatal(err)
	}
	p, _ := base64.StdEncoding.DecodeString(env.Payload)
	var f feed.Feed
	if err := json.Unmarshal(p, &f); err != nil {
		t.Fatal(err)
	}
	f.Entries = f.Entries[1:]
	p, _ = json.Marshal(f)
	env.Payload = base64.StdEncoding.EncodeToString(p)
	st["envelope"], _ = json.Marshal(env)
	data, _ = json.Marshal(st)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := feed.Load(ctx, path, store); !errors.Is(err, feed.ErrUntrustedFeed) {
		t.Fatalf("edited installed feed: %v", err)
	}
	// A corrupt installed feed does not block installing a verified one.
	if err := os.WriteFile(path, []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := feed.Load(ctx, path, store); !errors.Is(err, feed.ErrInvalidFeed) {
		t.Fatalf("corrupt installed feed: %v", err)
	}
	if res, err := feed.Update(ctx, path, mustSign(t, sample(2), key(1)), store, "user:ops", at); err != nil || !res.Changed {
		t.Fatalf("update over a corrupt feed: %+v %v", res, err)
	}
}
