package install

import (
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/palyra-go/palyra/host/audit"
	"github.com/palyra-go/palyra/host/feed"
	"github.com/palyra-go/palyra/host/inventory"
	"github.com/palyra-go/palyra/host/trust"
	"github.com/palyra-go/palyra/internal/testskill"
)

// feedKey signs the test deny feeds; it is allowlisted for the issuer
// acme-security.
var feedKey = testskill.Key(0x42)

// signFeed signs a deny feed of serial with entries by key.
func signFeed(t *testing.T, key ed25519.PrivateKey, serial uint64, entries ...feed.Entry) []byte {
	t.Helper()
	data, err := feed.Sign(feed.Feed{SchemaVersion: 1, Issuer: "acme-security", Serial: serial, IssuedAt: time.Unix(1_760_000_000, 0), Entries: entries}, key)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// trustFeedIssuer allowlists feedKey for acme-security in in's trust store.
func trustFeedIssuer(t *testing.T, in *Installer) {
	t.Helper()
	err := in.trust.Update(context.Background(), func(s *trust.Store) (bool, error) {
		return true, s.AddTrusted("acme-security", hex.EncodeToString(feedKey.Public().(ed25519.PublicKey)))
	})
	if err != nil {
		t.Fatal(err)
	}
}

func moduleBytes(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("../../testdata/audit/" + name + ".wasm")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestInstallProvenance: artifacts built with internal/testskill whose
// provenance digest matches the module install active; a placeholder
// digest installs active with a warning; a digest that differs is
// quarantined at install with a reason naming the module, the expected
// and the actual digest.
func TestInstallProvenance(t *testing.T) {
	ctx := context.Background()
	in := open(t, t.TempDir(), nil)
	mod := moduleBytes(t, "palyra_baseline")
	good := testskill.ModuleSHA256(mod)
	bad := testskill.ModuleSHA256(moduleBytes(t, "reactor"))
	opts := InstallOptions{TrustedPublishers: trustAcme}
	for _, tc := range []struct {
		id, digest string
		status     inventory.Status
		check      audit.Status
	}{
		{"prov.match", good, inventory.StatusActive, audit.StatusPass},
		{"prov.placeholder", "placeholder-generated-at-build", inventory.StatusActive, audit.StatusWarn},
		{"prov.mismatch", bad, inventory.StatusQuarantined, audit.StatusFail},
	} {
		t.Run(tc.id, func(t *testing.T) {
			data := testskill.BuildWithProvenance(t, skillSpec{id: tc.id, version: "1.0.0"}.manifest(), mod, testKey, testskill.Provenance(tc.digest))
			res, err := in.Install(ctx, data, opts)
			if res == nil || res.Status != tc.status {
				t.Fatalf("install: %+v %v, want %s", res, err, tc.status)
			}
			c, ok := res.Audit.Check("provenance_module_digest")
			if !ok || c.Status != tc.check {
				t.Fatalf("provenance_module_digest %+v", c)
			}
			if tc.status == inventory.StatusQuarantined {
				if !errors.Is(err, audit.ErrAuditFailed) {
					t.Fatalf("install error %v, want audit_failed", err)
				}
				r := strings.Join(res.Reasons, "\n")
				for _, w := range []string{"modules/module.wasm", "gives sha256 " + bad, "module's sha256 is " + good} {
					if !strings.Contains(r, w) {
						t.Fatalf("reasons %q do not say %q", r, w)
					}
				}
			} else if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestDenyFeed: a feed signed by an unknown key is refused and installs
// nothing; a trusted feed that denies an installed module quarantines it
// at once (the update re-audits), journaled with the entry's reason and
// reference; an install of a denied module is quarantined with them; an
// older serial is refused; a publisher_key entry quarantines what that
// key signed; a corrupt installed feed fails the audit closed; the feed
// is described with its serial, issuer, entries and update.
func TestDenyFeed(t *testing.T) {
	ctx := context.Background()
	in := open(t, t.TempDir(), nil)
	opts := InstallOptions{TrustedPublishers: trustAcme}
	baseline := moduleBytes(t, "palyra_baseline")
	if res, err := in.Install(ctx, build(t, skillSpec{id: "acme.clean", version: "1.0.0"}), opts); err != nil || res.Status != inventory.StatusActive {
		t.Fatalf("install: %+v %v", res, err)
	}
	if res, err := in.Install(ctx, build(t, skillSpec{id: "acme.other", version: "1.0.0", module: "reactor"}), opts); err != nil || res.Status != inventory.StatusActive {
		t.Fatalf("install: %+v %v", res, err)
	}
	if info, err := in.DenyFeed(ctx); err != nil || info.Installed || info.Path != in.DenyFeedPath() {
		t.Fatalf("no feed: %+v %v", info, err)
	}

	deny := feed.Entry{Kind: feed.KindModuleSHA256, Value: testskill.ModuleSHA256(baseline), Reason: "CVE-2026-4242: escapes its sandbox", Reference: "https://example.test/CVE-2026-4242"}

	// Not trusted yet: the issuer is unknown to the trust store.
	if _, err := in.UpdateDenyFeed(ctx, signFeed(t, feedKey, 2, deny), "user:ops"); !errors.Is(err, feed.ErrUntrustedFeed) {
		t.Fatalf("untrusted feed: %v", err)
	}
	trustFeedIssuer(t, in)
	// Signed by another key than the issuer's allowlisted one.
	if _, err := in.UpdateDenyFeed(ctx, signFeed(t, testskill.Key(0x43), 2, deny), "user:ops"); !errors.Is(err, feed.ErrUntrustedFeed) {
		t.Fatalf("unknown key: %v", err)
	}
	if info, _ := in.DenyFeed(ctx); info.Installed {
		t.Fatalf("a refused feed was installed: %+v", info)
	}

	res, err := in.UpdateDenyFeed(ctx, signFeed(t, feedKey, 2, deny), "user:ops")
	if err != nil || !res.Changed || res.Feed.Serial != 2 || res.Reaudit.Quarantined != 1 {
		t.Fatalf("update: %+v %v", res, err)
	}
	var o ReauditOutcome
	for _, x := range res.Reaudit.Outcomes {
		if x.SkillID == "acme.clean" {
			o = x
		}
	}
	if !o.Quarantined || !strings.Contains(strings.Join(o.Reasons, " "), "CVE-2026-4242: escapes its sandbox (https://example.test/CVE-2026-4242)") {
		t.Fatalf("re-audit outcome %+v", o)
	}
	e, err := in.db.Skill(ctx, "acme.clean", "1.0.0")
	if err != nil || e.Status.Status != inventory.StatusQuarantined || !strings.Contains(e.Status.Reason, "CVE-2026-4242") {
		t.Fatalf("status after the update: %+v %v", e.Status, err)
	}
	evs, err := in.db.Events(ctx, inventory.EventFilter{SkillID: "acme.clean"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(evs, func(ev inventory.Event) bool {
		return ev.Kind == inventory.EventQuarantined && ev.Principal == PrincipalReaudit && strings.Contains(ev.Reason, "https://example.test/CVE-2026-4242")
	}) {
		t.Fatalf("journal has no skill.quarantined with the feed's reason: %+v", evs)
	}
	if e, _ := in.db.Skill(ctx, "acme.other", "1.0.0"); e.Status.Status != inventory.StatusActive {
		t.Fatalf("a module the feed does not name was quarantined: %+v", e.Status)
	}

	// An install of the denied module is quarantined with the reason.
	ires, err := in.Install(ctx, build(t, skillSpec{id: "acme.late", version: "1.0.0"}), opts)
	if !errors.Is(err, audit.ErrAuditFailed) || ires == nil || ires.Status != inventory.StatusQuarantined ||
		!strings.Contains(strings.Join(ires.Reasons, " "), "CVE-2026-4242: escapes its sandbox") {
		t.Fatalf("install of a denied module: %+v %v", ires, err)
	}
	if _, err := in.Enable(ctx, "acme.late", "1.0.0", EnableOptions{}); err == nil {
		t.Fatal("enable of a denied version succeeded")
	}

	// Older serial: refused, the installed feed stays.
	if _, err := in.UpdateDenyFeed(ctx, signFeed(t, feedKey, 1), "user:ops"); !errors.Is(err, feed.ErrFeedNotNewer) {
		t.Fatalf("older feed: %v", err)
	}
	// The same feed again changes nothing.
	if res, err := in.UpdateDenyFeed(ctx, signFeed(t, feedKey, 2, deny), "user:ops"); err != nil || res.Changed {
		t.Fatalf("same feed: %+v %v", res, err)
	}

	// A publisher key entry: everything testKey signed.
	keyEntry := feed.Entry{Kind: feed.KindPublisherKey, Value: testPubHex, Reason: "signing key leaked"}
	res, err = in.UpdateDenyFeed(ctx, signFeed(t, feedKey, 3, deny, keyEntry), "user:sec")
	if err != nil || res.PreviousSerial != 2 || res.Reaudit.Quarantined != 1 {
		t.Fatalf("key feed: %+v %v", res, err)
	}
	if e, _ := in.db.Skill(ctx, "acme.other", "1.0.0"); e.Status.Status != inventory.StatusQuarantined || !strings.Contains(e.Status.Reason, "signing key leaked") {
		t.Fatalf("acme.other after the key entry: %+v", e.Status)
	}
	info, err := in.DenyFeed(ctx)
	if err != nil || !info.Installed || info.Serial != 3 || info.Issuer != "acme-security" || info.UpdatedBy != "user:sec" ||
		len(info.Entries) != 2 || info.KeyID != hex.EncodeToString(feedKey.Public().(ed25519.PublicKey)) || info.Error != "" {
		t.Fatalf("show: %+v %v", info, err)
	}

	// A corrupt installed feed: shown with its error, and audits fail closed.
	if err := os.WriteFile(in.DenyFeedPath(), []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	if info, err := in.DenyFeed(ctx); err != nil || info.Code != "invalid_deny_feed" {
		t.Fatalf("corrupt feed shown as %+v %v", info, err)
	}
	cres, err := in.Install(ctx, build(t, skillSpec{id: "acme.after", version: "1.0.0", module: "reactor", key: testskill.Key(0x44), publisher: "beta"}),
		InstallOptions{TrustedPublishers: []TrustedKey{{Publisher: "beta", PublicKeyHex: hex.EncodeToString(testskill.Key(0x44).Public().(ed25519.PublicKey))}}})
	if !errors.Is(err, audit.ErrAuditFailed) || cres.Status != inventory.StatusQuarantined || !strings.Contains(strings.Join(cres.Reasons, " "), "cannot be used") {
		t.Fatalf("install under a corrupt feed: %+v %v", cres, err)
	}
}
