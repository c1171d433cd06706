package servicetest

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/internal/testskill"
)

// skillCfg is the skill of the config cases: tool conf.echo writes the
// call's config document (testdata/wasm/config.wat).
const skillCfg = "conf.cfg"

// cfgToken is the sensitive value the cases set; no answer may show it.
const cfgToken = "tok-5ecret-value"

// configTable is skillCfg's [config]: endpoint and api_token required,
// api_token sensitive, retries defaulted; or, in version 2.0.0, retries
// at most 4 and endpoint optional.
func configTable(version string) string {
	retries, required := `{ type = "integer", minimum = 0, default = 3 }`, `["endpoint", "api_token"]`
	if version == "2.0.0" {
		retries, required = `{ type = "integer", minimum = 0, maximum = 4, default = 3 }`, `["api_token"]`
	}
	return fmt.Sprintf(`
[config]
sensitive = ["api_token"]

[config.schema]
type = "object"
required = %s

[config.schema.properties]
endpoint = { type = "string", pattern = "^https://" }
api_token = { type = "string", minLength = 8 }
retries = %s
`, required, retries)
}

// configArtifact is skillCfg at version, signed by the publisher's key
// after rotate_trust (the config cases run last).
func configArtifact(t *testing.T, version string) []byte {
	return testskill.Build(t, echoManifest(skillCfg, version, Publisher, 5000, configTable(version)), repoFile(t, "testdata/wasm/config.wasm"), rotatedKey)
}

// noToken fails the test when v, encoded as JSON, or err shows cfgToken.
func noToken(t *testing.T, v any, err error) {
	t.Helper()
	b, _ := json.Marshal(v)
	if strings.Contains(string(b), cfgToken) || (err != nil && strings.Contains(err.Error(), cfgToken)) {
		t.Fatalf("the sensitive value shows: %s %v", b, err)
	}
}

