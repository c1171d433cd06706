package audit

import (
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/palyra-go/palyra/host/feed"
	"github.com/palyra-go/palyra/host/trust"
)

func sha256Of(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

func sha512Of(b []byte) string { s := sha512.Sum512(b); return hex.EncodeToString(s[:]) }

// prov is a provenance document with the given subject array.
func prov(subjects string) []byte {
	return []byte(`{"_type":"https://in-toto.io/Statement/v1","builder":{"id":"ci"},"subject":` + subjects + `}`)
}

// TestProvenanceModuleDigest: provenance subject digests are compared with
// the modules' own digests. A subject names a module by its entry path
// (modules/x.wasm), by that path without "modules/" (Palyra's builder), or
// by a base name no other module shares. A digest that differs fails,
// naming the module, the expected and the actual digest; a module no
// subject names fails once the provenance carries any real digest; a
// placeholder or missing digest only warns.
func TestProvenanceModuleDigest(t *testing.T) {
	mod := fixture(t, "palyra_baseline")
	other := fixture(t, "reactor")
	good, bad := sha256Of(mod), sha256Of(other)
	one := map[string][]byte{"module.wasm": mod}
	palyraVector, err := os.ReadFile("../../testdata/vectors/palyra-echo-http-example/provenance.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		modules map[string][]byte
		prov    []byte
		status  map[string]Status // module path -> status
		says    []string
	}{
		{"entry path", one, prov(`[{"name":"modules/module.wasm","digest":{"sha256":"` + good + `"}}]`),
			map[string]Status{"modules/module.wasm": StatusPass}, []string{"matches provenance.json (sha256)"}},
		{"path without modules/", one, prov(`[{"name":"module.wasm","digest":{"sha256":"` + strings.ToUpper(good) + `"}}]`),
			map[string]Status{"modules/module.wasm": StatusPass}, nil},
		{"base name", one, prov(`[{"name":"./target/wasm32-wasip1/release/module.wasm","digest":{"sha256":"` + good + `"}}]`),
			map[string]Status{"modules/module.wasm": StatusPass}, nil},
		{"sha512", one, prov(`[{"name":"module.wasm","digest":{"sha512":"` + sha512Of(mod) + `"}}]`),
			map[string]Status{"modules/module.wasm": StatusPass}, []string{"sha512"}},
		{"mismatch", one, prov(`[{"name":"modules/module.wasm","digest":{"sha256":"` + bad + `"}}]`),
			map[string]Status{"modules/module.wasm": StatusFail},
			[]string{"modules/module.wasm", "gives sha256 " + bad, "module's sha256 is " + good}},
		{"sha512 mismatch beside a good sha256", one, prov(`[{"name":"module.wasm","digest":{"sha256":"` + good + `","sha512":"` + sha512Of(other) + `"}}]`),
			map[string]Status{"modules/module.wasm": StatusFail}, []string{"sha512"}},
		{"Palyra's placeholder", one, palyraVector,
			map[string]Status{"modules/module.wasm": StatusWarn}, []string{"placeholder-generated-at-build", "placeholder"}},
		{"no digest", one, sampleProv,
			map[string]Status{"modules/module.wasm": StatusWarn}, []string{"carries no digest"}},
		{"unknown algorithm only", one, prov(`[{"name":"module.wasm","digest":{"md5":"d41d8cd98f00b204e9800998ecf8427e"}}]`),
			map[string]Status{"modules/module.wasm": StatusWarn}, []string{"md5"}},
		{"only another subject", one, prov(`[{"name":"acme.echo.palyra-skill","digest":{"sha256":"` + bad + `"}}]`),
			map[string]Status{"modules/module.wasm": StatusFail}, []string{"not covered", "acme.echo.palyra-skill"}},
		{"placeholder elsewhere, module not named", one, prov(`[{"name":"x","digest":{"sha256":"TBD"}}]`),
			map[string]Status{"modules/module.wasm": StatusWarn}, []string{"no subject names it"}},
		{"one of two modules not covered", map[string][]byte{"a.wasm": mod, "b.wasm": other},
			prov(`[{"name":"modules/a.wasm","digest":{"sha256":"` + good + `"}}]`),
			map[string]Status{"modules/a.wasm": StatusPass, "modules/b.wasm": StatusFail}, []string{"module modules/b.wasm is not covered"}},
		{"ambiguous base name is no match", map[string][]byte{"x/m.wasm": mod, "y/m.wasm": other},
			prov(`[{"name":"build/m.wasm","digest":{"sha256":"` + good + `"}}]`),
			map[string]Status{"modules/x/m.wasm": StatusFail, "modules/y/m.wasm": StatusFail}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := run(t, verifiedProv(t, bareManifest, tc.modules, tc.prov), Input{})
			var msgs []string
			for p, want := range tc.status {
				c := moduleCheck(t, r, "provenance_module_digest", p)
				wantStatus(t, c, want)
				msgs = append(msgs, c.Message)
				failed := false
				for _, q := range r.QuarantineReasons {
					failed = failed || q == c.Message
				}
				if failed != (want == StatusFail) {
					t.Errorf("%s: in quarantine reasons %v, status %s", p, failed, want)
				}
			}
			all := strings.Join(msgs, "\n")
			for _, s := range tc.says {
				if !strings.Contains(all, s) {
					t.Errorf("messages %q do not say %q", all, s)
				}
			}
		})
	}
}

