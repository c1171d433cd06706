package host_test

import (
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/palyra-go/palyra/internal/testregistry"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/registry"
	"github.com/palyra-go/palyra/internal/testskill"
	"github.com/palyra-go/palyra/internal/testtls"
)

// applyRegistry is a local registry directory the apply tests publish to.
type applyRegistry struct {
	t   *testing.T
	dir string
}

// publish writes skill id at version, granted hosts, and signs the index
// again.
func (r *applyRegistry) publish(id, version string, hosts ...string) {
	r.t.Helper()
	wasm, err := os.ReadFile("../testdata/wasm/echo.wasm")
	if err != nil {
		r.t.Fatal(err)
	}
	m := testskill.WithHosts(testskill.OneToolManifest(id, version, ""), hosts...)
	testregistry.Publish(r.t, r.dir, id+"-"+version+registry.ArtifactExt, testskill.Build(r.t, m, wasm, testskill.Key(7)), testskill.Key(7), "acme")
}

// document is a palyra.toml declaring skill acme.one from the registry with
// constraint, accepting hosts, plus extra TOML.
func (r *applyRegistry) document(constraint string, hosts []string, extra string) string {
	return fmt.Sprintf(`version = 1

[[skill]]
id = "acme.one"
registry_dir = %q
version = %q
allow_tofu = true

[skill.accept]
http_hosts = [%s]
%s`, r.dir, constraint, quoteList(hosts), extra)
}

func quoteList(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}

func actions(r *host.ApplyResult) string {
	var out []string
	for _, s := range r.Steps {
		a := s.Action + " " + s.SkillID
		if s.HookID != "" {
			a = s.Action + " " + s.HookID
		}
		if s.ToVersion != "" && s.Action != host.ActionKeep {
			a += " " + s.ToVersion
		}
		if s.Code != "" {
			a += " !" + s.Code
		}
		out = append(out, a)
	}
	return strings.Join(out, "; ")
}

