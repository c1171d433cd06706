package install

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/palyra-go/palyra/host/policy"
)

// TestInfoGrantsFollowTheProfile: Info shows what a call is granted under
// the current profile, not the grants recorded at install, and says how
// they differ (in JSON: grants_changed, grants_changes, install_grants);
// a profile that refuses a request lists it in grants_refused.
func TestInfoGrantsFollowTheProfile(t *testing.T) {
	ctx := context.Background()
	in := open(t, t.TempDir(), nil)
	spec := skillSpec{id: "acme.web", version: "1.0.0", module: "cap_http_storage", hosts: []string{"api.example.com", "cdn.example.com"}, writeRoots: []string{"cache"}}
	if _, err := in.Install(ctx, build(t, spec), InstallOptions{TrustedPublishers: trustAcme}); err != nil {
		t.Fatal(err)
	}
	grantsOf := func(raw json.RawMessage) policy.Grants {
		t.Helper()
		var g policy.Grants
		if err := json.Unmarshal(raw, &g); err != nil {
			t.Fatalf("grants %s: %v", raw, err)
		}
		return g
	}

	info, err := in.Info(ctx, "acme.web", "")
	if err != nil {
		t.Fatal(err)
	}
	if info.GrantsChanged || len(info.GrantsChanges) != 0 || len(info.GrantsRefused) != 0 {
		t.Fatalf("unchanged profile: changed %v %q, refused %q", info.GrantsChanged, info.GrantsChanges, info.GrantsRefused)
	}
	installed := grantsOf(info.InstallGrants)
	if g := grantsOf(info.Grants); !slices.Equal(g.HTTPHosts, []string{"api.example.com", "cdn.example.com"}) || installed.SecretRead {
		t.Fatalf("grants %+v", g)
	}

	tests := []struct {
		name    string
		profile string
		changes []string // each a line of GrantsChanges
		refused string   // in GrantsRefused, when set
		check   func(t *testing.T, g policy.Grants)
	}{
		{name: "secret reads allowed, redirects capped", profile: "[secrets]\nallow_read = true\n[http]\nmax_redirects = 1\n",
			changes: []string{"- http_max_redirects"},
			check: func(t *testing.T, g policy.Grants) {
				if !g.SecretRead || g.HTTP.MaxRedirects != 1 {
					t.Errorf("current grants %+v, want secret_read and 1 redirect", g)
				}
			}},
		{name: "a host no longer allowed", profile: "[http]\nallowed_hosts = [\"api.example.com\"]\n",
			changes: []string{"- http host cdn.example.com"}, refused: `"cdn.example.com"`,
			check: func(t *testing.T, g policy.Grants) {
				if !slices.Equal(g.HTTPHosts, []string{"api.example.com"}) {
					t.Errorf("current hosts %v", g.HTTPHosts)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prof, err := policy.Parse([]byte(tt.profile))
			if err != nil {
				t.Fatal(err)
			}
			if err := in.SetPolicy(prof); err != nil {
				t.Fatal(err)
			}
			info, err := in.Info(ctx, "acme.web", "")
			if err != nil {
				t.Fatal(err)
			}
			if !info.GrantsChanged {
				t.Fatalf("grants_changed false after the profile changed: grants %s, install %s", info.Grants, info.InstallGrants)
			}
			for _, w := range tt.changes {
				if !slices.ContainsFunc(info.GrantsChanges, func(l string) bool { return strings.HasPrefix(l, w) }) {
					t.Errorf("grants_changes %q lack %q", info.GrantsChanges, w)
				}
			}
			if got := grantsOf(info.InstallGrants); !slices.Equal(got.HTTPHosts, installed.HTTPHosts) || got.SecretRead != installed.SecretRead || got.HTTP.MaxRedirects != installed.HTTP.MaxRedirects {
				t.Errorf("install_grants %+v changed, want the record %+v", got, installed)
			}
			tt.check(t, grantsOf(info.Grants))
			if tt.refused != "" && !slices.ContainsFunc(info.GrantsRefused, func(l string) bool { return strings.Contains(l, tt.refused) }) {
				t.Errorf("grants_refused %q lack %s", info.GrantsRefused, tt.refused)
			}
			if tt.refused == "" && len(info.GrantsRefused) != 0 {
				t.Errorf("grants_refused %q under a profile that allows the manifest", info.GrantsRefused)
			}
			raw, err := json.Marshal(info)
			if err != nil {
				t.Fatal(err)
			}
			for _, key := range []string{`"grants_changed":true`, `"grants_changes":[`, `"install_grants":{`} {
				if !strings.Contains(string(raw), key) {
					t.Errorf("info JSON lacks %s", key)
				}
			}
		})
	}
}
