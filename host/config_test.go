package host_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/inventory"
	"github.com/palyra-go/palyra/host/statedir"
	"github.com/palyra-go/palyra/host/vault"
	"github.com/palyra-go/palyra/internal/testskill"
)

// syncBuffer is a bytes.Buffer safe for the logger's concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestConfigRedactedAndStored: a sensitive config value is stored in the
// vault (skill:<id>/config.<key>) and not in the inventory, the skill's
// sidecar call reads it (testdata/wasm/config.wat writes its config
// document), and no log line (host or sidecar, at trace level), answer,
// journal entry or error shows it.
func TestConfigRedactedAndStored(t *testing.T) {
	const secret = "hunter2-hunter2"
	ctx := context.Background()
	logs := &syncBuffer{}
	state := t.TempDir()
	sock, err := os.MkdirTemp("", "hs")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sock) })
	h, err := host.Open(ctx, host.Config{
		StateDir: state, SidecarPath: sidecarPath,
		Logger: hclog.New(&hclog.LoggerOptions{Output: logs, Level: hclog.Trace}),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(ctx) })
	manifest := testskill.OneToolManifest("acme.cfg", "1.0.0", "") + `
[config]
sensitive = ["api_token"]
schema = '''{"type": "object", "required": ["api_token"], "properties": {
  "api_token": {"type": "string", "minLength": 8}, "region": {"enum": ["eu", "us"], "default": "eu"}}}'''
`
	wasm, err := os.ReadFile(filepath.Join("..", "testdata", "wasm", "config.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	pub := hex.EncodeToString(testskill.Key(7).Public().(ed25519.PublicKey))
	if _, err := h.Install(ctx, host.InstallRequest{Artifact: testskill.Build(t, manifest, wasm, testskill.Key(7)),
		TrustedPublishers: []host.TrustedKey{{Publisher: "acme", PublicKeyHex: pub}}}); err != nil {
		t.Fatal(err)
	}
	tool := "acme.cfg.t"
	if _, err := h.Call(ctx, host.CallRequest{SkillID: "acme.cfg", ToolID: tool, Input: json.RawMessage(`{}`)}); !errors.Is(err, host.ErrConfigMissing) || !strings.Contains(err.Error(), "api_token") {
		t.Fatalf("call before set: %v", err)
	}
	// A refused sensitive value is not quoted either.
	_, err = h.SetSkillConfig(ctx, host.SetConfigRequest{SkillID: "acme.cfg", Values: map[string]json.RawMessage{"api_token": json.RawMessage(`"hunter2"`)}})
	if !errors.Is(err, host.ErrConfigInvalid) || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("short token: %v", err)
	}
	c, err := h.SetSkillConfig(ctx, host.SetConfigRequest{SkillID: "acme.cfg", Values: map[string]json.RawMessage{"api_token": json.RawMessage(`"` + secret + `"`)}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := h.Call(ctx, host.CallRequest{SkillID: "acme.cfg", ToolID: tool, Input: json.RawMessage(`{}`)})
	if err != nil || string(res.Output) != `{"api_token":"`+secret+`","region":"eu"}` {
		t.Fatalf("call: %v, %v", res, err)
	}
	info, err := h.Info(ctx, host.SkillRef{SkillID: "acme.cfg"})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := h.SkillConfig(ctx, "acme.cfg")
	for what, v := range map[string]any{"set answer": c, "get answer": got, "info": info} {
		if b, _ := json.Marshal(v); strings.Contains(string(b), secret) {
			t.Errorf("the %s shows the secret: %s", what, b)
		}
	}
	// Where it is kept: the vault, not the inventory.
	if v, err := h.Vault().Get(ctx, vault.Name{Scope: "skill:acme.cfg", Key: "config.api_token"}); err != nil || string(v) != `"`+secret+`"` {
		t.Fatalf("vault entry: %q, %v", v, err)
	}
	db, err := inventory.OpenReadOnly(ctx, statedir.At(state).Inventory())
	if err != nil {
		t.Fatal(err)
	}
	{
		defer db.Close()
		vs, err := db.SkillConfig(ctx, "acme.cfg")
		if err != nil || len(vs) != 0 {
			t.Fatalf("the inventory holds %+v, %v", vs, err)
		}
		evs, _ := db.Events(ctx, inventory.EventFilter{SkillID: "acme.cfg"})
		for _, ev := range evs {
			if strings.Contains(string(ev.Details), secret) {
				t.Fatalf("the journal holds the secret: %+v", ev)
			}
		}
	}
	if err := h.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if out := logs.String(); strings.Contains(out, secret) || !strings.Contains(out, "skill config set") {
		t.Fatalf("logs (secret shown, or no config line):\n%s", out)
	}
}

// TestConfigPurgedWithStorage: a remove that keeps storage keeps the
// skill's config for a reinstall; a remove with purge_storage (no version
// left) deletes it too, vault entries included, so no secret of a removed
// skill stays behind and a reinstall starts from the schema's defaults.
func TestConfigPurgedWithStorage(t *testing.T) {
	ctx := context.Background()
	h := openHost(t)
	manifest := testskill.OneToolManifest("acme.cfg", "1.0.0", "") + `
[config]
sensitive = ["api_token"]
schema = '''{"type": "object", "properties": {"api_token": {"type": "string"}, "region": {"enum": ["eu", "us"], "default": "eu"}}}'''
`
	wasm, err := os.ReadFile(filepath.Join("..", "testdata", "wasm", "config.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	art := testskill.Build(t, manifest, wasm, testskill.Key(7))
	pub := hex.EncodeToString(testskill.Key(7).Public().(ed25519.PublicKey))
	install := func() {
		t.Helper()
		if _, err := h.Install(ctx, host.InstallRequest{Artifact: art, TrustedPublishers: []host.TrustedKey{{Publisher: "acme", PublicKeyHex: pub}}}); err != nil {
			t.Fatal(err)
		}
	}
	set := func(k string) host.ConfigEntry {
		t.Helper()
		c, err := h.SkillConfig(ctx, "acme.cfg")
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range c.Entries {
			if e.Key == k {
				return e
			}
		}
		t.Fatalf("no key %s in %+v", k, c.Entries)
		return host.ConfigEntry{}
	}
	tokenName := vault.Name{Scope: "skill:acme.cfg", Key: "config.api_token"}
	install()
	if _, err := h.SetSkillConfig(ctx, host.SetConfigRequest{SkillID: "acme.cfg", Values: map[string]json.RawMessage{"api_token": json.RawMessage(`"tok-123456"`), "region": json.RawMessage(`"us"`)}}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Remove(ctx, host.RemoveRequest{SkillID: "acme.cfg"}); err != nil {
		t.Fatal(err)
	}
	install()
	if e := set("region"); !e.Set || string(e.Value) != `"us"` || !set("api_token").Set {
		t.Fatalf("after a remove without purge and a reinstall: region %+v, api_token %+v; want both kept", e, set("api_token"))
	}
	if _, err := h.Remove(ctx, host.RemoveRequest{SkillID: "acme.cfg", PurgeStorage: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Vault().Get(ctx, tokenName); err == nil {
		t.Fatal("the purged skill's sensitive config value is still in the vault")
	}
	install()
	if e := set("region"); e.Set || set("api_token").Set {
		t.Fatalf("after a purge and a reinstall: region %+v, api_token %+v; want neither set", e, set("api_token"))
	}
}