// TestApply: a plan on a fresh host, apply, apply again (no change), a
// newer published version within the constraint (update, with its diff), a
// version granted a host the document does not accept (refused with the
// excess, nothing changed) then accepted, a hook declared then changed,
// prune of an undeclared skill and binding, and the document's own errors.
func TestApply(t *testing.T) {
	ctx := context.Background()
	h := openHostBare(t)
	reg := &applyRegistry{t: t, dir: t.TempDir()}
	reg.publish("acme.one", "1.0.0", "api.example.com")
	reg.publish("acme.one", "2.0.0", "api.example.com")
	apply := func(doc string, dry, prune bool) (*host.ApplyResult, error) {
		return h.Apply(ctx, host.ApplyRequest{Document: doc, DryRun: dry, Prune: prune})
	}
	doc := reg.document("^1.0", []string{"api.example.com"}, "")

	plan, err := apply(doc, true, false)
	if err != nil || !plan.Changed || actions(plan) != "install acme.one 1.0.0" || plan.Steps[0].Done ||
		len(plan.Steps[0].CapabilityDiff) != 1 || plan.Steps[0].CapabilityDiff[0] != "+ http host api.example.com" {
		t.Fatalf("plan: %s %+v, %v", actions(plan), plan, err)
	}
	if l, _ := h.List(ctx, host.ListRequest{}); len(l.Entries) != 0 {
		t.Fatalf("a dry run installed %d versions", len(l.Entries))
	}
	res, err := apply(doc, false, false)
	if err != nil || !res.Changed || !res.Steps[0].Done || actions(res) != "install acme.one 1.0.0" {
		t.Fatalf("apply: %s, %v", actions(res), err)
	}
	again, err := apply(doc, false, false)
	if err != nil || again.Changed || actions(again) != "keep acme.one" {
		t.Fatalf("apply again: %s changed=%t, %v", actions(again), again.Changed, err)
	}

	// 1.1.0 is published with a second host.
	reg.publish("acme.one", "1.1.0", "api.example.com", "status.example.com")
	res, err = apply(doc, false, false)
	if !errors.Is(err, host.ErrNotAccepted) || errcode.Of(err) != "capabilities_not_accepted" ||
		actions(res) != "update acme.one 1.1.0 !capabilities_not_accepted" || res.Steps[0].Done || res.Changed ||
		len(res.Steps[0].CapabilityDiff) != 1 || res.Steps[0].CapabilityDiff[0] != "+ http host status.example.com" {
		t.Fatalf("a version granted more than accepted: %s %+v, %v", actions(res), res, err)
	}
	if info, _ := h.Info(ctx, host.SkillRef{SkillID: "acme.one"}); info.Inventory.Version != "1.0.0" {
		t.Fatalf("the refused update changed the current version to %s", info.Inventory.Version)
	}
	doc = reg.document("^1.0", []string{"api.example.com", "status.example.com"}, `
[[hook]]
id = "one.enabled"
event = "skill:enabled"
skill = "acme.one"
tool = "acme.one.t"
`)
	plan, err = apply(doc, true, false)
	if err != nil || actions(plan) != "update acme.one 1.1.0; bind_hook one.enabled" {
		t.Fatalf("plan of the accepted update: %s, %v", actions(plan), err)
	}
	if d := plan.Steps[0].CapabilityDiff; len(d) != 1 || d[0] != "+ http host status.example.com" {
		t.Fatalf("the update's capability diff: %v", d)
	}
	if _, err := apply(doc, false, false); err != nil {
		t.Fatal(err)
	}
	if info, _ := h.Info(ctx, host.SkillRef{SkillID: "acme.one"}); info.Inventory.Version != "1.1.0" {
		t.Fatalf("current version %s after the update, want 1.1.0", info.Inventory.Version)
	}
	again, err = apply(doc, false, false)
	if err != nil || again.Changed {
		t.Fatalf("converged: %s, %v", actions(again), err)
	}

	// A hook changed in the document is rebound; undeclared things pruned.
	doc = strings.Replace(doc, `tool = "acme.one.t"`, "tool = \"acme.one.t\"\nenabled = false", 1)
	// The stray binding runs the undeclared skill: prune removes both (the
	// skill with force, since its enabled binding goes too).
	if _, err := h.BindHook(ctx, host.HookBinding{HookID: "stray", Event: "skill:enabled", PluginID: "acme.two", ToolID: "acme.two.t", Enabled: true}); err != nil {
		t.Fatal(err)
	}
	reg.publish("acme.two", "1.0.0")
	if _, err := h.Install(ctx, host.InstallRequest{From: &host.SourceRef{RegistryDir: reg.dir, SkillID: "acme.two"}}); err != nil {
		t.Fatal(err)
	}
	res, err = apply(doc, false, false)
	if err != nil || !strings.Contains(actions(res), "update_hook one.enabled") || !strings.Contains(actions(res), "unmanaged acme.two") {
		t.Fatalf("without prune: %s, %v", actions(res), err)
	}
	hooks, _ := h.Hooks(ctx)
	for _, b := range hooks {
		if b.HookID == "one.enabled" && b.Enabled {
			t.Fatal("the hook declared disabled is enabled")
		}
	}
	res, err = apply(doc, false, true)
	if err != nil || !strings.Contains(actions(res), "remove acme.two") || !strings.Contains(actions(res), "remove_hook stray") {
		t.Fatalf("prune: %s, %v", actions(res), err)
	}
	if l, _ := h.List(ctx, host.ListRequest{SkillID: "acme.two"}); len(l.Entries) != 0 {
		t.Fatal("prune left acme.two installed")
	}
	if again, err := apply(doc, false, true); err != nil || again.Changed {
		t.Fatalf("converged after prune: %s, %v", actions(again), err)
	}

	for _, tc := range []struct{ name, doc, code string }{
		{"no version", "[[skill]]\nid = \"x\"\nregistry_dir = \"/d\"\n", "invalid_desired_state"},
		{"unknown key", "version = 1\n[[skill]]\nid = \"x\"\nregistry_dir = \"/d\"\ncolor = \"red\"\n", "invalid_desired_state"},
		{"two sources", "version = 1\n[[skill]]\nid = \"x\"\nregistry_dir = \"/d\"\noci = \"oci://r/x\"\n", "invalid_desired_state"},
		{"a bad constraint", "version = 1\n[[skill]]\nid = \"x\"\nregistry_dir = \"/d\"\nversion = \"^^1\"\n", "invalid_desired_state"},
		{"nothing allowed", reg.document(">=3.0.0", nil, ""), "not_published"},
		{"a downgrade", reg.document("<1.1.0", []string{"api.example.com", "status.example.com"}, ""), "apply_downgrade"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := apply(tc.doc, true, false)
			if errcode.Of(err) != tc.code {
				t.Fatalf("code %q (%v), want %s", errcode.Of(err), err, tc.code)
			}
		})
	}
}

