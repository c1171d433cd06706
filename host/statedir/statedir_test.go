package statedir_test

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/palyra-go/palyra/host/statedir"
)

func TestResolve(t *testing.T) {
	tmp := t.TempDir()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		in      statedir.Sources
		want    string
		wantErr bool
	}{
		{name: "explicit wins", in: statedir.Sources{Explicit: filepath.Join(tmp, "a"), Env: filepath.Join(tmp, "b"), XDGStateHome: tmp, Home: tmp}, want: filepath.Join(tmp, "a")},
		{name: "relative explicit is made absolute", in: statedir.Sources{Explicit: "rel"}, want: filepath.Join(wd, "rel")},
		{name: "env before the defaults", in: statedir.Sources{Env: filepath.Join(tmp, "b"), XDGStateHome: filepath.Join(tmp, "xdg"), Home: tmp}, want: filepath.Join(tmp, "b")},
		{name: "xdg default", in: statedir.Sources{XDGStateHome: filepath.Join(tmp, "xdg"), Home: filepath.Join(tmp, "home")}, want: filepath.Join(tmp, "xdg", "palyra")},
		{name: "relative xdg is ignored", in: statedir.Sources{XDGStateHome: "xdg", Home: filepath.Join(tmp, "home")}, want: filepath.Join(tmp, "home", ".local", "state", "palyra")},
		{name: "home default", in: statedir.Sources{Home: filepath.Join(tmp, "home")}, want: filepath.Join(tmp, "home", ".local", "state", "palyra")},
		{name: "nothing to go on", in: statedir.Sources{XDGStateHome: "relative"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := statedir.Resolve(tt.in)
			if tt.wantErr {
				if !errors.Is(err, statedir.ErrInvalid) {
					t.Fatalf("Resolve() = %q, %v; want ErrInvalid", got, err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("Resolve() = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestLayout(t *testing.T) {
	l := statedir.At("/srv/palyra/")
	tests := []struct {
		name string
		got  string
		want string
	}{
		{"Dir", l.Dir(), "/srv/palyra"},
		{"Inventory", l.Inventory(), "/srv/palyra/inventory.db"},
		{"InventoryLock", l.InventoryLock(), "/srv/palyra/inventory.db.lock"},
		{"Policy", l.Policy(), "/srv/palyra/policy.toml"},
		{"SkillsDir", l.SkillsDir(), "/srv/palyra/skills"},
		{"TrustStore", l.TrustStore(), "/srv/palyra/skills/trust-store.json"},
		{"SkillDir", l.SkillDir("acme.echo"), "/srv/palyra/skills/acme.echo"},
		{"SkillLock", l.SkillLock("acme.echo"), "/srv/palyra/skills/acme.echo/.lock"},
		{"VersionDir", l.VersionDir("acme.echo", "1.2.0"), "/srv/palyra/skills/acme.echo/1.2.0"},
		{"ModuleCache", l.ModuleCache(), "/srv/palyra/cache/modules"},
		{"StorageDB", l.StorageDB(), "/srv/palyra/storage/storage.db"},
		{"SecretsDir", l.SecretsDir(), "/srv/palyra/secrets"},
		{"VaultFile", l.VaultFile(), "/srv/palyra/secrets/vault.json"},
		{"VaultKey", l.VaultKey(), "/srv/palyra/secrets/vault.key"},
		{"VaultLock", l.VaultLock(), "/srv/palyra/secrets/vault.lock"},
		{"HooksDir", l.HooksDir(), "/srv/palyra/hooks"},
		{"HookBindings", l.HookBindings(), "/srv/palyra/hooks/bindings.json"},
		{"FeedDir", l.FeedDir(), "/srv/palyra/feed"},
		{"DenyFeed", l.DenyFeed(), "/srv/palyra/feed/deny-feed.json"},
		{"HookBindingsLock", l.HookBindingsLock(), "/srv/palyra/hooks/bindings.json.lock"},
		{"RunDir", l.RunDir(), "/srv/palyra/run"},
		{"DaemonDir", l.DaemonDir(), "/srv/palyra/daemon"},
		{"DaemonToken", l.DaemonToken(), "/srv/palyra/daemon/admin-token"},
		{"DaemonLock", l.DaemonLock(), "/srv/palyra/daemon/daemon.lock"},
		{"DaemonInfo", l.DaemonInfo(), "/srv/palyra/daemon/daemon.json"},
	}
	seen := map[string]bool{}
	for _, tt := range tests {
		if tt.got != filepath.FromSlash(tt.want) {
			t.Errorf("%s() = %q, want %q", tt.name, tt.got, tt.want)
		}
		seen[tt.name] = true
	}
	// Every path the Layout names is pinned above, so a new one cannot be
	// added without saying where it goes.
	typ := reflect.TypeOf(l)
	for i := range typ.NumMethod() {
		if name := typ.Method(i).Name; !seen[name] {
			t.Errorf("Layout.%s is not pinned by this test", name)
		}
	}
}

// TestDocMapsEveryPath keeps the package comment the one map of the state
// directory: every path the Layout names appears in its tree drawing.
func TestDocMapsEveryPath(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	typ := reflect.TypeOf(statedir.Layout{})
	for i := range typ.NumMethod() {
		if name := "Layout." + typ.Method(i).Name; !strings.Contains(string(doc), name) {
			t.Errorf("the package comment's map does not mention %s", name)
		}
	}
}