// configCases are the cases of the operator config verbs (manifest
// [config]): eligibility while required keys are missing, checks naming
// the key, redaction, a call that reads its config, unset, and an upgrade
// that keeps what still fits and reports what does not.
func configCases() []Case {
	listing := func(ctx context.Context, t *testing.T, s host.Service) host.SkillListing {
		t.Helper()
		l, err := s.List(ctx, host.ListRequest{SkillID: skillCfg, CurrentOnly: true})
		if err != nil || len(l.Entries) != 1 {
			t.Fatalf("list %s: %+v, %v", skillCfg, l, err)
		}
		return l.Entries[0]
	}
	return []Case{
		{Name: "config_install_missing_required", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			res, err := s.Install(ctx, host.InstallRequest{Artifact: configArtifact(t, "1.0.0")})
			if err != nil {
				return err
			}
			if !res.Installed {
				t.Fatalf("install: %+v", res)
			}
			l := listing(ctx, t, s)
			if l.Eligibility.Eligible || !slices.Contains(l.Eligibility.Reasons, "config_missing") || !slices.Equal(l.MissingConfig, []string{"api_token", "endpoint"}) {
				t.Fatalf("listing with required config missing: %+v %v", l.Eligibility, l.MissingConfig)
			}
			return nil
		}},
		{Name: "config_call_missing", Code: "config_missing", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			_, err := call(ctx, s, skillCfg, `{}`)
			if err != nil && (!strings.Contains(err.Error(), "api_token") || !strings.Contains(err.Error(), "endpoint")) {
				t.Fatalf("config_missing names no key: %v", err)
			}
			return err
		}},
		{Name: "config_get", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			c, err := s.SkillConfig(ctx, skillCfg)
			if err != nil {
				return err
			}
			if c.Version != "1.0.0" || !slices.Equal(c.Missing, []string{"api_token", "endpoint"}) || !slices.Equal(c.Sensitive, []string{"api_token"}) ||
				len(c.Entries) != 3 || len(c.Schema) == 0 {
				t.Fatalf("config: %+v", c)
			}
			for _, e := range c.Entries {
				if e.Set || !e.Declared || (e.Key == "retries" && string(e.Default) != "3") || (e.Key == "api_token" && (!e.Sensitive || !e.Required)) {
					t.Fatalf("entry %+v", e)
				}
			}
			return nil
		}},
		{Name: "config_set_unfit_value", Code: "config_invalid", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			_, err := s.SetSkillConfig(ctx, host.SetConfigRequest{SkillID: skillCfg, Values: map[string]json.RawMessage{
				"endpoint": json.RawMessage(`"http://plain"`), "retries": json.RawMessage(`"x"`)}})
			if err != nil && (!strings.Contains(err.Error(), "endpoint") || !strings.Contains(err.Error(), "retries")) {
				t.Fatalf("the error names not every key: %v", err)
			}
			return err
		}},
		{Name: "config_set_unfit_sensitive", Code: "config_invalid", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			_, err := s.SetSkillConfig(ctx, host.SetConfigRequest{SkillID: skillCfg, Values: map[string]json.RawMessage{"api_token": json.RawMessage(`"tok-5e"`)}})
			if err != nil && (strings.Contains(err.Error(), "tok-5e") || !strings.Contains(err.Error(), "api_token")) {
				t.Fatalf("a refused sensitive value: %v", err)
			}
			return err
		}},
		{Name: "config_set_undeclared_key", Code: "config_invalid", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			_, err := s.SetSkillConfig(ctx, host.SetConfigRequest{SkillID: skillCfg, Values: map[string]json.RawMessage{"nope": json.RawMessage(`1`)}})
			return err
		}},
		{Name: "config_set_without_schema", Code: "config_invalid", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			_, err := s.SetSkillConfig(ctx, host.SetConfigRequest{SkillID: skillA, Values: map[string]json.RawMessage{"k": json.RawMessage(`1`)}})
			return err
		}},
		{Name: "config_set_unknown_skill", Code: "skill_not_found", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			_, err := s.SetSkillConfig(ctx, host.SetConfigRequest{SkillID: "conf.nope", Values: map[string]json.RawMessage{"k": json.RawMessage(`1`)}})
			return err
		}},
		{Name: "config_set", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			c, err := s.SetSkillConfig(ctx, host.SetConfigRequest{SkillID: skillCfg, Values: map[string]json.RawMessage{
				"endpoint": json.RawMessage(`"https://api.example.com"`), "api_token": json.RawMessage(`"` + cfgToken + `"`)}})
			noToken(t, c, err)
			if err != nil {
				return err
			}
			if len(c.Missing) != 0 {
				t.Fatalf("missing after set: %v", c.Missing)
			}
			for _, e := range c.Entries {
				if e.Key == "api_token" && (!e.Set || string(e.Value) != `"***"`) {
					t.Fatalf("sensitive entry %+v", e)
				}
			}
			got, err := s.SkillConfig(ctx, skillCfg)
			noToken(t, got, err)
			if l := listing(ctx, t, s); !l.Eligibility.Eligible || len(l.MissingConfig) != 0 {
				t.Fatalf("listing after set: %+v", l.Eligibility)
			}
			return err
		}},
		{Name: "config_call_reads_config", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			res, err := call(ctx, s, skillCfg, `{}`)
			if err != nil {
				return err
			}
			want := `{"api_token":"` + cfgToken + `","endpoint":"https://api.example.com","retries":3}`
			if string(res.Output) != want {
				t.Fatalf("the guest read %s, want %s", res.Output, want)
			}
			// A change applies to the next call.
			if _, err := s.SetSkillConfig(ctx, host.SetConfigRequest{SkillID: skillCfg, Values: map[string]json.RawMessage{"retries": json.RawMessage(`7`)}}); err != nil {
				return err
			}
			res, err = call(ctx, s, skillCfg, `{}`)
			if err != nil || !strings.Contains(string(res.Output), `"retries":7`) {
				t.Fatalf("after a change the guest read %s, %v", res.Output, err)
			}
			return nil
		}},
		{Name: "config_upgrade_reports_unfit", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			// 2.0.0 caps retries at 4: the 7 kept no longer fits; endpoint
			// and api_token still do. A dry run says so first.
			dry, err := s.Install(ctx, host.InstallRequest{Artifact: configArtifact(t, "2.0.0"), DryRun: true})
			if err != nil {
				return err
			}
			if dry.Installed || len(dry.ConfigUnfit) != 1 || dry.ConfigUnfit[0].Key != "retries" {
				t.Fatalf("dry run of 2.0.0: installed %v, config_unfit %+v", dry.Installed, dry.ConfigUnfit)
			}
			res, err := s.Install(ctx, host.InstallRequest{Artifact: configArtifact(t, "2.0.0")})
			noToken(t, res, err)
			if err != nil {
				return err
			}
			if len(res.ConfigUnfit) != 1 || res.ConfigUnfit[0].Key != "retries" {
				t.Fatalf("install of 2.0.0 reports config_unfit %+v", res.ConfigUnfit)
			}
			l := listing(ctx, t, s)
			if l.Version != "2.0.0" || l.Eligibility.Eligible || !slices.Contains(l.Eligibility.Reasons, "config_invalid") {
				t.Fatalf("listing of 2.0.0: %s %+v", l.Version, l.Eligibility)
			}
			c, err := s.SkillConfig(ctx, skillCfg)
			if err != nil {
				return err
			}
			if len(c.Unfit) != 1 || c.Unfit[0].Key != "retries" {
				t.Fatalf("config after the upgrade: unfit %+v", c.Unfit)
			}
			for _, e := range c.Entries {
				if e.Key == "retries" && (string(e.Value) != "7" || e.Problem == "") {
					t.Fatalf("the unfit value was not kept as is: %+v", e)
				}
			}
			return nil
		}},
		{Name: "config_call_unfit", Code: "config_invalid", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			_, err := call(ctx, s, skillCfg, `{}`)
			return err
		}},
		{Name: "config_fix_after_upgrade", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			if _, err := s.UnsetSkillConfig(ctx, host.UnsetConfigRequest{SkillID: skillCfg, Keys: []string{"retries"}}); err != nil {
				return err
			}
			res, err := call(ctx, s, skillCfg, `{}`)
			if err != nil {
				return err
			}
			if want := `{"api_token":"` + cfgToken + `","endpoint":"https://api.example.com","retries":3}`; string(res.Output) != want {
				t.Fatalf("after the fix the guest read %s, want %s", res.Output, want)
			}
			return nil
		}},
		{Name: "config_unset_sensitive", Code: "config_missing", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			c, err := s.UnsetSkillConfig(ctx, host.UnsetConfigRequest{SkillID: skillCfg, Keys: []string{"api_token"}})
			if err != nil {
				t.Fatalf("unset: %v", err)
			}
			if !slices.Equal(c.Missing, []string{"api_token"}) {
				t.Fatalf("missing after unset: %v", c.Missing)
			}
			_, err = call(ctx, s, skillCfg, `{}`)
			return err
		}},
		{Name: "config_unset_unknown_key", Code: "config_invalid", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			_, err := s.UnsetSkillConfig(ctx, host.UnsetConfigRequest{SkillID: skillCfg, Keys: []string{"nope"}})
			return err
		}},
	}
}