// TestApplyHookSpelling: a hook declared with another spelling than the
// hook store keeps (ids in upper case and padded, the event by its dotted
// alias) is bound once; the next apply keeps it and prune leaves it, rather
// than rebinding it (or binding it again) on every run.
func TestApplyHookSpelling(t *testing.T) {
	ctx := context.Background()
	h := openHostBare(t)
	reg := &applyRegistry{t: t, dir: t.TempDir()}
	reg.publish("acme.one", "1.0.0")
	doc := reg.document("", nil, `
[[hook]]
id = " One.Enabled "
event = "skill.enabled"
skill = "ACME.One"
tool = "acme.one.t"
`)
	res, err := h.Apply(ctx, host.ApplyRequest{Document: doc})
	if err != nil || actions(res) != "install acme.one 1.0.0; bind_hook one.enabled" {
		t.Fatalf("apply: %s, %v", actions(res), err)
	}
	for _, prune := range []bool{false, true} {
		again, err := h.Apply(ctx, host.ApplyRequest{Document: doc, Prune: prune})
		if err != nil || again.Changed || actions(again) != "keep acme.one; keep_hook one.enabled" {
			t.Fatalf("apply again (prune %t): %s changed=%t, %v", prune, actions(again), again.Changed, err)
		}
	}
	hooks, err := h.Hooks(ctx)
	if err != nil || len(hooks) != 1 || hooks[0].Event != "skill:enabled" || hooks[0].PluginID != "acme.one" {
		t.Fatalf("bindings %+v, %v", hooks, err)
	}
}

// TestApplyKeepBeyondAccept: the installed version is the target, but the
// document's accept list was narrowed since: the keep step reports the
// excess (capabilities_not_accepted) instead of calling the host
// converged, and nothing is changed; accepting it again converges.
func TestApplyKeepBeyondAccept(t *testing.T) {
	ctx := context.Background()
	h := openHostBare(t)
	reg := &applyRegistry{t: t, dir: t.TempDir()}
	reg.publish("acme.one", "1.0.0", "api.example.com", "status.example.com")
	wide := reg.document("", []string{"api.example.com", "status.example.com"}, "")
	if _, err := h.Apply(ctx, host.ApplyRequest{Document: wide}); err != nil {
		t.Fatal(err)
	}
	narrow := reg.document("", []string{"api.example.com"}, "")
	for _, dry := range []bool{true, false} {
		res, err := h.Apply(ctx, host.ApplyRequest{Document: narrow, DryRun: dry})
		if !errors.Is(err, host.ErrNotAccepted) || res == nil || res.Changed || actions(res) != "keep acme.one !capabilities_not_accepted" ||
			strings.Join(res.Steps[0].CapabilityDiff, ",") != "+ http host status.example.com" {
			t.Fatalf("narrowed accept (dry run %t): %s %+v, %v", dry, actions(res), res, err)
		}
	}
	if info, err := h.Info(ctx, host.SkillRef{SkillID: "acme.one"}); err != nil || info.Inventory.Version != "1.0.0" {
		t.Fatalf("the skill changed: %+v, %v", info, err)
	}
	if res, err := h.Apply(ctx, host.ApplyRequest{Document: wide}); err != nil || res.Changed || actions(res) != "keep acme.one" {
		t.Fatalf("accepted again: %s, %v", actions(res), err)
	}
}