// TestDenyFeedCheck: vulnerability_feed_hook consults the deny feed given:
// a module, artifact or publisher-key entry that matches fails the check
// with the entry's reason and reference (a quarantine reason); a feed that
// names nothing here passes; a feed that could not be loaded fails closed;
// no feed is skipped.
func TestDenyFeedCheck(t *testing.T) {
	mod := fixture(t, "palyra_baseline")
	vr := verified(t, bareManifest, map[string][]byte{"module.wasm": mod})
	issuer := ed25519.NewKeyFromSeed(make([]byte, 32))
	store := trust.NewStore()
	if err := store.AddTrusted("acme-security", hex.EncodeToString(issuer.Public().(ed25519.PublicKey))); err != nil {
		t.Fatal(err)
	}
	signed := func(entries ...feed.Entry) *feed.Signed {
		t.Helper()
		data, err := feed.Sign(feed.Feed{SchemaVersion: 1, Issuer: "acme-security", Serial: 4, IssuedAt: time.Unix(1_760_000_000, 0), Entries: entries}, issuer)
		if err != nil {
			t.Fatal(err)
		}
		s, err := feed.Parse(data)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Verify(store); err != nil {
			t.Fatal(err)
		}
		return s
	}
	artifactSHA := strings.Repeat("ab", 32)
	for _, tc := range []struct {
		name   string
		in     Input
		status Status
		says   []string
	}{
		{"no feed", Input{}, StatusSkipped, []string{"no deny feed is installed"}},
		{"feed names nothing here", Input{DenyFeed: signed(feed.Entry{Kind: feed.KindModuleSHA256, Value: strings.Repeat("0", 64), Reason: "r"})},
			StatusPass, []string{"acme-security", "serial 4", "1 entries"}},
		{"module denied", Input{DenyFeed: signed(feed.Entry{Kind: feed.KindModuleSHA256, Value: sha256Of(mod), Reason: "CVE-2026-7: sandbox escape", Reference: "https://example.test/cve-2026-7"})},
			StatusFail, []string{"modules/module.wasm", sha256Of(mod), "CVE-2026-7: sandbox escape", "https://example.test/cve-2026-7", "serial 4"}},
		{"artifact denied", Input{ArtifactSHA256: artifactSHA, DenyFeed: signed(feed.Entry{Kind: feed.KindArtifactSHA256, Value: artifactSHA, Reason: "withdrawn"})},
			StatusFail, []string{"artifact", "withdrawn"}},
		{"publisher key denied", Input{DenyFeed: signed(feed.Entry{Kind: feed.KindPublisherKey, Value: hex.EncodeToString(testKey.Public().(ed25519.PublicKey)), Reason: "key leaked"})},
			StatusFail, []string{"publisher key", "key leaked"}},
		{"feed unusable", Input{DenyFeedError: fmt.Errorf("the installed feed: %w", feed.ErrUntrustedFeed)},
			StatusFail, []string{"cannot be used", "not signed by a trusted key"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := run(t, vr, tc.in)
			c := mustCheck(t, r, "vulnerability_feed_hook")
			wantStatus(t, c, tc.status, tc.says...)
			if r.VulnerabilityScan.Message != c.Message || r.VulnerabilityScan.Status != c.Status {
				t.Errorf("vulnerability_scan %+v differs from the check", r.VulnerabilityScan)
			}
			if (tc.status == StatusFail) != r.ShouldQuarantine {
				t.Errorf("should_quarantine %v with the check %s", r.ShouldQuarantine, tc.status)
			}
			if tc.status == StatusFail && !errors.Is(r.Err(), ErrAuditFailed) {
				t.Errorf("Err() = %v", r.Err())
			}
		})
	}
}