// TestApplyRegistryURL: a skill declared by a signed index served over
// HTTPS by a CA only the document names (registry_ca_cert, inline PEM, so
// the document carries it to a daemon too): installed, then kept; without
// the CA the TLS server is not trusted and nothing is installed.
func TestApplyRegistryURL(t *testing.T) {
	ctx := context.Background()
	h := openHostBare(t)
	reg := &applyRegistry{t: t, dir: t.TempDir()}
	reg.publish("acme.one", "1.0.0")
	srv, ca := testtls.Serve(t, nil, http.FileServer(http.Dir(reg.dir)))
	doc := fmt.Sprintf("version = 1\n[[skill]]\nid = \"acme.one\"\nregistry_url = %q\nallow_tofu = true\n", srv.URL+"/index.json")
	withCA := doc + fmt.Sprintf("registry_ca_cert = '''\n%s'''\n", ca.PEM)

	res, err := h.Apply(ctx, host.ApplyRequest{Document: doc})
	if err == nil || res == nil || res.Changed || len(res.Steps) != 1 || res.Steps[0].Code == "" {
		t.Fatalf("without the CA: %+v, %v", res, err)
	}
	if l, _ := h.List(ctx, host.ListRequest{}); len(l.Entries) != 0 {
		t.Fatalf("installed %d versions without the CA", len(l.Entries))
	}
	res, err = h.Apply(ctx, host.ApplyRequest{Document: withCA})
	if err != nil || actions(res) != "install acme.one 1.0.0" || !res.Steps[0].Done {
		t.Fatalf("with the CA: %s, %v", actions(res), err)
	}
	if res, err := h.Apply(ctx, host.ApplyRequest{Document: withCA}); err != nil || res.Changed || actions(res) != "keep acme.one" {
		t.Fatalf("again: %s, %v", actions(res), err)
	}
}

// cancelAfterInstall is a real host whose ctx is canceled once an install
// (not a dry run) is done: a caller giving up in the middle of an apply.
type cancelAfterInstall struct {
	*host.Host
	cancel context.CancelFunc
}

func (c cancelAfterInstall) Install(ctx context.Context, req host.InstallRequest) (*host.InstallResult, error) {
	r, err := c.Host.Install(ctx, req)
	if !req.DryRun {
		c.cancel()
	}
	return r, err
}

// TestApplyCanceled: an apply canceled after its first install returns the
// steps so far (the install, done) with the cancellation, not a bare
// error that hides what was changed.
func TestApplyCanceled(t *testing.T) {
	h := openHostBare(t)
	reg := &applyRegistry{t: t, dir: t.TempDir()}
	reg.publish("acme.one", "1.0.0")
	reg.publish("acme.two", "1.0.0")
	doc := fmt.Sprintf("version = 1\n[[skill]]\nid = \"acme.one\"\nregistry_dir = %q\nallow_tofu = true\n[[skill]]\nid = \"acme.two\"\nregistry_dir = %q\nallow_tofu = true\n", reg.dir, reg.dir)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	res, err := host.ApplyTo(ctx, cancelAfterInstall{h, cancel}, h.Sources(), host.ApplyRequest{Document: doc})
	if !errors.Is(err, context.Canceled) || res == nil || !res.Changed || len(res.Steps) != 2 ||
		!res.Steps[0].Done || res.Steps[1].Done || res.Steps[1].Code == "" {
		t.Fatalf("canceled apply: %+v, %v", res, err)
	}
	if info, err := h.Info(context.Background(), host.SkillRef{SkillID: "acme.one"}); err != nil || info.Inventory.Version != "1.0.0" {
		t.Fatalf("acme.one: %+v, %v", info, err)
	}
}

// openHostBare opens a host on a fresh state dir with nothing installed.
func openHostBare(t *testing.T) *host.Host {
	t.Helper()
	ctx := context.Background()
	h, err := host.Open(ctx, host.Config{StateDir: t.TempDir(), SidecarPath: sidecarPath})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := h.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return h
}

// TestInstallFromRegistryTrustedPublisher: the publisher key given with an
// install from a registry index is allowlisted before the index is judged,
// so the index (signed by that key) is trusted without trust on first use.
func TestInstallFromRegistryTrustedPublisher(t *testing.T) {
	ctx := context.Background()
	h := openHostBare(t)
	reg := &applyRegistry{t: t, dir: t.TempDir()}
	reg.publish("acme.one", "1.0.0")
	from := &host.SourceRef{RegistryDir: reg.dir, SkillID: "acme.one"}
	if _, err := h.Install(ctx, host.InstallRequest{From: from}); errcode.Of(err) != "untrusted_publisher" {
		t.Fatalf("without a trusted key: %v, want untrusted_publisher", err)
	}
	key := host.TrustedKey{Publisher: "acme", PublicKeyHex: hex.EncodeToString(testskill.Key(7).Public().(ed25519.PublicKey))}
	res, err := h.Install(ctx, host.InstallRequest{From: from, TrustedPublishers: []host.TrustedKey{key}})
	if err != nil || !res.Installed || res.TrustDecision != "allowlisted" {
		t.Fatalf("with the trusted key: %+v, %v", res, err)
	}
}
